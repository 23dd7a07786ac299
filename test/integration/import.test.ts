import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { engine, openTestDatabase, ordersBeingWritten, type TestDatabase } from '../helpers/database.js';
import {
  importOrderFile,
  importOrderRecords,
  importOrderStream,
  refusalMessage,
  STAGING_BATCH,
} from '../../src/ingest/import.js';
import {
  FAILED,
  INTERRUPTED,
  INTERRUPTED_PASS,
  findJob,
  recoverInterruptedImports,
  type ImportJob,
} from '../../src/ingest/jobs.js';
import { createImportLines, importLinesTables } from '../../src/ingest/staging.js';
import { refreshFirstOrders } from '../../src/metrics/first-orders.js';
import { addStore } from '../../src/domain/stores.js';
import type { Database } from '../../src/db/database.js';
import { customerIdentity, customerKeyOf } from '../../src/ingest/customer.js';

// dist/test/integration → the sources' test/fixtures/import
const fixtures = fileURLToPath(new URL('../../../test/fixtures/import/', import.meta.url));
const fixture = (name: string): string => path.join(fixtures, name);

let t: TestDatabase;
let db: Database;
let org: string;
let slugs = 0;

async function createOrganization(): Promise<string> {
  const rows = await db.query<{ id: string }>(
    'INSERT INTO organizations (slug, name) VALUES ($1, $2) RETURNING id',
    [`import-test-${++slugs}`, 'Import test'],
  );
  return rows[0]!.id;
}

before(async () => {
  t = await openTestDatabase();
  db = t.db;
});
after(async () => t.cleanup());
beforeEach(async () => {
  org = await createOrganization();
});

// U1: customers are stored as keyed hashes; the tests name them by the emails they come from.
const TEST_CUSTOMERS = ['alice@example.fr', 'bob@example.be', 'carol@example.de', 'eve@example.fr'].concat(
  ['zoe', 'ann', 'ben', 'max'].map((name) => `${name}@example.fr`),
);
function customerName(hash: string | null): string | null {
  if (hash === null) return null;
  const key = customerKeyOf(db.secretKey);
  return TEST_CUSTOMERS.find((email) => customerIdentity(email, key) === hash) ?? `unknown hash ${hash}`;
}

/** Every stored order of the organization, amounts as the exact strings numeric returns. */
async function storedOrders(organizationId = org): Promise<Record<string, unknown>[]> {
  const rows = await db.query<Record<string, unknown> & { created_at: Date }>(
    `SELECT s.address AS store, o.external_id AS id, o.created_at, o.status, o.billing_country,
            o.customer, o.items, o.total, o.tax_total, o.shipping_total, o.fee_total,
            o.refund_total, o.refund_tax, o.refund_shipping
     FROM orders o JOIN stores s ON s.organization_id = o.organization_id AND s.id = o.store_id
     WHERE o.organization_id = $1 ORDER BY s.address, o.external_id`,
    [organizationId],
  );
  return rows.map((row) => ({
    ...row,
    created_at: row.created_at.toISOString(),
    customer: customerName(row.customer as string | null),
  }));
}

async function firstOrders(organizationId = org): Promise<Record<string, string>> {
  const rows = await db.query<{ customer: string; first_order_at: Date }>(
    'SELECT customer, first_order_at FROM customer_first_orders WHERE organization_id = $1 ORDER BY customer',
    [organizationId],
  );
  return Object.fromEntries(rows.map((r) => [customerName(r.customer), r.first_order_at.toISOString()]));
}

