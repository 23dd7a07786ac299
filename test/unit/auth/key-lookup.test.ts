import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Queryable, Row } from '../../../src/db/database.js';
import { batchedKeyLookup, MAX_KEYS_PER_LOOKUP } from '../../../src/auth/key-lookup.js';

/**
 * A database of api_keys whose statements read the keys as they are when the statement starts
 * (a statement snapshot) and answer when the test releases them.
 */
function fakeDatabase() {
  const revoked = new Map<string, boolean>(); // hex hash → revoked
  const statements: { hashes: string[]; release: (error?: Error) => void }[] = [];
  const db: Queryable = {
    query: <R extends Row = Row>(_sql: string, params: readonly unknown[] = []) => {
      const hashes = (params[0] as Buffer[]).map((b) => b.toString('hex'));
      const snapshot = hashes
        .filter((h) => revoked.has(h))
        .map((h) => ({ key_hash: Buffer.from(h, 'hex'), revoked_at: revoked.get(h) ? new Date() : null }));
      return new Promise<R[]>((resolve, reject) =>
        statements.push({
          hashes,
          release: (error) => (error ? reject(error) : resolve(snapshot as unknown as R[])),
        }),
      );
    },
  };
  return { db, revoked, statements };
}

const hash = (n: number) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
const tick = () => new Promise((r) => setImmediate(r));
const state = (row: Row | undefined) =>
  row === undefined ? 'unknown' : row.revoked_at === null ? 'valid' : 'revoked';

test('K4: lookups that arrive while a statement runs share the next statement, one row per key', async () => {
  const { db, revoked, statements } = fakeDatabase();
  revoked.set(hash(1).toString('hex'), false);
  revoked.set(hash(2).toString('hex'), false);
  const lookUp = batchedKeyLookup(db);
  const first = lookUp(hash(1));
  assert.equal(statements.length, 1, 'the first lookup starts a statement at once');
  const waiting = [lookUp(hash(1)), lookUp(hash(2)), lookUp(hash(1)), lookUp(hash(3))];
  await tick();
  assert.equal(statements.length, 1, 'no second statement while the first runs');
  statements[0]?.release();
  assert.equal(state(await first), 'valid');
  await tick();
  assert.equal(statements.length, 2);
  assert.deepEqual(
    statements[1]?.hashes.sort(),
    [hash(1), hash(2), hash(3)].map((h) => h.toString('hex')),
  );
  statements[1]?.release();
  assert.deepEqual((await Promise.all(waiting)).map(state), ['valid', 'valid', 'valid', 'unknown']);
});

test('issue 29 (item 2): with no statement running, a lookup starts one at once; those made meanwhile share the next', async () => {
  const { db, statements } = fakeDatabase();
  const lookUp = batchedKeyLookup(db);
  const answers = [lookUp(hash(1)), lookUp(hash(2)), lookUp(hash(1))];
  assert.equal(statements.length, 1, 'not on the next turn, behind whatever that turn runs first');
  assert.deepEqual(statements[0]?.hashes, [hash(1).toString('hex')]);
  await tick();
  assert.equal(statements.length, 1);
  statements[0]?.release();
  await answers[0];
  assert.equal(statements.length, 2);
  assert.equal(statements[1]?.hashes.length, 2, 'the two keys asked meanwhile, in one statement');
  statements[1]?.release();
  assert.deepEqual((await Promise.all(answers)).map(state), ['unknown', 'unknown', 'unknown']);
});

test('K4: a lookup never joins a statement that started before it, so a revocation committed in between is seen', async () => {
  const { db, revoked, statements } = fakeDatabase();
  const key = hash(7).toString('hex');
  revoked.set(key, false);
  const lookUp = batchedKeyLookup(db);
  const before = lookUp(hash(7));
  await tick(); // its statement starts, with the key still valid
  revoked.set(key, true); // the revocation commits while that statement runs
  const after = lookUp(hash(7)); // the very next request
  statements[0]?.release();
  assert.equal(state(await before), 'valid', 'a request that arrived before the revocation');
  await tick();
  assert.equal(statements.length, 2, 'the request after the revocation gets a statement of its own');
  statements[1]?.release();
  assert.equal(state(await after), 'revoked');
});

test('a failed statement fails its own lookups only; the next ones get a new statement', async () => {
  const { db, revoked, statements } = fakeDatabase();
  revoked.set(hash(1).toString('hex'), false);
  const lookUp = batchedKeyLookup(db);
  const first = lookUp(hash(1));
  await tick();
  const second = lookUp(hash(1));
  statements[0]?.release(new Error('connection lost'));
  await assert.rejects(first, /connection lost/);
  await tick();
  statements[1]?.release();
  assert.equal(state(await second), 'valid');
  const third = lookUp(hash(1));
  await tick();
  assert.equal(statements.length, 3);
  statements[2]?.release();
  assert.equal(state(await third), 'valid');
});

test(`one statement reads at most ${MAX_KEYS_PER_LOOKUP} keys; the others wait for the next`, async () => {
  const { db, statements } = fakeDatabase();
  const lookUp = batchedKeyLookup(db);
  const all = [lookUp(hash(0))];
  await tick();
  for (let n = 1; n <= MAX_KEYS_PER_LOOKUP + 10; n++) all.push(lookUp(hash(n)));
  statements[0]?.release();
  await tick();
  assert.equal(statements[1]?.hashes.length, MAX_KEYS_PER_LOOKUP);
  statements[1]?.release();
  await tick();
  assert.equal(statements[2]?.hashes.length, 10);
  statements[2]?.release();
  assert.equal((await Promise.all(all)).length, MAX_KEYS_PER_LOOKUP + 11);
});

test('tenancy: in a shared statement each request gets the row of its own key, never another', async () => {
  const { db, revoked, statements } = fakeDatabase();
  for (let n = 1; n <= 20; n++) revoked.set(hash(n).toString('hex'), n % 3 === 0);
  const lookUp = batchedKeyLookup(db);
  const first = lookUp(hash(1));
  await tick();
  const asked = Array.from({ length: 60 }, (_, i) => 1 + ((i * 7) % 25)); // some unknown, some twice
  const answers = asked.map((n) => lookUp(hash(n)));
  statements[0]?.release();
  await first;
  await tick();
  statements[1]?.release();
  const rows = await Promise.all(answers);
  rows.forEach((row, i) => {
    const n = asked[i] as number;
    if (n > 20) return assert.equal(row, undefined, `key ${n} is unknown`);
    assert.deepEqual(row?.key_hash, hash(n), `key ${n} got its own row`);
    assert.equal(state(row), n % 3 === 0 ? 'revoked' : 'valid');
  });
});
