// COPY's text format (the import's bulk path): every value goes in as exactly one field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../../src/db/database.js';
import {
  MAX_BATCH_BYTES,
  STAGING_BATCH,
  StagingBuffer,
  arrayLiteral,
  copyField,
  importIdOfTable,
  importLinesTable,
  stagedLineRows,
  stagedOrderRow,
  stagedRow,
} from '../../../src/ingest/staging.js';
import type { OrderRecord } from '../../../src/ingest/validate-order.js';

test('copyField: NULL is \\N; backslash, tab, line feed and carriage return are escaped; the rest is literal', () => {
  assert.equal(copyField(null), '\\N');
  assert.equal(copyField(undefined), '\\N');
  assert.equal(copyField('\\N'), '\\\\N');
  assert.equal(copyField('a\tb\nc\rd\\e'), 'a\\tb\\nc\\rd\\\\e');
  assert.equal(copyField(`quotes "x" 'y', commas; café ✓ 😀`), `quotes "x" 'y', commas; café ✓ 😀`);
  assert.equal(copyField(42), '42');
  assert.equal(copyField('12.30'), '12.30');
});

const ORDER: OrderRecord = {
  storeAddress: 'https://s.example/a\tb',
  externalId: 'x\\1',
  createdAt: '2026-03-01T23:30:00+01:00',
  status: 'en cours\n✓',
  billingCountry: null,
  customer: 'ab'.repeat(32),
  items: 2,
  total: '12.30',
  taxTotal: '0.00',
  shippingTotal: '1.00',
  feeTotal: '0.00',
  refundTotal: '0.00',
  refundTax: '0.00',
  refundShipping: '0.00',
  lines: [],
};

test('stagedRow: one line of 16 fields, free texts escaped, NULL as \\N (no lines: L1)', () => {
  assert.equal(
    stagedRow(7, ORDER),
    `7\thttps://s.example/a\\tb\tx\\\\1\t2026-03-01T23:30:00+01:00\ten cours\\n✓\t\\N\t${'ab'.repeat(32)}\t2\t12.30\t0.00\t1.00\t0.00\t0.00\t0.00\t0.00\t\\N\n`,
  );
});

test('stagedRow: L1 lines go as one JSON array, escaped for COPY', () => {
  const line = {
    line_id: 'l\\1',
    product_id: null,
    variant_id: null,
    sku: null,
    product_name: 'Thé\tvert',
    variant_name: null,
    categories: ['Thés'],
    quantity: 2,
    subtotal: '10.00',
    discount: '0.00',
    refunded_quantity: 0,
    refunded_amount: '0.00',
  };
  const row = stagedRow(7, { ...ORDER, lines: [line] });
  const lines = row.split('\t').at(-1)!;
  assert.equal(lines, `${JSON.stringify([line]).replaceAll('\\', '\\\\')}\n`);
});

test('arrayLiteral: every category quoted, its quotes and backslashes escaped (L1 categories as text[])', () => {
  assert.equal(arrayLiteral([]), '{}');
  assert.equal(arrayLiteral(['Thés', 'a,b', 'NULL', '{x}']), '{"Thés","a,b","NULL","{x}"}');
  assert.equal(arrayLiteral(['say "hi"', 'back\\slash']), '{"say \\"hi\\"","back\\\\slash"}');
});

test("stagedLineRows: one COPY row a line (L1): its order's line number, its place from 0, its fields escaped", () => {
  const line = {
    line_id: 'l\\1',
    product_id: null,
    variant_id: '7',
    sku: null,
    product_name: 'Thé\tvert',
    variant_name: null,
    categories: ['Thés', 'a"b'],
    quantity: 2,
    subtotal: '10.00',
    discount: '0.50',
    refunded_quantity: 1,
    refunded_amount: '4.75',
  };
  assert.equal(
    stagedLineRows(7, [line, { ...line, line_id: 'l2', categories: [] }]),
    `7\t0\tl\\\\1\t\\N\t7\t\\N\tThé\\tvert\t\\N\t{"Thés","a\\\\"b"}\t2\t10.00\t0.50\t1\t4.75\n` +
      `7\t1\tl2\t\\N\t7\t\\N\tThé\\tvert\t\\N\t{}\t2\t10.00\t0.50\t1\t4.75\n`,
  );
  assert.equal(stagedLineRows(7, []), '');
  assert.equal(stagedOrderRow(7, ORDER), stagedRow(7, ORDER).replace(/\t\\N\n$/, '\n'));
});

