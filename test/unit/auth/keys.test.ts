import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { displayPrefix, hashKey, isWellFormedKey, keyChecksum, mintKey } from '../../../src/auth/keys.js';
import { bearerKey } from '../../../src/auth/authenticate.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** An independent base62 of the CRC32, written from the K1 text. */
function referenceChecksum(random: string): string {
  let n = BigInt(zlib.crc32(random));
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(6, '0');
}

test('K1: smk_, 32 random base62 characters, a 6-character CRC32 checksum: 42 characters', () => {
  const keys = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const key = mintKey();
    assert.match(key, /^smk_[0-9A-Za-z]{38}$/);
    assert.equal(key.length, 42);
    assert.equal(key.slice(36), referenceChecksum(key.slice(4, 36)));
    assert.ok(isWellFormedKey(key));
    keys.add(key);
  }
  assert.equal(keys.size, 200, 'keys are random');
});

test('K1: checksum values are base62 of the CRC32, most significant digit first, zero-padded', () => {
  assert.equal(keyChecksum('a'.repeat(32)), referenceChecksum('a'.repeat(32)));
  assert.equal(keyChecksum('0'.repeat(32)).length, 6);
});

test('K1: a key with a wrong checksum, a wrong prefix or a wrong length is malformed', () => {
  const key = mintKey();
  const last = key.at(-1) === 'A' ? 'B' : 'A';
  assert.equal(isWellFormedKey(key.slice(0, -1) + last), false);
  assert.equal(isWellFormedKey('smx_' + key.slice(4)), false);
  assert.equal(isWellFormedKey(key + 'A'), false);
  assert.equal(isWellFormedKey(key.slice(0, 20)), false);
  assert.equal(isWellFormedKey(key.replace(/^smk_./, 'smk_-')), false);
});

test('K2: the stored hash is SHA-256 and the display prefix is the first 12 characters', () => {
  const key = mintKey();
  assert.equal(hashKey(key).length, 32);
  assert.equal(displayPrefix(key), key.slice(0, 12));
  assert.ok(displayPrefix(key).startsWith('smk_'));
});

test('K3: Bearer scheme is case-insensitive; a missing header or another scheme is refused', () => {
  assert.equal(bearerKey('Bearer abc'), 'abc');
  assert.equal(bearerKey('bearer   abc '), 'abc');
  assert.equal(bearerKey('BEARER abc'), 'abc');
  for (const bad of [undefined, '', 'Basic abc', 'Bearer', 'Bearer a b', 'Token abc']) {
    assert.throws(
      () => bearerKey(bad),
      (e: Error & { code?: string }) => e.code === 'UNAUTHENTICATED',
      String(bad),
    );
  }
});
