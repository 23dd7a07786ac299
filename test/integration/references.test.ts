// Migration 011: the references of orders to their store and of first orders to their
// organization are checked once a statement instead of once a row; the guarantees stay those of
// the foreign keys they replace (existence, ON DELETE CASCADE, a referenced key kept).
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../src/db/database.js';
import { errorFields } from '../../src/errors.js';
import { engine, openTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
let db: Database;
let org: string;
let store: string;
let slugs = 0;

before(async () => {
  t = await openTestDatabase();
  db = t.db;
});
after(async () => t.cleanup());
beforeEach(async () => {
  const [row] = await db.query<{ id: string }>(
    'INSERT INTO organizations (slug, name) VALUES ($1, $2) RETURNING id',
    [`references-${++slugs}`, 'References'],
  );
  org = row!.id;
  const [created] = await db.query<{ id: string }>(
    `INSERT INTO stores (organization_id, address) VALUES ($1, 'https://a.example') RETURNING id`,
    [org],
  );
  store = created!.id;
});

const INSERT_ORDER = `INSERT INTO orders (organization_id, store_id, external_id, created_at, status, items, total)
  VALUES ($1, $2, $3, '2026-01-01T00:00:00Z', 'completed', 1, 10)`;
const INSERT_FIRST_ORDER = `INSERT INTO customer_first_orders (organization_id, customer, first_order_at)
  VALUES ($1, $2, '2026-01-01T00:00:00Z')`;

async function count(sql: string, params: unknown[]): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql, params);
  return row?.n ?? -1;
}

/** The SQLSTATE a statement fails with. */
async function failure(sql: string, params: unknown[]): Promise<string | undefined> {
  try {
    await db.query(sql, params);
  } catch (error) {
    return errorFields(error).code;
  }
  assert.fail(`${sql.slice(0, 60)}… succeeded`);
}

test('an order of a store that does not exist is refused (23503), alone or among valid ones', async () => {
  assert.equal(await failure(INSERT_ORDER, [org, '999999', 'x']), '23503');
  // Another organization's store is no store of this one.
  const [other] = await db.query<{ id: string }>(
    `INSERT INTO organizations (slug, name) VALUES ($1, 'Other') RETURNING id`,
    [`references-other-${slugs}`],
  );
  assert.equal(await failure(INSERT_ORDER, [other!.id, store, 'y']), '23503');
  const many = `INSERT INTO orders (organization_id, store_id, external_id, created_at, status, items, total)
    SELECT $1, s, 'o' || s, now(), 'completed', 1, 1 FROM unnest($2::bigint[]) AS s`;
  assert.equal(await failure(many, [org, [store, '999999']]), '23503');
  assert.equal(await count('SELECT count(*)::int AS n FROM orders WHERE organization_id = $1', [org]), 0);
  await db.query(INSERT_ORDER, [org, store, 'ok']);
  assert.equal(
    await failure(`UPDATE orders SET store_id = 999999 WHERE organization_id = $1`, [org]),
    '23503',
    'an update too',
  );
});

test('deleting a store deletes its orders, and deleting an organization its stores, orders and first orders', async () => {
  const [second] = await db.query<{ id: string }>(
    `INSERT INTO stores (organization_id, address) VALUES ($1, 'https://b.example') RETURNING id`,
    [org],
  );
  await db.query(INSERT_ORDER, [org, store, '1']);
  await db.query(INSERT_ORDER, [org, second!.id, '2']);
  await db.query(INSERT_FIRST_ORDER, [org, 'c1']);
  await db.query('DELETE FROM stores WHERE organization_id = $1 AND id = $2', [org, store]);
  const orders = 'SELECT count(*)::int AS n FROM orders WHERE organization_id = $1';
  assert.equal(await count(orders, [org]), 1, "the other store's order stays");
  await db.query('DELETE FROM organizations WHERE id = $1', [org]);
  assert.equal(await count(orders, [org]), 0);
  assert.equal(await count('SELECT count(*)::int AS n FROM stores WHERE organization_id = $1', [org]), 0);
  assert.equal(
    await count('SELECT count(*)::int AS n FROM customer_first_orders WHERE organization_id = $1', [org]),
    0,
  );
});

