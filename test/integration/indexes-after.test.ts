// Issue 27, item 6 (src/ingest/indexes-after.ts): on the embedded engine, a first import that at
// least doubles orders and order_lines writes their rows, then builds their indexes again, under the
// same names and definitions. Asserted by what the catalogue says (an index built again is a new
// relation), and by the rows: I2 (the last line of a repeated order wins, the keys still unique),
// L1 (every line stored), U2 (first orders). On PostgreSQL, or when the tables are already larger
// than the import, the indexes are never touched.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { engine, openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { INDEXES_AFTER_MIN } from '../../src/ingest/indexes-after.js';
import type { Database } from '../../src/db/database.js';

const opened: TestDatabase[] = [];
after(async () => Promise.all(opened.map((t) => t.cleanup())));

async function database(): Promise<Database> {
  const t = await openTestDatabase();
  opened.push(t);
  return t.db;
}

let slugs = 0;
async function organization(db: Database): Promise<string> {
  const [row] = await db.query<{ id: string }>(
    'INSERT INTO organizations (slug, name) VALUES ($1, $2) RETURNING id',
    [`indexes-after-${++slugs}`, 'Indexes after'],
  );
  return row!.id;
}

/** Order i: 1 to 3 lines, one customer in 7, a day in January. */
function order(prefix: string, i: number, total = '30.00') {
  const lines = Array.from({ length: 1 + (i % 3) }, (_, k) => ({
    line_id: `l${k}`,
    product_id: `p${(i + k) % 40}`,
    product_name: `Produit ${(i + k) % 40}`,
    categories: k === 0 ? ['Thés'] : [],
    quantity: 1 + k,
    subtotal: '10.00',
  }));
  return {
    store: i % 2 === 0 ? 'https://a.example' : 'https://b.example',
    id: `${prefix}${i}`,
    created_at: `2026-01-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00Z`,
    status: 'completed',
    customer_email: `c${i % 7}@example.fr`,
    items: lines.length,
    total,
    lines,
  };
}

const orders = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => order(prefix, i));

interface IndexRow {
  [column: string]: unknown;
  table: string;
  name: string;
  definition: string;
  oid: string;
  key: boolean;
}

/** Every index of the tables an import writes, by name: its definition, its relation, whether it is a key. */
async function indexes(db: Database): Promise<Map<string, IndexRow>> {
  const rows = await db.query<IndexRow>(
    `SELECT i.indrelid::regclass::text AS table, c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition,
            i.indexrelid::text AS oid, i.indisprimary AS key
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid IN ('orders'::regclass, 'order_lines'::regclass)`,
  );
  return new Map(rows.map((r) => [r.name, r]));
}

async function stored(db: Database, organizationId: string) {
  const [row] = await db.query<{ orders: number; lines: number; customers: number; total: string }>(
    `SELECT (SELECT count(*)::int FROM orders WHERE organization_id = $1) AS orders,
            (SELECT count(*)::int FROM order_lines WHERE organization_id = $1) AS lines,
            (SELECT count(*)::int FROM customer_first_orders WHERE organization_id = $1) AS customers,
            (SELECT sum(total)::text FROM orders WHERE organization_id = $1) AS total`,
    [organizationId],
  );
  return row!;
}

const linesOf = (records: ReturnType<typeof orders>) => records.reduce((n, r) => n + r.lines.length, 0);

test('issue 27: a first import of many orders builds the indexes of orders and order_lines after their rows (embedded), the same indexes; a smaller one into larger tables leaves them', async () => {
  const db = await database();
  const before = await indexes(db);
  assert.deepEqual(
    [...before.values()]
      .filter((i) => i.key)
      .map((i) => i.name)
      .sort(),
    ['order_lines_pkey', 'orders_pkey'],
  );
  const first = await organization(db);
  const records = orders('A', 2 * INDEXES_AFTER_MIN);
  const result = await importOrderRecords(db, first, records);
  assert.equal(result.imported, 2 * INDEXES_AFTER_MIN);

  const afterFirst = await indexes(db);
  assert.deepEqual([...afterFirst.keys()].sort(), [...before.keys()].sort());
  for (const [name, index] of afterFirst) {
    assert.equal(index.definition, before.get(name)!.definition, name);
    assert.equal(index.key, before.get(name)!.key, name);
    // Built again on the embedded engine only: a new relation under the old name.
    if (engine === 'embedded') assert.notEqual(index.oid, before.get(name)!.oid, `${name} built again`);
    else assert.equal(index.oid, before.get(name)!.oid, `${name} untouched`);
  }
  assert.deepEqual(await stored(db, first), {
    orders: 2 * INDEXES_AFTER_MIN,
    lines: linesOf(records),
    customers: 7,
    total: (60 * INDEXES_AFTER_MIN).toFixed(2),
  });
  // The keys hold: an order or a line written twice is refused (unique violation).
  await assert.rejects(
    db.query(
      `INSERT INTO orders (organization_id, store_id, external_id, created_at, status, items, total)
       SELECT organization_id, store_id, external_id, created_at, status, items, total
       FROM orders WHERE organization_id = $1 LIMIT 1`,
      [first],
    ),
    /duplicate key value violates unique constraint "orders_pkey"/,
  );
  await assert.rejects(
    db.query(`INSERT INTO order_lines SELECT * FROM order_lines WHERE organization_id = $1 LIMIT 1`, [first]),
    /duplicate key value violates unique constraint "order_lines_pkey"/,
  );
  // The reports' plans find the indexes: an order by its key, through orders_pkey.
  const [plan] = await db.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN SELECT total FROM orders WHERE organization_id = $1 AND store_id = 1 AND external_id = 'A5'`,
    [first],
  );
  assert.match(plan!['QUERY PLAN'], /orders_pkey/);

  // A second organization's first import, half what the tables hold: indexes kept current.
  const second = await organization(db);
  const fewer = orders('B', INDEXES_AFTER_MIN);
  await importOrderRecords(db, second, fewer);
  const afterSecond = await indexes(db);
  for (const [name, index] of afterSecond) assert.equal(index.oid, afterFirst.get(name)!.oid, `${name} kept`);
  assert.equal((await stored(db, second)).lines, linesOf(fewer));
});

test('I2 with issue 27: a first import that repeats an order keeps its last line, and its lines, once (the key built again refuses the repeat, the merge runs again on the last lines)', async () => {
  const db = await database();
  const organizationId = await organization(db);
  const records = [
    ...orders('A', INDEXES_AFTER_MIN),
    { ...order('A', 3, '99.00'), lines: [order('A', 3).lines[0]!] },
  ];
  const result = await importOrderRecords(db, organizationId, records);
  assert.equal(result.imported, INDEXES_AFTER_MIN);
  const [repeated] = await db.query<{ total: string; lines: number }>(
    `SELECT o.total::text, (SELECT count(*)::int FROM order_lines l
       WHERE l.organization_id = o.organization_id AND l.store_id = o.store_id AND l.external_id = o.external_id) AS lines
     FROM orders o WHERE o.organization_id = $1 AND o.external_id = 'A3'`,
    [organizationId],
  );
  assert.deepEqual(repeated, { total: '99.00', lines: 1 });
  const counts = await stored(db, organizationId);
  assert.equal(counts.orders, INDEXES_AFTER_MIN);
  assert.equal(counts.lines, linesOf(records.slice(0, INDEXES_AFTER_MIN)) - linesOf([order('A', 3)]) + 1);
  const keys = [...(await indexes(db)).values()].filter((i) => i.key).map((i) => i.name);
  assert.deepEqual(keys.sort(), ['order_lines_pkey', 'orders_pkey']);
});
