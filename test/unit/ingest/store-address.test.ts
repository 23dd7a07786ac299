// Issue 18, finding 5: one spelling per store (WHATWG URL rules), no credentials in an address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkStoreAddress, NOT_A_URL, WITH_CREDENTIALS } from '../../../src/ingest/store-address.js';

test('finding 5: scheme and host lower-cased, punycode, default port dropped, path case kept, no trailing slash', () => {
  for (const [raw, stored] of [
    ['HTTPS://E.EXAMPLE.FR', 'https://e.example.fr'],
    ['https://e.example.fr/', 'https://e.example.fr'],
    [' Https://E.Example.fr:443// ', 'https://e.example.fr'],
    ['http://e.example.fr:80/', 'http://e.example.fr'],
    ['http://e.example.fr:8080/', 'http://e.example.fr:8080'],
    ['https://e.example.fr:80', 'https://e.example.fr:80'],
    ['https://Bücher.Example/Boutique/', 'https://xn--bcher-kva.example/Boutique'],
    ['https://e.example.fr/Shop/../FR/', 'https://e.example.fr/FR'],
    ['https://e.example.fr.', 'https://e.example.fr.'],
    ['HTTP://[::1]:3000', 'http://[::1]:3000'],
  ] as const) {
    assert.deepEqual(checkStoreAddress(raw), { address: stored }, raw);
  }
});

test('finding 5: user info is refused, and the refusal quotes the address without it', () => {
  for (const raw of [
    'https://user:pass@e.example.fr',
    'https://user@e.example.fr/',
    'HTTPS://:pass@E.example.fr/x',
  ]) {
    const checked = checkStoreAddress(raw);
    assert.equal(checked.problem, WITH_CREDENTIALS, raw);
    assert.ok(!checked.shown?.includes('pass') && !checked.shown?.includes('user'), checked.shown);
    assert.match(checked.shown ?? '', /^https:\/\/e\.example\.fr(\/x)?$/);
  }
});

test('finding 5: what is no http(s) URL with a host is refused as before', () => {
  for (const raw of [
    'shop.example.fr',
    'ftp://shop.example.fr',
    'https://',
    'https://shop example.fr',
    '',
    '=HYPERLINK("x")',
    'javascript:alert(1)',
  ]) {
    assert.equal(checkStoreAddress(raw).problem, NOT_A_URL, raw);
  }
});