test('first orders of an organization that does not exist are refused (23503)', async () => {
  assert.equal(await failure(INSERT_FIRST_ORDER, ['999999', 'c']), '23503');
  await db.query(INSERT_FIRST_ORDER, [org, 'c']);
  assert.equal(
    await failure('UPDATE customer_first_orders SET organization_id = 999999 WHERE organization_id = $1', [
      org,
    ]),
    '23503',
  );
});

test('a referenced store cannot move to another organization (NO ACTION); an unreferenced one can', async () => {
  const [other] = await db.query<{ id: string }>(
    `INSERT INTO organizations (slug, name) VALUES ($1, 'Other') RETURNING id`,
    [`references-moved-${slugs}`],
  );
  const [second] = await db.query<{ id: string }>(
    `INSERT INTO stores (organization_id, address) VALUES ($1, 'https://b.example') RETURNING id`,
    [org],
  );
  await db.query(INSERT_ORDER, [org, store, '1']);
  const move = 'UPDATE stores SET organization_id = $3 WHERE organization_id = $1 AND id = $2';
  assert.equal(await failure(move, [org, store, other!.id]), '23503');
  await db.query(move, [org, second!.id, other!.id]);
  await db.query(`UPDATE stores SET address = 'https://c.example' WHERE organization_id = $1 AND id = $2`, [
    org,
    store,
  ]);
});

test(`a store's deletion waits for the import that refers to it, then takes its orders (${engine})`, async () => {
  // The check locks the referenced store as a foreign key did: a deletion started while the
  // inserting transaction runs waits for it, then cascades to what it committed.
  let deleted: Promise<unknown> | undefined;
  await db.transaction(async (tx) => {
    await tx.query(INSERT_ORDER, [org, store, 'in-flight']);
    if (engine === 'postgres') {
      deleted = db.query('DELETE FROM stores WHERE organization_id = $1 AND id = $2', [org, store]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const [waiting] = await tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
      );
      assert.equal(waiting?.n, 1, 'the deletion waits');
    }
  });
  if (deleted === undefined)
    await db.query('DELETE FROM stores WHERE organization_id = $1 AND id = $2', [org, store]);
  else await deleted;
  assert.equal(await count('SELECT count(*)::int AS n FROM orders WHERE organization_id = $1', [org]), 0);
});

test('a cascade refuses to run outside READ COMMITTED, where it could miss rows committed meanwhile (0A000)', async () => {
  await db.query(INSERT_ORDER, [org, store, '1']);
  let code: string | undefined;
  try {
    await db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await tx.query('DELETE FROM stores WHERE organization_id = $1 AND id = $2', [org, store]);
    });
  } catch (error) {
    code = errorFields(error).code;
  }
  assert.equal(code, '0A000');
  assert.equal(await count('SELECT count(*)::int AS n FROM orders WHERE organization_id = $1', [org]), 1);
});

test('TRUNCATE of stores (with CASCADE) or organizations leaves no order or first order behind', async () => {
  await db.query(INSERT_ORDER, [org, store, '1']);
  await db.query(INSERT_FIRST_ORDER, [org, 'c']);
  const firstOrders = 'SELECT count(*)::int AS n FROM customer_first_orders';
  const before = await count(firstOrders, []);
  await db.query('TRUNCATE stores CASCADE');
  assert.equal(await count('SELECT count(*)::int AS n FROM orders', []), 0);
  assert.equal(await count(firstOrders, []), before, 'first orders belong to organizations');
  await db.query('TRUNCATE organizations CASCADE');
  assert.equal(await count(firstOrders, []), 0);
});