async function count(table: string, organizationId = org): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1`,
    [organizationId],
  );
  return rows[0]!.n;
}

const zero = { fee_total: '0.00', refund_total: '0.00', refund_tax: '0.00', refund_shipping: '0.00' };
const NDJSON_ORDERS = [
  {
    store: 'https://boutique.example.fr',
    id: '1001',
    created_at: '2026-03-01T22:30:00.000Z',
    status: 'completed',
    billing_country: 'FR',
    customer: 'alice@example.fr',
    items: 2,
    total: '120.00',
    tax_total: '20.00',
    shipping_total: '4.90',
    ...zero,
  },
  {
    store: 'https://boutique.example.fr',
    id: '1002',
    created_at: '2026-03-02T10:15:00.000Z',
    status: 'processing',
    billing_country: 'BE',
    customer: 'bob@example.be',
    items: 1,
    total: '35.50',
    tax_total: '5.92',
    shipping_total: '0.00',
    ...zero,
  },
  {
    store: 'https://outlet.example.com',
    id: 'A-7',
    created_at: '2026-03-03T13:00:00.123Z',
    status: 'completed',
    billing_country: null,
    customer: null,
    items: 0,
    total: '0.00',
    tax_total: '0.00',
    shipping_total: '0.00',
    ...zero,
  },
  {
    store: 'https://outlet.example.com',
    id: 'A-8',
    created_at: '2026-03-04T12:00:00.000Z',
    status: 'refunded',
    billing_country: null,
    customer: 'alice@example.fr',
    items: 3,
    total: '99.99',
    tax_total: '16.67',
    shipping_total: '5.00',
    fee_total: '0.00',
    refund_total: '99.99',
    refund_tax: '16.67',
    refund_shipping: '5.00',
  },
];

test('I1, I2: an NDJSON file imports every order exactly as sent, amounts as exact decimals', async () => {
  const result = await importOrderFile(db, org, fixture('orders.ndjson'));
  assert.deepEqual(result, {
    imported: 4,
    updated: 0,
    rejected: 0,
    errors: [],
    errorCount: 0,
    refused: false,
  });
  assert.deepEqual(await storedOrders(), NDJSON_ORDERS);
  // U1, U2: alice's two orders on two stores are one customer; the unusable email is anonymous.
  assert.deepEqual(await firstOrders(), {
    'alice@example.fr': '2026-03-01T22:30:00.000Z',
    'bob@example.be': '2026-03-02T10:15:00.000Z',
  });
  assert.equal(await count('import_staging'), 0);
  assert.equal(await count('import_customers'), 0);
});

test('the bulk path (COPY) keeps text exactly: tabs, backslashes, line breaks, quotes, \\N, Unicode', async () => {
  const awkward = [
    'tab\there',
    'back\\slash \\N \\t',
    'line\nbreak\r\nand CR\r',
    `quotes "double" and 'single'`,
    '\\N',
    'NULL',
    'café ✓ 日本語 😀 \u00a0nbsp',
  ];
  const records = awkward.map((text, i) => ({
    // In the query, where the URL rules keep a backslash (finding 5: in the path it is a slash).
    store: `https://shop.example.fr/b%C3%A9?\\${i}`,
    id: `${text}#${i}`,
    created_at: '2026-03-01T10:00:00Z',
    status: text,
    billing_country: 'fr',
    items: 1,
    total: '1.00',
  }));
  const result = await importOrderRecords(db, org, records);
  assert.equal(result.imported, awkward.length);
  const rows = await db.query<{ external_id: string; status: string; address: string }>(
    `SELECT o.external_id, o.status, s.address FROM orders o
     JOIN stores s ON s.organization_id = o.organization_id AND s.id = o.store_id
     WHERE o.organization_id = $1`,
    [org],
  );
  const byId = new Map(rows.map((r) => [r.external_id, r]));
  awkward.forEach((text, i) => {
    const row = byId.get(`${text}#${i}`);
    assert.ok(row, `order ${JSON.stringify(text)} stored under its exact id`);
    assert.equal(row.status, text);
    assert.equal(row.address, records[i]?.store);
  });
  assert.equal(byId.size, awkward.length);
});

test('I2: re-importing the same file replaces the orders and duplicates nothing', async () => {
  await importOrderFile(db, org, fixture('orders.ndjson'));
  const again = await importOrderFile(db, org, fixture('orders.ndjson'));
  assert.deepEqual(again, {
    imported: 0,
    updated: 4,
    rejected: 0,
    errors: [],
    errorCount: 0,
    refused: false,
  });
  assert.deepEqual(await storedOrders(), NDJSON_ORDERS);
  assert.equal(await count('stores'), 2);
});

test('a CSV file with quoted commas and line breaks imports like NDJSON; empty cells are absent', async () => {
  const result = await importOrderFile(db, org, fixture('orders.csv'));
  assert.deepEqual(result, {
    imported: 3,
    updated: 0,
    rejected: 0,
    errors: [],
    errorCount: 0,
    refused: false,
  });
  const [first, second, third] = await storedOrders();
  assert.deepEqual(first, {
    store: 'https://boutique.example.fr',
    id: '2001',
    created_at: '2026-04-01T07:00:00.000Z',
    status: 'completed',
    billing_country: 'DE',
    customer: 'carol@example.de',
    items: 1,
    total: '59.90',
    tax_total: '9.98',
    shipping_total: '4.90',
    ...zero,
  });
  assert.equal(second?.status, 'on hold, awaiting stock');
  assert.equal(second?.billing_country, null);
  assert.equal(second?.customer, null);
  assert.equal(second?.fee_total, '0.35');
  assert.deepEqual(
    [third?.store, third?.total, third?.fee_total, third?.refund_total, third?.refund_tax],
    ['https://shop.example.org', '1200.00', '1.20', '100.00', '16.67'],
  );
});

const INVALID_FILE_ERRORS = [
  { line: 2, field: 'store', message: 'champ obligatoire manquant' },
  { line: 2, field: 'created_at', message: /date invalide « 2026-02-30T10:00:00Z »/ },
  { line: 3, field: '(ligne)', message: /^JSON invalide/ },
  { line: 4, field: 'id', message: 'champ obligatoire manquant' },
  { line: 4, field: 'created_at', message: /date invalide/ },
  { line: 4, field: 'status', message: 'champ obligatoire manquant' },
  { line: 4, field: 'billing_country', message: /pays invalide « FRA »/ },
  { line: 4, field: 'items', message: /quantité invalide « -1 »/ },
  {
    line: 4,
    field: 'total',
    message: 'montant invalide « 1.234 » : nombre décimal ≥ 0 avec au plus 2 décimales attendu',
  },
  { line: 6, field: 'refund_total', message: /dépasse refund_total/ },
  { line: 7, field: '(ligne)', message: 'un objet JSON par ligne attendu' },
];

function assertErrors(actual: unknown, expected: typeof INVALID_FILE_ERRORS): void {
  const list = actual as { line: number; field: string; message: string }[];
  assert.deepEqual(
    list.map(({ line, field }) => ({ line, field })),
    expected.map(({ line, field }) => ({ line, field })),
  );
  expected.forEach(({ message }, i) => {
    if (typeof message === 'string') assert.equal(list[i]!.message, message);
    else assert.match(list[i]!.message, message);
  });
}

