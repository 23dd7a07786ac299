// Issue 28, item 2: a build's lines decoded through shortcuts — a line's texts coded once per
// distinct run of their COPY bytes, a line's order guessed from the previous line's — that must
// give every line the item and the order the plain path gives it (section 15, L1, L2, L5).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineColumns, LINE_FIELD_COUNT } from '../../../../src/metrics/columnar/line-columns.js';
import { LineCodes } from '../../../../src/metrics/columnar/line-codes.js';
import { OrderKeys } from '../../../../src/metrics/columnar/order-keys.js';

type Texts = readonly [product: string, productId: string, variant: string, sku: string, categories: string];

/** One binary COPY row of LINE_ROW_FIELDS (amounts 0) after `pad` bytes: the buffer and its fields. */
function copyRow(texts: Texts, quantity: number, pad: number) {
  const fields: Buffer[] = texts.map((text) => Buffer.from(text, 'utf8'));
  const int4 = (n: number) => Buffer.from(Int32Array.of(n).buffer).reverse();
  fields.push(int4(quantity), int4(0), ...[0, 1, 2].map(() => Buffer.alloc(8))); // numeric 0: no digit
  assert.equal(fields.length, LINE_FIELD_COUNT);
  const starts = new Int32Array(LINE_FIELD_COUNT);
  const lengths = new Int32Array(LINE_FIELD_COUNT);
  const parts: Buffer[] = [Buffer.alloc(pad, 0x2a)];
  let at = pad;
  fields.forEach((field, f) => {
    parts.push(int4(field.length), field);
    starts[f] = at + 4;
    lengths[f] = field.length;
    at += 4 + field.length;
  });
  parts.push(Buffer.alloc(3, 0x2a));
  return { data: Buffer.concat(parts), starts, lengths };
}

test('LineColumns: each copied line gets the item of its own texts, however alike the runs of bytes (L1, L2, L5)', () => {
  const codes = new LineCodes();
  const lines = new LineColumns(8, codes, (cents) => cents);
  // A delta's line first: the copied ones with the same texts get its item.
  lines.pushValues(0, [
    { p: 'Thé', i: '12', v: 'S', s: 'T-S', c: '["Épicerie"]', q: 1, rq: 0, st: '0', d: '0', ra: '0' },
  ]);
  const rows: Texts[] = [
    ['Thé', '12', 'S', 'T-S', '["Épicerie"]'],
    ['Thé', '12', 'M', 'T-S', '["Épicerie"]'], // only the variant differs, same length
    ['Thé', '12', 'S', 'T-M', '["Épicerie"]'], // only the SKU's last byte
    ['Thé', '12', 'S', 'T-S', '["Épicerii"]'], // only the categories
    ['Thé1', '2', 'S', 'T-S', '["Épicerie"]'], // the same bytes, one field boundary moved
    ['Thé', '12S', '', 'T-S', '["Épicerie"]'],
    ['Thé', '12', 'S', 'T-S', '[]'], // L5: no category, in `Unknown`
    ['Thé', '12', 'M', 'T-S', '["Épicerie"]'], // seen before: its run's item
  ];
  rows.forEach((texts, k) => {
    const row = copyRow(texts, k + 1, (k * 5) % 11);
    lines.pushCopied(1 + (k % 3), row.data, row.starts, row.lengths, 0);
  });
  const part = lines.placed(Int32Array.from([0, 1, 2, 3]), 4);
  const items = codes.items();
  const seen = (item: number): string[] => {
    const categories = items.setCategories[items.categorySet[item] as number] as Int32Array;
    return [
      items.products.values[items.product[item] as number] as string,
      items.productIds.values[items.productId[item] as number] as string,
      items.variants.values[items.variant[item] as number] as string,
      items.skus.values[items.sku[item] as number] as string,
      [...categories].map((c) => items.categories.values[c]).join('|'),
    ];
  };
  const byQuantity = new Map<number, number>();
  for (let l = 0; l < part.count; l++) byQuantity.set(part.quantity[l] as number, part.item[l] as number);
  rows.forEach(([product, productId, variant, sku, categories], k) => {
    const named = (JSON.parse(categories) as string[]).join('|') || 'Unknown';
    assert.deepEqual(
      seen(byQuantity.get(k + 1) as number),
      [product, productId, variant, sku, named],
      `row ${k}`,
    );
  });
  assert.equal(byQuantity.get(1), part.item[0], 'the delta’s texts, its item');
  assert.equal(byQuantity.get(8), byQuantity.get(2));
  assert.equal(items.count, 7);
});

test('OrderKeys: lines in the orders’ order, repeated, backwards or shuffled find the same orders; a key read twice, its first', () => {
  const key = (store: number, id: string, pad: number): [Buffer, number, number] => {
    const idBytes = Buffer.from(id, 'utf8');
    const data = Buffer.concat([Buffer.alloc(pad, 0x2a), Buffer.alloc(12), idBytes]);
    data.writeBigInt64BE(BigInt(store), pad);
    data.writeInt32BE(idBytes.length, pad + 8);
    return [data, pad, data.length];
  };
  const orders = Array.from({ length: 40 }, (_, n): [number, string] => [1 + (n % 2), `#${n >> 1}`]);
  const keys = new OrderKeys(4);
  orders.forEach(([store, id], i) => keys.add(i, ...key(store, id, i % 3)));
  keys.add(40, ...key(1, '#3', 0)); // order 6 read again (moved while the build read by pages)
  keys.add(41, ...key(9, '#0', 0));
  const find = (i: number) => keys.find(...key(...(orders[i] as [number, string]), (i * 7) % 5));
  const inOrder = orders.flatMap((_, i) => [i, i, i]);
  const shuffled = orders.map((_, i) => (i * 17) % orders.length);
  for (const sequence of [inOrder, [...inOrder].reverse(), shuffled, [6, 6, 7, 6, 39, 0, 1]])
    for (const i of sequence) assert.equal(find(i), i, `order ${i}`);
  assert.equal(keys.find(...key(9, '#0', 1)), 41);
  assert.equal(keys.find(...key(9, '#1', 1)), -1);
  assert.equal(keys.find(...key(1, '#3', 2)), 6);
});
