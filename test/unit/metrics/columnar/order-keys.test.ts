// A build's lines read after its orders (issue 28, item 2): each line finds its order by the
// order's key, in any order, and lands in its order's range of the part (section 15).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteCodes } from '../../../../src/metrics/columnar/byte-codes.js';
import { LineColumns } from '../../../../src/metrics/columnar/line-columns.js';
import { LineCodes } from '../../../../src/metrics/columnar/line-codes.js';
import { OrderKeys } from '../../../../src/metrics/columnar/order-keys.js';

/** A store id and an external id as binary COPY writes them side by side, padded: the key's run. */
function keyed(store: number, id: string, pad: number): [Buffer, number, number] {
  const idBytes = Buffer.from(id, 'utf8');
  const data = Buffer.concat([Buffer.alloc(pad, 0x2a), Buffer.alloc(12), idBytes, Buffer.alloc(3, 0x2a)]);
  data.writeBigInt64BE(BigInt(store), pad);
  data.writeInt32BE(idBytes.length, pad + 8);
  return [data, pad, pad + 12 + idBytes.length];
}

test('OrderKeys: a line finds its order by store and external id; an unknown key finds none; a key read twice keeps its first order', () => {
  const keys = new OrderKeys(2); // grows past its first guess
  const orders: [number, string][] = [
    [1, 'A-1'],
    [2, 'A-1'], // the same external id in another store
    [1, 'A-10'],
    [1, ''],
    [1, 'é'.repeat(200)],
    [1, 'A-'], // a prefix of another key
    ...Array.from({ length: 50 }, (_, n): [number, string] => [3, `#${n}`]),
  ];
  orders.forEach(([store, id], i) => keys.add(i, ...keyed(store, id, i % 7)));
  keys.add(99, ...keyed(2, 'A-1', 3)); // moved while the build read by pages: read again
  orders.forEach(([store, id], i) =>
    assert.equal(keys.find(...keyed(store, id, (i * 3) % 5)), i, `${store} ${id}`),
  );
  assert.equal(keys.find(...keyed(2, 'A-10', 0)), -1);
  assert.equal(keys.find(...keyed(4, 'A-1', 0)), -1);
  assert.equal(keys.size, orders.length);
});

test('OrderKeys of one statement (issue 28): keys appended without the hash table, found in any order once a line misses the previous line’s order', () => {
  const keys = new OrderKeys(2, true);
  const orders: [number, string][] = [
    [1, 'A-1'],
    [2, 'A-1'],
    [1, 'A-10'],
    [1, ''],
    [1, 'é'.repeat(200)],
    [1, 'A-'],
    ...Array.from({ length: 500 }, (_, n): [number, string] => [3, `#${n}`]),
  ];
  orders.forEach(([store, id], i) => keys.add(i, ...keyed(store, id, i % 7)));
  // In the orders' order first (the guesses), then backwards and unknown (the table, made once).
  orders.forEach(([store, id], i) =>
    assert.equal(keys.find(...keyed(store, id, i % 5)), i, `${store} ${id}`),
  );
  for (let i = orders.length - 1; i >= 0; i -= 7) {
    const [store, id] = orders[i] as [number, string];
    assert.equal(keys.find(...keyed(store, id, 2)), i, `${store} ${id}`);
  }
  assert.equal(keys.find(...keyed(2, 'A-10', 0)), -1);
  assert.equal(keys.find(...keyed(4, 'A-1', 0)), -1);
  assert.equal(keys.size, orders.length);
});

test('ByteCodes.append: codes in order, found once looked up; a key appended twice is found at its first code; code() adds only new keys', () => {
  const codes = new ByteCodes();
  const key = (text: string) => Buffer.from(text, 'utf8');
  const texts = Array.from({ length: 300 }, (_, n) => `clé ${n}`);
  texts.forEach((text, n) => assert.equal(codes.append(key(text), 0, key(text).length), n));
  assert.equal(codes.append(key('clé 7'), 0, key('clé 7').length), 300);
  texts.forEach((text, n) => assert.equal(codes.find(key(text), 0, key(text).length), n));
  assert.equal(codes.code(key('clé 7'), 0, key('clé 7').length), 7);
  assert.equal(codes.code(key('nouvelle'), 0, key('nouvelle').length), 301);
  assert.equal(codes.find(key('absente'), 0, key('absente').length), -1);
  assert.equal(codes.append(key('après'), 0, key('après').length), 302);
  assert.equal(codes.find(key('après'), 0, key('après').length), 302);
  assert.equal(codes.size, 303);
});