test('I1: an invalid file writes nothing and reports every faulty line and field', async () => {
  const result = await importOrderFile(db, org, fixture('invalid.ndjson'));
  assert.equal(result.refused, true);
  assert.deepEqual([result.imported, result.updated, result.rejected], [0, 0, 5]);
  assert.match(refusalMessage(result), /5 ligne\(s\) invalide\(s\)/);
  assertErrors(result.errors, INVALID_FILE_ERRORS);
  assert.equal(result.errorCount, INVALID_FILE_ERRORS.length);
  for (const table of ['orders', 'stores', 'customer_first_orders', 'import_staging', 'import_customers']) {
    assert.equal(await count(table), 0, table);
  }
});

test('I1: skipInvalid imports the valid lines and reports the others', async () => {
  const result = await importOrderFile(db, org, fixture('invalid.ndjson'), { skipInvalid: true });
  assert.deepEqual([result.imported, result.updated, result.rejected], [2, 0, 5]);
  assertErrors(result.errors, INVALID_FILE_ERRORS);
  assert.deepEqual(
    (await storedOrders()).map((o) => [o.store, o.id]),
    [
      ['https://boutique.example.fr', '3001'],
      ['https://outlet.example.com', '3007'],
    ],
  );
});

const order = (id: string, created_at: string, extra: Record<string, unknown> = {}) => ({
  store: 'https://boutique.example.fr',
  id,
  created_at,
  status: 'completed',
  items: 1,
  total: '10.00',
  ...extra,
});

test('I2: when an order appears twice in a file the last line wins', async () => {
  const result = await importOrderRecords(db, org, [
    order('1', '2026-01-01T00:00:00Z', { total: '1.00' }),
    order('2', '2026-01-01T00:00:00Z'),
    order('1', '2026-01-02T00:00:00Z', { total: '2.00' }),
  ]);
  assert.deepEqual([result.imported, result.updated], [2, 0]);
  const stored = await storedOrders();
  assert.deepEqual(
    stored.map((o) => [o.id, o.total, o.created_at]),
    [
      ['1', '2.00', '2026-01-02T00:00:00.000Z'],
      ['2', '10.00', '2026-01-01T00:00:00.000Z'],
    ],
  );
});

test('I2: a file repeating an order into an organization that has orders: the last line wins', async () => {
  await importOrderRecords(db, org, [
    order('1', '2026-01-01T00:00:00Z', { customer_email: 'ann@example.fr' }),
  ]);
  const result = await importOrderRecords(db, org, [
    order('1', '2026-01-03T00:00:00Z', { total: '1.00', customer_email: 'ben@example.fr' }),
    order('2', '2026-01-02T00:00:00Z', { total: '2.00', customer_email: 'ann@example.fr' }),
    order('1', '2026-01-04T00:00:00Z', { total: '3.00', customer_email: 'max@example.fr' }),
    order('2', '2026-01-05T00:00:00Z', { total: '4.00', customer_email: 'ann@example.fr' }),
  ]);
  assert.deepEqual([result.imported, result.updated], [1, 1]);
  assert.deepEqual(
    (await storedOrders()).map((o) => [o.id, o.total, o.created_at, o.customer]),
    [
      ['1', '3.00', '2026-01-04T00:00:00.000Z', 'max@example.fr'],
      ['2', '4.00', '2026-01-05T00:00:00.000Z', 'ann@example.fr'],
    ],
  );
  // U2: ann's first order moved to her remaining one, ben never had one, max has his.
  assert.deepEqual(await firstOrders(), {
    'ann@example.fr': '2026-01-05T00:00:00.000Z',
    'max@example.fr': '2026-01-04T00:00:00.000Z',
  });
});

/** `count` orders, one a line, then `tail`: enough lines for several COPY batches (STAGING_BATCH). */
async function* manyOrders(count: number, tail: Record<string, unknown>[] = []) {
  for (let i = 1; i <= count; i++)
    yield order(`m${i}`, '2026-02-01T00:00:00Z', { customer_email: i % 2 ? 'zoe@example.fr' : undefined });
  yield* tail;
}

test('I2: a re-import rewrites only the orders that changed; the others, data version included, stay as they were', async () => {
  await importOrderRecords(db, org, [
    order('1', '2026-01-01T00:00:00Z', { customer_email: 'ann@example.fr' }),
    order('2', '2026-01-02T00:00:00Z', { customer_email: 'ben@example.fr' }),
  ]);
  const written = async () =>
    Object.fromEntries(
      (
        await db.query<{ id: string; updated_at: Date }>(
          'SELECT external_id AS id, updated_at FROM orders WHERE organization_id = $1',
          [org],
        )
      ).map((row) => [row.id, row.updated_at.toISOString()]),
    );
  const before = await written();
  const version = await dataVersion();
  const same = await importOrderRecords(db, org, [
    order('1', '2026-01-01T00:00:00Z', { customer_email: 'ann@example.fr' }),
    order('2', '2026-01-02T00:00:00Z', { customer_email: 'ben@example.fr' }),
  ]);
  assert.deepEqual([same.imported, same.updated], [0, 2], 'both orders were in the file');
  assert.deepEqual(await written(), before, 'no order rewritten');
  assert.equal(await dataVersion(), version, 'nothing changed: the snapshot and cache stay valid');
  const changed = await importOrderRecords(db, org, [
    order('1', '2026-01-01T00:00:00Z', { customer_email: 'ann@example.fr' }),
    order('2', '2026-01-02T00:00:00Z', { customer_email: 'ben@example.fr', total: '11.00' }),
    order('3', '2026-01-03T00:00:00Z', { customer_email: 'ann@example.fr' }),
  ]);
  assert.deepEqual([changed.imported, changed.updated], [1, 2]);
  const after = await written();
  assert.equal(after['1'], before['1'], 'order 1 as it was');
  assert.notEqual(after['2'], before['2'], 'order 2 replaced');
  assert.ok(BigInt(await dataVersion()) > BigInt(version));
  assert.deepEqual(
    (await storedOrders()).map((o) => [o.id, o.total]),
    [
      ['1', '10.00'],
      ['2', '11.00'],
      ['3', '10.00'],
    ],
  );
});

