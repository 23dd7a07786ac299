import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashPassword, verifyPassword } from '../../../src/domain/passwords.js';

test('a password verifies against its own hash only', async () => {
  const stored = await hashPassword('correct horse battery');
  assert.match(stored, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  assert.doesNotMatch(stored, /correct horse/);
  assert.equal(await verifyPassword('correct horse battery', stored), true);
  assert.equal(await verifyPassword('correct horse batterY', stored), false);
  assert.equal(await verifyPassword('', stored), false);
});

test('each hash has its own salt: one password hashed twice gives two different strings', async () => {
  const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
  assert.notEqual(a, b);
  assert.equal(await verifyPassword('same password', b), true);
});

test('a stored value that is not one of our hashes never verifies (no exception)', async () => {
  for (const stored of ['', 'plain', 'md5$abc$def', 'scrypt$16384$8$1$$', 'scrypt$16384$8$1$c2FsdA==$']) {
    assert.equal(await verifyPassword('anything', stored), false, stored);
  }
});