test('ByteCodes.indexRepeats (issue 28): the table made for appended keys says which later codes repeat an earlier key; lookups find the first', () => {
  const codes = new ByteCodes();
  const key = (text: string) => Buffer.from(text, 'utf8');
  const texts = Array.from({ length: 2000 }, (_, n) => `commande ${n % 1500}`); // 500 repeats
  texts.push('commande 7', ''); // one more repeat, and the empty key
  texts.push(''); // the empty key twice
  texts.forEach((text, n) => assert.equal(codes.append(key(text), 0, key(text).length), n));
  const repeats = codes.indexRepeats();
  assert.equal(repeats.size, 502);
  for (let n = 1500; n < 2000; n++) assert.equal(repeats.get(n), n - 1500);
  assert.equal(repeats.get(2000), 7);
  assert.equal(repeats.get(2002), 2001);
  assert.equal(repeats.has(1499), false);
  texts.forEach((text, n) =>
    assert.equal(codes.find(key(text), 0, key(text).length), repeats.get(n) ?? n, text),
  );
  assert.equal(codes.find(key('commande 1500'), 0, 13), -1);
  assert.deepEqual([...new ByteCodes().indexRepeats()], []);
});

test('OrderKeys read by pages (issue 28): a key read twice, anywhere, finds its first order, the line after it too', () => {
  const keys = new OrderKeys(4);
  const ids = Array.from({ length: 300 }, (_, n) => `#${n}`);
  ids.forEach((id, i) => keys.add(i, ...keyed(1, id, i % 3)));
  keys.add(300, ...keyed(1, '#5', 0)); // #5 read again after the others, then #6's line follows it
  keys.add(301, ...keyed(1, '#6', 1));
  // A line of #5 then of #6: their guesses (the codes after the last found) land on the repeats.
  assert.equal(keys.find(...keyed(1, '#299', 2)), 299);
  assert.equal(keys.find(...keyed(1, '#5', 2)), 5);
  assert.equal(keys.find(...keyed(1, '#6', 0)), 6);
  assert.equal(keys.find(...keyed(1, '#7', 0)), 7);
  assert.equal(keys.size, 300);
});

test('LineColumns: lines read in any order land in their order’s range of the part, in the order they came (L1)', () => {
  const lines = new LineColumns(3, new LineCodes(), (cents) => cents);
  const line = (quantity: number) => ({
    p: 'Thé',
    i: 'Unknown',
    v: 'Unknown',
    s: 'Unknown',
    c: '[]',
    q: quantity,
    rq: 0,
    st: '100',
    d: '0',
    ra: '0',
  });
  // Pushed orders 0, 1, 2 (and 3 past the first guess); their lines interleaved.
  lines.pushValues(1, [line(10)]);
  lines.pushValues(0, [line(1)]);
  lines.pushValues(1, [line(11), line(12)]);
  lines.pushValues(3, [line(30)]);
  lines.pushValues(0, [line(2)]);
  // The part's order of orders: 2, 0, 3, 1 (order 2 has no line).
  const part = lines.placed(Int32Array.from([2, 0, 3, 1]), 4);
  assert.equal(part.count, 6);
  assert.deepEqual([...part.lineStart], [0, 0, 2, 3, 6]);
  assert.deepEqual([...part.quantity], [1, 2, 30, 10, 11, 12]);
  assert.deepEqual([...part.subtotal], [100, 100, 100, 100, 100, 100]);
});

test('LineColumns: orders pushed past the room made for lines, without lines, have none', () => {
  const lines = new LineColumns(1, new LineCodes(), (cents) => cents);
  lines.pushValues(0, []);
  const part = lines.placed(Int32Array.from([2, 0, 1]), 3);
  assert.deepEqual([...part.lineStart], [0, 0, 0, 0]);
});
