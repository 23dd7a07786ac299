// Finding 4: where a page may send the browser after a form (src/web/redirects.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { safeNext } from '../../../src/web/redirects.js';

test('finding 4: paths of the site are kept, with their query and fragment', () => {
  for (const path of ['/settings/report', '/reports/revenue?from=2026-01-01&to=2026-01-31', '/a#b', '/%5C'])
    assert.equal(safeNext(path), path);
});

test('finding 4: anything that can leave the origin falls back', () => {
  for (const hostile of [
    '//evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '/.//evil.example',
    '/a/../..//evil.example',
    'https://evil.example/',
    'javascript:alert(1)',
    '/\t/evil.example',
    '/x\r\nSet-Cookie: a=b',
    'relative/path',
    '',
    `/${'a'.repeat(3000)}`,
    undefined,
    ['/settings'],
  ])
    assert.equal(safeNext(hostile, '/fallback'), '/fallback', JSON.stringify(hostile));
});
