import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ERROR_KINDS, invalidParameter } from '../../src/errors.js';

test('every error code is documented in the README with its status', () => {
  const readme = fs.readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
  for (const [code, kind] of Object.entries(ERROR_KINDS)) {
    assert.match(readme, new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${kind.status}\\s*\\|`), code);
  }
});

test('E1: an invalid parameter names the parameter, the value and what is expected; a huge value is cut', () => {
  const error = invalidParameter('from', '2026-13-01', 'format attendu AAAA-MM-JJ');
  assert.equal(error.message, 'Paramètre from invalide : « 2026-13-01 » (format attendu AAAA-MM-JJ)');
  assert.equal(error.status, 400);
  assert.ok(invalidParameter('timezone', 'A'.repeat(5000), 'x').message.length < 200);
});