test("StagingBuffer: with a lines COPY, the orders' rows and their lines' go by two COPYs, lines after orders", async () => {
  const copies: { sql: string; data: string }[] = [];
  const db = {
    copyIn: async (sql: string, data: string | Buffer) => {
      copies.push({ sql, data: Buffer.isBuffer(data) ? data.toString('utf8') : data });
    },
  } as unknown as Database;
  const staging = new StagingBuffer(db, { copy: 'COPY o', rowPrefix: '', linesCopy: 'COPY l' });
  const line = {
    line_id: 'a',
    product_id: '1',
    variant_id: null,
    sku: null,
    product_name: 'P',
    variant_name: null,
    categories: ['C'],
    quantity: 1,
    subtotal: '1.00',
    discount: '0.00',
    refunded_quantity: 0,
    refunded_amount: '0.00',
  };
  staging.add(1, { ...ORDER, lines: [line] });
  staging.add(2, ORDER);
  await staging.finish();
  assert.deepEqual(copies, [
    { sql: 'COPY o', data: stagedOrderRow(1, ORDER) + stagedOrderRow(2, ORDER) },
    { sql: 'COPY l', data: stagedLineRows(1, [line]) },
  ]);
});

test('StagingBuffer: each batch is the rows in UTF-8, past its first buffer too, and says which lines it stored', async () => {
  const copies: { sql: string; data: string }[] = [];
  const db = {
    copyIn: async (sql: string, data: string | Buffer) => {
      copies.push({ sql, data: Buffer.isBuffer(data) ? data.toString('utf8') : data });
    },
  } as unknown as Database;
  const stored: [number, number][] = [];
  const staging = new StagingBuffer(db, { copy: 'COPY t FROM STDIN', rowPrefix: 'p\t' }, (first, last) =>
    stored.push([first, last]),
  );
  // Rows of 300 Unicode characters: a batch needs far more than the first 64 KiB buffer.
  const wide = { ...ORDER, status: 'é😀'.repeat(100) };
  const expected: string[] = [];
  for (let line = 1; line <= STAGING_BATCH + 3; line++) {
    staging.add(line, wide);
    expected.push(`p\t${stagedRow(line, wide)}`);
    if (staging.full) await staging.flush();
  }
  await staging.finish();
  assert.deepEqual(
    copies.map((c) => c.sql),
    ['COPY t FROM STDIN', 'COPY t FROM STDIN'],
  );
  assert.equal(copies[0]?.data, expected.slice(0, STAGING_BATCH).join(''));
  assert.equal(copies[1]?.data, expected.slice(STAGING_BATCH).join(''));
  assert.deepEqual(stored, [
    [1, STAGING_BATCH],
    [STAGING_BATCH + 1, STAGING_BATCH + 3],
  ]);
});

test('StagingBuffer: a batch of long rows is sent once it holds MAX_BATCH_BYTES, under the embedded COPY limit', async () => {
  const sizes: number[] = [];
  const lines: string[] = [];
  const db = {
    copyIn: async (_sql: string, data: string | Buffer) => {
      const buffer = Buffer.isBuffer(data) ? data : Buffer.from(data);
      sizes.push(buffer.length);
      lines.push(...buffer.toString('utf8').split('\n').filter(Boolean));
    },
  } as unknown as Database;
  const staging = new StagingBuffer(db, { copy: 'COPY t FROM STDIN', rowPrefix: '' });
  // The longest fields validation lets through: about 7.5 KB a row, 75 MB for STAGING_BATCH rows.
  const longest = {
    ...ORDER,
    storeAddress: `https://${'中'.repeat(2000)}.example`,
    externalId: '中'.repeat(200),
    status: '中'.repeat(200),
  };
  const rowBytes = Buffer.byteLength(stagedRow(1, longest));
  let added = 0;
  for (let line = 1; line <= STAGING_BATCH; line++) {
    staging.add(line, longest);
    added++;
    if (staging.full) await staging.flush();
  }
  await staging.finish();
  assert.ok(sizes.length >= 3, `${sizes.length} batches`);
  for (const size of sizes) assert.ok(size < MAX_BATCH_BYTES + rowBytes, `a batch of ${size} bytes`);
  assert.ok(MAX_BATCH_BYTES + rowBytes < 64 * 1024 * 1024);
  assert.equal(lines.length, added);
  assert.deepEqual(
    lines.map((line) => Number(line.split('\t')[0])),
    Array.from({ length: added }, (_, i) => i + 1),
  );
});

test('an import table is named from its UUID, and only such a name gives one back', () => {
  const id = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
  assert.equal(importLinesTable(id), 'import_lines_0f1e2d3c4b5a49688776a5b4c3d2e1f0');
  assert.equal(importIdOfTable(importLinesTable(id)), id);
  for (const other of ['import_staging', 'import_lines_x', `import_lines_${'0'.repeat(31)}`])
    assert.equal(importIdOfTable(other), undefined, other);
  assert.throws(() => importLinesTable('1; DROP TABLE orders'));
});