test('I2: into an organization with orders, the last line wins even when it gives the order as stored', async () => {
  await importOrderRecords(db, org, [
    order('1', '2026-01-01T00:00:00Z', { customer_email: 'ann@example.fr' }),
  ]);
  const result = await importOrderRecords(db, org, [
    order('1', '2026-01-05T00:00:00Z', { total: '99.00', customer_email: 'ben@example.fr' }),
    order('2', '2026-01-06T00:00:00Z'),
    order('1', '2026-01-01T00:00:00Z', { customer_email: 'ann@example.fr' }),
  ]);
  assert.deepEqual([result.imported, result.updated], [1, 1]);
  assert.deepEqual(
    (await storedOrders()).map((o) => [o.id, o.total, o.created_at, o.customer]),
    [
      ['1', '10.00', '2026-01-01T00:00:00.000Z', 'ann@example.fr'],
      ['2', '10.00', '2026-01-06T00:00:00.000Z', null],
    ],
  );
  assert.deepEqual(await firstOrders(), { 'ann@example.fr': '2026-01-01T00:00:00.000Z' });
});

test('I2, U2: an order repeated in another staging batch of the file: the last line wins, first orders exact', async () => {
  // On a PostgreSQL server the first batches go into orders while the rest is read: the repeat
  // makes that transaction roll back, and the file is merged once read.
  const result = await importOrderRecords(
    db,
    org,
    manyOrders(STAGING_BATCH + 10, [
      order('m1', '2026-01-15T00:00:00Z', { total: '7.00', customer_email: 'ben@example.fr' }),
    ]),
  );
  assert.deepEqual([result.imported, result.updated, result.rejected], [STAGING_BATCH + 10, 0, 0]);
  const [first] = await db.query<{ total: string; created_at: Date }>(
    `SELECT total, created_at FROM orders WHERE organization_id = $1 AND external_id = 'm1'`,
    [org],
  );
  assert.deepEqual([first?.total, first?.created_at.toISOString()], ['7.00', '2026-01-15T00:00:00.000Z']);
  assert.deepEqual(await firstOrders(), {
    'ben@example.fr': '2026-01-15T00:00:00.000Z',
    'zoe@example.fr': '2026-02-01T00:00:00.000Z',
  });
  assert.deepEqual(await importLinesTables(db), [], 'the staged lines are dropped');
});

async function dataVersion(organizationId = org): Promise<string> {
  const [row] = await db.query<{ data_version: string }>(
    'SELECT data_version FROM organizations WHERE id = $1',
    [organizationId],
  );
  return String(row?.data_version);
}

test('I1: a file refused after batches were stored (on a server: written) leaves nothing, data version included', async () => {
  const before = await dataVersion();
  let midImport: string | undefined;
  let written: boolean | undefined;
  async function* lines() {
    yield* manyOrders(2 * STAGING_BATCH);
    midImport = await dataVersion(); // the first batch is stored by now
    if (engine === 'postgres') written = await ordersBeingWritten(db);
    yield { ...order('bad', '2026-02-01T00:00:00Z'), total: '-1' };
    yield* manyOrders(10);
  }
  const result = await importOrderRecords(db, org, lines());
  assert.equal(result.refused, true);
  assert.deepEqual(result.errors, [
    {
      line: 2 * STAGING_BATCH + 1,
      field: 'total',
      message: 'montant invalide « -1 » : nombre décimal ≥ 0 avec au plus 2 décimales attendu',
    },
  ]);
  if (engine === 'postgres') assert.equal(written, true, 'its first batch was going into orders');
  for (const table of ['orders', 'stores', 'customer_first_orders'])
    assert.equal(await count(table), 0, table);
  assert.deepEqual([midImport, await dataVersion()], [before, before]);
  assert.deepEqual(await importLinesTables(db), []);
});

test('data_version: an import moves it when it commits, not before (other sessions never see it early)', async () => {
  const before = await dataVersion();
  let midImport: string | undefined;
  async function* lines() {
    yield* manyOrders(2 * STAGING_BATCH);
    midImport = await dataVersion();
  }
  await importOrderRecords(db, org, lines());
  assert.equal(midImport, before);
  assert.ok(BigInt(await dataVersion()) > BigInt(before));
});

test('data_version: one move per organization and transaction; a savepoint rolled back takes its move back (migration 009)', async () => {
  const other = await createOrganization();
  const [orgBefore, otherBefore] = [BigInt(await dataVersion()), BigInt(await dataVersion(other))];
  const store = (organizationId: string, address: string) => ({
    sql: 'INSERT INTO stores (organization_id, address) VALUES ($1, $2)',
    params: [organizationId, address],
  });
  await db.transaction(async (tx) => {
    for (const address of ['https://a.example', 'https://b.example']) {
      const { sql, params } = store(org, address);
      await tx.query(sql, params);
    }
    await tx.query('SAVEPOINT one');
    await tx.query(store(other, 'https://c.example').sql, store(other, 'https://c.example').params);
    await tx.query('ROLLBACK TO SAVEPOINT one');
    await tx.query(store(other, 'https://d.example').sql, store(other, 'https://d.example').params);
    await tx.query(`DELETE FROM stores WHERE organization_id = $1 AND address = 'https://a.example'`, [org]);
  });
  assert.deepEqual(
    [BigInt(await dataVersion()) - orgBefore, BigInt(await dataVersion(other)) - otherBefore],
    [1n, 1n],
  );
  // The next transaction moves it again.
  await db.query(store(org, 'https://e.example').sql, store(org, 'https://e.example').params);
  assert.equal(BigInt(await dataVersion()) - orgBefore, 2n);
});

