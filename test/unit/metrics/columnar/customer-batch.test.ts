// Issue 28: a build's customers coded a batch at a time give the codes a lookup an order gave.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { HexTextCodes } from '../../../../src/metrics/columnar/byte-codes.js';
import { CustomerBatch } from '../../../../src/metrics/columnar/customer-batch.js';

const hex = (n: number): string => createHash('sha256').update(`customer ${n}`).digest('hex');

/** Each key at an odd place of a buffer of its own, as a COPY row's field lies. */
const field = (key: string): [Buffer, number, number] => {
  const data = Buffer.concat([Buffer.from('***'), Buffer.from(key), Buffer.from('*')]);
  return [data, 3, data.length - 4];
};

/** Keys drawn with repeats: some customers once, some many times, in no order. */
function drawn(count: number, customers: number, seed: number): string[] {
  let state = seed;
  const next = () => (state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
  return Array.from({ length: count }, () => hex(Math.floor(next() ** 2 * customers)));
}

/**
 * The codes of `keys` as a build gives them (OrderColumns): through a batch of `batchOrders`, coded
 * when due (after a piece of seven rows) or at the end, the keys after it looked up one at a time;
 * given `step`, a step of the batch coded after a piece once that many keys wait (codeSome).
 */
async function batched(
  keys: readonly string[],
  batchOrders: number,
  step = Infinity,
): Promise<[number[], HexTextCodes]> {
  const codes = new HexTextCodes();
  let batch: CustomerBatch | undefined = new CustomerBatch(16, batchOrders);
  const customer = new Int32Array(keys.length).fill(-1);
  for (const [i, key] of keys.entries()) {
    if (!batch?.add(i, ...field(key))) customer[i] = codes.code(...field(key));
    if (i % 7 !== 6 || !batch) continue;
    if (batch.due) {
      await batch.code(codes, customer);
      batch = undefined;
    } else if (batch.pending >= step) batch.codeSome(codes, customer);
  }
  await batch?.code(codes, customer);
  return [Array.from(customer), codes];
}

test('CustomerBatch: the codes of a lookup an order, in order of first sight, the batch holding all orders or the first ones', async () => {
  const keys = drawn(20_000, 6_000, 7);
  const direct = new HexTextCodes();
  const expected = keys.map((key) => direct.code(...field(key)));
  for (const [batchOrders, step] of [
    [1 << 20, Infinity],
    [5_000, Infinity],
    [64, Infinity],
    [1, Infinity],
    // Coded a step at a time while the orders come (customer-batch.ts, codeSome).
    [1 << 20, 1],
    [1 << 20, 333],
    [5_000, 40],
  ] as const) {
    const [got, codes] = await batched(keys, batchOrders, step);
    assert.deepEqual(got, expected, `batches of ${batchOrders}, steps of ${step}`);
    assert.equal(codes.size, direct.size);
    // The dictionary finds every key afterwards (a delta's lookup), and the same codes.
    for (const [i, key] of keys.entries()) assert.equal(codes.find(...field(key)), expected[i]);
  }
});

test('CustomerBatch: keys that are not 64 lowercase digits are left to the caller; never two customers with one code', async () => {
  const keys = [
    hex(1),
    hex(1).toUpperCase(), // another text (U1 keys are lowercase): another customer
    `${hex(2).slice(0, 63)}g`,
    hex(2).slice(0, 62),
    'someone@example.com',
    hex(2),
    hex(1),
    '0'.repeat(64),
    `${'0'.repeat(63)}1`,
    '0'.repeat(64),
    hex(2),
  ];
  for (const [batchOrders, step] of [
    [4, Infinity],
    [100, 1],
  ] as const) {
    const [got, codes] = await batched(keys, batchOrders, step);
    const byKey = new Map<string, number>();
    for (const [i, key] of keys.entries()) {
      const known = byKey.get(key);
      if (known === undefined) {
        assert.ok(![...byKey.values()].includes(got[i] as number), `${key}: a code of its own`);
        byKey.set(key, got[i] as number);
      } else assert.equal(got[i], known, key);
    }
    assert.equal(codes.size, byKey.size);
    assert.deepEqual(
      [...byKey.values()].sort((a, b) => a - b),
      Array.from({ length: byKey.size }, (_, c) => c),
    );
  }
});

test('CustomerBatch: keys whose hashes share their bits are still told apart (long runs in one bucket)', async () => {
  // Keys that differ in one digit only, many of them: a weak hash would put them in one slot chain.
  const keys = Array.from({ length: 3_000 }, (_, n) => `${'a'.repeat(58)}${n.toString(16).padStart(6, '0')}`);
  for (const step of [Infinity, 1_000]) {
    const [got] = await batched([...keys, ...keys.slice().reverse()], 1 << 20, step);
    assert.deepEqual(
      got.slice(0, 3_000),
      Array.from({ length: 3_000 }, (_, c) => c),
    );
    assert.deepEqual(
      got.slice(3_000),
      Array.from({ length: 3_000 }, (_, c) => 2_999 - c),
    );
  }
});