test('U2, S1: an earliest order with an excluded status is not a first order', async () => {
  await importOrderRecords(db, org, [
    order('1', '2026-01-01T00:00:00Z', { customer_email: 'eve@example.fr', status: 'cancelled' }),
    order('2', '2026-01-05T00:00:00Z', { customer_email: 'eve@example.fr' }),
    order('3', '2026-01-03T00:00:00Z', { customer_email: 'zoe@example.fr', status: 'pending' }),
  ]);
  // zoe has no counted order: no first order at all.
  assert.deepEqual(await firstOrders(), { 'eve@example.fr': '2026-01-05T00:00:00.000Z' });
  // S1, I2: after a settings change, refreshing all customers follows the new list.
  await db.query(`UPDATE organizations SET excluded_statuses = '{}' WHERE id = $1`, [org]);
  await db.transaction((tx) => refreshFirstOrders(tx, org, 'all'));
  assert.deepEqual(await firstOrders(), {
    'eve@example.fr': '2026-01-01T00:00:00.000Z',
    'zoe@example.fr': '2026-01-03T00:00:00.000Z',
  });
});

test("U2, I2: a replaced order whose email changed moves the old customer's first order", async () => {
  await importOrderRecords(db, org, [
    order('1', '2026-01-01T00:00:00Z', { customer_email: 'ann@example.fr' }),
    order('2', '2026-02-01T00:00:00Z', { customer_email: 'ann@example.fr' }),
    order('3', '2026-03-01T00:00:00Z', { customer_email: 'max@example.fr' }),
  ]);
  const result = await importOrderRecords(db, org, [
    order('1', '2026-01-01T00:00:00Z', { customer_email: 'ben@example.fr' }),
    order('3', '2026-03-01T00:00:00Z', { customer_email: 'not usable' }),
  ]);
  assert.deepEqual([result.imported, result.updated], [0, 2]);
  // ann's first order is now her second one; max's only order became anonymous.
  assert.deepEqual(await firstOrders(), {
    'ann@example.fr': '2026-02-01T00:00:00.000Z',
    'ben@example.fr': '2026-01-01T00:00:00.000Z',
  });
});

test('stores are connected on first sight, one store whatever its trailing slash', async () => {
  await db.query(`INSERT INTO stores (organization_id, address) VALUES ($1, 'https://known.example.fr')`, [
    org,
  ]);
  await importOrderRecords(db, org, [
    order('1', '2026-01-01T00:00:00Z', { store: 'https://known.example.fr/' }),
    order('2', '2026-01-01T00:00:00Z', { store: ' https://new.example.fr// ' }),
    order('3', '2026-01-01T00:00:00Z', { store: 'https://new.example.fr' }),
  ]);
  const stores = await db.query<{ address: string }>(
    'SELECT address FROM stores WHERE organization_id = $1 ORDER BY address',
    [org],
  );
  assert.deepEqual(
    stores.map((s) => s.address),
    ['https://known.example.fr', 'https://new.example.fr'],
  );
});

test('a store added while an import is to write the same address: neither fails, one store each (lock order)', async () => {
  // On a server, a first import writes its orders (and their stores) while it reads; a store
  // added meanwhile waited for the organization's row while holding its new store, which the
  // import then waited for: a deadlock, one of the two aborted. Now both lock the row first.
  let added: Promise<unknown> | undefined;
  async function* lines() {
    yield* manyOrders(2 * STAGING_BATCH);
    if (engine === 'postgres') assert.equal(await ordersBeingWritten(db), true);
    // A store the import has not written yet, but will with its last line.
    added = addStore(db, org, 'https://late.example.fr').catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the store add reaches its wait
    yield order('last', '2026-02-02T00:00:00Z', { store: 'https://late.example.fr' });
  }
  const result = await importOrderRecords(db, org, lines());
  assert.deepEqual([result.imported, result.refused], [2 * STAGING_BATCH + 1, false]);
  const outcome = await added;
  // It either came first (the import then found the store) or after (the store was there).
  if (outcome instanceof Error)
    assert.equal((outcome as { code?: string }).code, 'CONFLICT', String(outcome));
  else assert.equal(outcome, 'https://late.example.fr');
  assert.equal(await count('stores'), 2);
  assert.equal(await count('orders'), 2 * STAGING_BATCH + 1);
});

test("tenancy: one organization's import never touches another organization's rows", async () => {
  const other = await createOrganization();
  await importOrderFile(db, other, fixture('orders.ndjson'));
  const before = [await storedOrders(other), await firstOrders(other), await count('stores', other)];
  // Same stores and ids, other customers, then a replacement and a refused file.
  await importOrderRecords(db, org, [
    order('1001', '2025-01-01T00:00:00Z', { customer_email: 'alice@example.fr', total: '1.00' }),
  ]);
  await importOrderRecords(db, org, [
    order('1001', '2025-01-02T00:00:00Z', { customer_email: 'bob@example.be' }),
  ]);
  assert.equal((await importOrderFile(db, org, fixture('invalid.ndjson'))).refused, true);
  assert.deepEqual(
    [await storedOrders(other), await firstOrders(other), await count('stores', other)],
    before,
  );
  assert.deepEqual(await firstOrders(), { 'bob@example.be': '2025-01-02T00:00:00.000Z' });
});

test('I1, finding 7: staged rows of a killed import (its heartbeat stopped) are cleared by the next import; a live one keeps its rows', async () => {
  const stage = (importId: string) =>
    db.query(
      `INSERT INTO import_staging (organization_id, import_id, line, store_address, external_id, created_at, status,
         items, total, tax_total, shipping_total, fee_total, refund_total, refund_tax, refund_shipping)
       VALUES ($1, $2, 1, 'https://x.example', '1', now(), 'completed', 1, 1, 0, 0, 0, 0, 0, 0)`,
      [org, importId],
    );
  const job = (importId: string, silentFor: string) =>
    db.query(
      `INSERT INTO import_jobs (id, organization_id, origin, state, heartbeat_at)
       VALUES ($1, $2, 'cli', 'running', now() - $3::interval)`,
      [importId, org, silentFor],
    );
  await job('00000000-0000-4000-8000-000000000001', '5 minutes'); // killed
  await stage('00000000-0000-4000-8000-000000000001');
  await job('00000000-0000-4000-8000-000000000002', '1 second'); // an import still running
  await stage('00000000-0000-4000-8000-000000000002');
  await stage('00000000-0000-4000-8000-000000000003'); // rows of no job at all
  await importOrderRecords(db, org, [order('1', '2026-01-01T00:00:00Z')]);
  const left = await db.query<{ import_id: string }>(
    'SELECT import_id FROM import_staging WHERE organization_id = $1',
    [org],
  );
  assert.deepEqual(
    left.map((r) => r.import_id),
    ['00000000-0000-4000-8000-000000000002'],
  );
  const jobs = await db.query<{ id: string; state: string }>(
    'SELECT id, state FROM import_jobs WHERE organization_id = $1 ORDER BY created_at, id',
    [org],
  );
  assert.deepEqual(
    jobs.filter((j) => j.id.startsWith('00000000')).map((j) => j.state),
    ['failed', 'running'],
  );
  assert.equal(jobs.filter((j) => j.state === 'succeeded').length, 1, 'the import itself is a job');
  assert.equal(await count('orders'), 1);
});

test('I1, finding 7: the staging table of a killed import (its heartbeat stopped) is dropped by the next import; a live one keeps its table', async () => {
  const job = (importId: string, silentFor: string) =>
    db.query(
      `INSERT INTO import_jobs (id, organization_id, origin, state, heartbeat_at)
       VALUES ($1, $2, 'cli', 'running', now() - $3::interval)`,
      [importId, org, silentFor],
    );
  const killed = '00000000-0000-4000-8000-0000000000a1';
  const live = '00000000-0000-4000-8000-0000000000a2';
  const jobless = '00000000-0000-4000-8000-0000000000a3';
  await job(killed, '5 minutes');
  await job(live, '1 second');
  for (const importId of [killed, live, jobless]) await createImportLines(db, importId, { byLine: false });
  await importOrderRecords(db, org, [order('1', '2026-01-01T00:00:00Z')]);
  // One organization's import leaves alone what it cannot tell is dead: a table without a job.
  assert.deepEqual((await importLinesTables(db)).sort(), [live, jobless]);
  // The server's start (every organization): a table whose job is gone goes too.
  await recoverInterruptedImports(db, { everyJob: false });
  assert.deepEqual(await importLinesTables(db), [live]);
  await db.query(`UPDATE import_jobs SET state = 'succeeded' WHERE id = $1`, [live]);
  await recoverInterruptedImports(db, { organizationId: org });
  assert.deepEqual(await importLinesTables(db), []);
  assert.equal(await count('orders'), 1);
});

test('finding 7: a running import beats every 2 s even while no line arrives (a long merge is no killed import)', async () => {
  const heartbeat = async () => {
    const [job] = await db.query<{ heartbeat_at: Date; lines_read: number }>(
      `SELECT heartbeat_at, lines_read FROM import_jobs WHERE organization_id = $1 AND state = 'running'`,
      [org],
    );
    assert.ok(job, 'the import runs');
    return job;
  };
  let beats: { heartbeat_at: Date; lines_read: number }[] = [];
  async function* lines() {
    yield order('1', '2026-01-01T00:00:00Z');
    yield order('2', '2026-01-01T00:00:00Z');
    beats = [await heartbeat()];
    await new Promise((resolve) => setTimeout(resolve, 2_600)); // nothing read meanwhile
    beats.push(await heartbeat());
  }
  await importOrderRecords(db, org, lines());
  const [before, after] = beats;
  assert.ok(after && before && after.heartbeat_at > before.heartbeat_at, 'it beat while waiting');
  assert.equal(Number(after?.lines_read), 2, 'with the lines read so far');
});

test('importOrderStream reads CSV from any stream; a missing file is NOT_FOUND', async () => {
  const csv =
    'store,id,created_at,status,items,total\nhttps://s.example,1,2026-01-01T00:00:00Z,completed,1,5\n';
  const result = await importOrderStream(db, org, Readable.from([csv]), 'csv');
  assert.deepEqual(result, {
    imported: 1,
    updated: 0,
    rejected: 0,
    errors: [],
    errorCount: 0,
    refused: false,
  });
  await assert.rejects(importOrderFile(db, org, fixture('missing.ndjson')), { code: 'NOT_FOUND' });
});

test('I3: onProgress reports the lines read and a rate about every half second', async () => {
  async function* slowly() {
    for (let i = 1; i <= 600; i++) {
      if (i === 257) await new Promise((resolve) => setTimeout(resolve, 600));
      yield order(String(i), '2026-01-01T00:00:00Z');
    }
  }
  const seen: { lines: number; ordersPerSecond: number }[] = [];
  const result = await importOrderRecords(db, org, slowly(), { onProgress: (p) => seen.push(p) });
  assert.equal(result.imported, 600);
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.lines, 512);
  assert.ok(seen[0]!.ordersPerSecond > 0);
});

// Issue 18, finding 3: what a job row says matches what was written, whatever the file holds.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'import-test-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

function writeFile(name: string, content: string | Buffer): string {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, content);
  return file;
}

/** The organization's latest job, as its page reads it. */
async function latestJob(organizationId = org): Promise<ImportJob> {
  const [row] = await db.query<{ id: string }>(
    'SELECT id FROM import_jobs WHERE organization_id = $1 ORDER BY created_at DESC LIMIT 1',
    [organizationId],
  );
  const job = row && (await findJob(db, organizationId, row.id));
  assert.ok(job, 'a job row');
  return job;
}

const NUL_REFUSED = 'caractère nul (U+0000) interdit : la base de données ne peut pas le garder';
const line = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify(order(id, '2026-01-01T00:00:00Z', extra));
// A NUL byte on a line of its own, a `\u0000` escape in a status and in a field no one reads.
const NUL_FILE = [
  line('1'),
  '\u0000',
  line('3', { status: 'a\u0000b' }),
  line('4', { note: 'x\u0000' }),
  line('5'),
];

test('issue 18, finding 3, I1: a NUL, raw or escaped, is an error on its line; the job says refused, with the lines', async () => {
  const result = await importOrderFile(db, org, writeFile('nul.ndjson', `${NUL_FILE.join('\n')}\n`));
  assert.equal(result.refused, true);
  assert.deepEqual(
    result.errors.map((e) => [e.line, e.field, e.message]),
    [
      [2, '(ligne)', NUL_REFUSED],
      [3, 'status', NUL_REFUSED],
      [4, 'note', NUL_REFUSED],
    ],
  );
  const job = await latestJob();
  assert.deepEqual(
    [job.state, job.linesRead, job.imported, job.rejected, job.errors.length, job.message],
    ['refused', 5, 0, 3, 3, null],
  );
  assert.equal(job.errors[0]?.line, 2);
  assert.equal(await count('orders'), 0);
});

test('issue 18, finding 3, I1: with skipInvalid, a file with NUL lines imports the others and its job says succeeded, then and after a restart', async () => {
  const result = await importOrderFile(db, org, writeFile('nul-skip.ndjson', NUL_FILE.join('\n')), {
    skipInvalid: true,
  });
  assert.deepEqual([result.imported, result.rejected, result.refused], [2, 3, false]);
  const check = async () => {
    const job = await latestJob();
    assert.deepEqual(
      [job.state, job.linesRead, job.imported, job.updated, job.rejected, job.errorCount, job.message],
      ['succeeded', 5, 2, 0, 3, 3, null],
    );
    assert.deepEqual(
      job.errors.map((e) => e.line),
      [2, 3, 4],
    );
  };
  await check();
  // A restart marks every unfinished job as interrupted: this one is finished.
  await recoverInterruptedImports(db, { everyJob: true });
  await check();
  assert.equal(await count('orders'), 2);
});

test('issue 18, finding 3: a UTF-16 file is refused whole at once, by name, skipInvalid or not; its job says why', async () => {
  const ndjson = `${line('1')}\n${line('2')}\n`;
  const csv = 'store,id,created_at,status,items,total\nhttps://s.example,1,2026-01-01T00:00:00Z,ok,1,5\n';
  const files = [
    writeFile('utf16.ndjson', Buffer.from(`\uFEFF${ndjson}`, 'utf16le')),
    writeFile('utf16-no-mark.csv', Buffer.from(csv, 'utf16le')),
    writeFile('utf16be.csv', Buffer.from(`\uFEFF${csv}`, 'utf16le').swap16()),
  ];
  for (const file of files) {
    for (const skipInvalid of [false, true]) {
      const result = await importOrderFile(db, org, file, { skipInvalid });
      const name = `${path.basename(file)}, skipInvalid ${skipInvalid}`;
      assert.equal(result.refused, true, name);
      assert.match(
        result.fileError ?? '',
        /^le fichier est en UTF-16 [LB]E, pas en UTF-8 .* enregistrez-le en UTF-8/,
        name,
      );
      assert.deepEqual(
        result.errors.map((e) => [e.line, e.field]),
        [[1, '(fichier)']],
        name,
      );
      assert.match(
        refusalMessage(result),
        /^Import refusé : le fichier est en UTF-16 .* aucune commande n'a été importée$/,
      );
      const job = await latestJob();
      assert.deepEqual([job.state, job.imported, job.message], ['refused', 0, result.fileError], name);
    }
  }
  assert.equal(await count('orders'), 0);
});

test('issue 18, finding 3: bytes that are not UTF-8 refuse the whole file, skipInvalid or not, though lines before them were valid', async () => {
  const lines = Array.from({ length: 3000 }, (_, i) => line(String(i + 1)));
  const file = writeFile(
    'latin1.ndjson',
    Buffer.concat([
      Buffer.from(`${lines.join('\n')}\n`),
      Buffer.from('{"status":"r\xe9gl\xe9"}\n', 'latin1'),
    ]),
  );
  const result = await importOrderFile(db, org, file, { skipInvalid: true });
  assert.equal(result.refused, true);
  assert.deepEqual(
    result.errors.map((e) => [e.line, e.field]),
    [[3001, '(fichier)']],
  );
  assert.match(result.fileError ?? '', /^le fichier n’est pas en UTF-8/);
  assert.equal((await latestJob()).state, 'refused');
  assert.equal(await count('orders'), 0, 'I1: nothing written, on a server not even streamed orders');
});

test('issue 18, findings 4, 6: the same rules in NDJSON and CSV: year 10000 in UTC, a lone surrogate, blanks around an amount or items', async () => {
  const header = 'store,id,created_at,status,items,total,tax_total';
  const csv = [
    header,
    'https://s.example,1,9999-12-31T23:30:00-01:00,ok,1,5,',
    'https://s.example,2,0001-01-01T00:30:00+01:00,ok,1,5,',
    'https://s.example,3,2026-01-01T00:00:00Z,ok,1, 5,',
    'https://s.example,4,2026-01-01T00:00:00Z,ok,1,5,5 ',
    'https://s.example,5,2026-01-01T00:00:00Z,ok, 1,5,',
    'https://s.example,6,9999-12-31T23:30:00+01:00,ok,1,5,',
  ].join('\n');
  const ndjson = [
    line('1', { created_at: '9999-12-31T23:30:00-01:00' }),
    line('2', { created_at: '0001-01-01T00:30:00+01:00' }),
    line('3', { total: ' 5' }),
    line('4', { tax_total: '5 ' }),
    line('5', { items: ' 1' }),
    line('6', { created_at: '9999-12-31T23:30:00+01:00' }),
    '{"store":"https://s.example","id":"7","created_at":"2026-01-01T00:00:00Z","status":"\\ud800x","items":1,"total":"5"}',
  ].join('\n');
  for (const [name, content, lineOf] of [
    ['rules.csv', csv, (n: number) => n + 1],
    ['rules.ndjson', ndjson, (n: number) => n],
  ] as const) {
    const result = await importOrderFile(db, org, writeFile(name, content), { skipInvalid: true });
    const expected: [number, string][] = [
      [lineOf(1), 'created_at'],
      [lineOf(2), 'created_at'],
      [lineOf(3), 'total'],
      [lineOf(4), 'tax_total'],
      [lineOf(5), 'items'],
    ];
    if (name.endsWith('.ndjson')) expected.push([7, 'status']);
    assert.deepEqual(
      result.errors.map((e) => [e.line, e.field]),
      expected,
      name,
    );
    assert.match(result.errors[0]!.message, /^date hors limites/);
    assert.match(result.errors[2]!.message, /pas d’espace avant ou après le nombre$/);
    assert.deepEqual([result.imported + result.updated, result.rejected], [1, expected.length], name);
  }
  const stored = await storedOrders();
  assert.deepEqual(
    stored.map((o) => [o.id, o.created_at, o.status]),
    [
      ['6', '9999-12-31T22:30:00.000Z', 'completed'],
      ['6', '9999-12-31T22:30:00.000Z', 'ok'],
    ],
    'only the instant inside 9999; no status stored as U+FFFD',
  );
});

for (const into of ['an organization without orders', 'an organization with orders']) {
  test(`issue 18, finding 3: into ${into}, when its result cannot be recorded the import writes nothing and its job says failed`, async () => {
    if (into.endsWith('with orders')) await importOrderRecords(db, org, [order('0', '2026-01-01T00:00:00Z')]);
    const before = await count('orders');
    // A fault of the database on the job row's update to succeeded (a real trigger, nothing mocked).
    await db.query(`CREATE OR REPLACE FUNCTION refuse_success() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.state = 'succeeded' AND NEW.organization_id = ${Number(org)} THEN
          RAISE EXCEPTION 'job row cannot be written';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(`CREATE TRIGGER refuse_success BEFORE UPDATE ON import_jobs
      FOR EACH ROW EXECUTE FUNCTION refuse_success()`);
    try {
      const file = writeFile('ok.ndjson', [line('1'), line('2')].join('\n'));
      await assert.rejects(importOrderFile(db, org, file));
    } finally {
      await db.query('DROP TRIGGER refuse_success ON import_jobs');
      await db.query('DROP FUNCTION refuse_success()');
    }
    assert.equal(await count('orders'), before, 'the orders went with the job row');
    const job = await latestJob();
    assert.deepEqual([job.state, job.message], ['failed', FAILED]);
    await recoverInterruptedImports(db, { everyJob: true });
    assert.equal((await latestJob()).state, 'failed');
  });
}

test('issue 18, finding 3: a restart says a killed file import wrote nothing, and a killed connector pass kept its pages', async () => {
  const file = '00000000-0000-4000-8000-0000000000b1';
  const pass = '00000000-0000-4000-8000-0000000000b2';
  for (const [id, origin] of [
    [file, 'cli'],
    [pass, 'connector'],
  ])
    await db.query(
      `INSERT INTO import_jobs (id, organization_id, origin, state, heartbeat_at) VALUES ($1, $2, $3, 'running', now())`,
      [id, org, origin],
    );
  await recoverInterruptedImports(db, { everyJob: true });
  const message = async (id: string) => (await findJob(db, org, id))?.message;
  assert.equal(await message(file), INTERRUPTED);
  assert.equal(await message(pass), INTERRUPTED_PASS);
});
