// Issue 27, item 6 (src/ingest/copy-into-empty.ts): a command hosting the embedded database alone
// imports a file into an organization without orders straight into orders and order_lines, in one
// transaction. Asserted against the staged import of the same file in a database a server hosts:
// the same orders, lines and first orders (I2: the last line of a repeated order wins; L1; U2),
// nothing written for a refused file (I1), and the tables' indexes and the lines' check of their
// orders (migration 020) as they were. On PostgreSQL a command never does it (its first import goes
// through the staging, src/ingest/stream-merge.ts): the same comparisons hold, and nothing is
// COPYed into orders itself.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { engine, migratedConfig } from '../helpers/database.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { importOrderFile } from '../../src/ingest/import.js';
import { INDEXES_AFTER_BYTES } from '../../src/ingest/copy-into-empty.js';

/** Order i of a store: 0 to 3 lines, one customer in 9, the later ones on a second store. */
function order(i: number, total = '30.00') {
  const lines = Array.from({ length: i % 4 }, (_, k) => ({
    line_id: `l${k}`,
    product_id: `p${(i + k) % 40}`,
    product_name: `Produit ${(i + k) % 40} — édition « ${'x'.repeat(400)} »`,
    categories: k === 0 ? ['Thés', 'Tab\there'] : [],
    quantity: 1 + k,
    subtotal: '10.00',
    discount: k === 1 ? '1.50' : '0.00',
  }));
  return {
    store: i % 5 === 0 ? 'https://deux.example' : 'https://un.example',
    id: `o${i}`,
    created_at: new Date(Date.UTC(2026, 0, 1 + (i % 28), i % 24)).toISOString(),
    status: i % 11 === 0 ? 'cancelled' : 'completed',
    customer_email: `client${i % 9}@example.com`,
    items: 1,
    total,
    lines,
  };
}

/** Orders enough for a file of more than INDEXES_AFTER_BYTES (about 1 KB each). */
const LARGE = 10_000;

const records = (count: number) => Array.from({ length: count }, (_, i) => order(i));

// What an organization holds, its stores by address (their ids may differ between the two paths),
// its customers' hashes left out (each database has its own SECRET_KEY).
const HELD = [
  `SELECT count(*)::int AS n, md5(string_agg(t::text, ',' ORDER BY t::text)) AS sum FROM (
     SELECT s.address, o.external_id, o.created_at, o.status, o.customer IS NULL, o.items, o.total
     FROM orders o JOIN stores s ON s.id = o.store_id WHERE o.organization_id = $1) t`,
  `SELECT count(*)::int AS n, md5(string_agg(t::text, ',' ORDER BY t::text)) AS sum FROM (
     SELECT s.address, l.external_id, l.position, l.line_id, l.product_name, l.categories, l.quantity,
            l.subtotal, l.discount
     FROM order_lines l JOIN stores s ON s.id = l.store_id WHERE l.organization_id = $1) t`,
  `SELECT count(*)::int AS n, md5(string_agg(t::text, ',' ORDER BY t::text)) AS sum FROM (
     SELECT first_order_at FROM customer_first_orders WHERE organization_id = $1) t`,
];

async function held(db: Database, organizationId: string) {
  const sums = [];
  for (const sql of HELD) sums.push((await db.query<{ n: number; sum: string }>(sql, [organizationId]))[0]);
  return sums;
}

// The tables' indexes (the first orders' key too) and the lines' check, by name: as the migrations left them.
const SHAPE = `SELECT
  (SELECT string_agg(indexrelid::regclass::text || ':' || indisvalid, ',' ORDER BY indexrelid::regclass::text)
   FROM pg_index
   WHERE indrelid IN ('orders'::regclass, 'order_lines'::regclass, 'customer_first_orders'::regclass)) AS indexes,
  (SELECT tgenabled FROM pg_trigger WHERE tgname = 'order_lines_insert_references_orders') AS check`;

describe('a first import written straight into its tables by a command alone (issue 27)', () => {
  const opened: { db: Database; drop: () => Promise<void> }[] = [];
  let alone: Database; // a command hosting the database (the CLI alone)
  let served: Database; // a server hosting it: the staged import
  let dir: string;
  let copies: string[] = [];

  before(async () => {
    for (const role of ['cli', 'server'] as const) {
      const fresh = await migratedConfig();
      const db = await openDatabase(fresh.config, { role });
      opened.push({ db, drop: fresh.drop });
    }
    const [a, s] = opened.map((o) => o.db) as [Database, Database];
    // Every COPY of the command's transactions, to tell which way an import went.
    alone = {
      ...a,
      query: (sql, params, options) => a.query(sql, params, options),
      queryPages: (sql, params, onPage, options) => a.queryPages(sql, params, onPage, options),
      copyIn: (sql, data) => a.copyIn(sql, data),
      copyOut: (sql, onData) => a.copyOut(sql, onData),
      giveBack: (pieces) => a.giveBack(pieces),
      close: () => a.close(),
      hostedByCommand: a.hostedByCommand,
      transaction: (work) =>
        a.transaction((tx) =>
          work({
            query: (sql, params) => tx.query(sql, params),
            copyIn: (sql, data) => (copies.push(sql), tx.copyIn(sql, data)),
          }),
        ),
    };
    served = s;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-copy-into-empty-'));
  });
  after(async () => {
    for (const o of opened) {
      await o.db.close();
      await o.drop();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  let orgs = 0;
  async function organization(db: Database): Promise<string> {
    const [row] = await db.query<{ id: string }>(
      'INSERT INTO organizations (slug, name) VALUES ($1, $2) RETURNING id',
      [`copy-into-empty-${++orgs}`, 'Copie directe'],
    );
    return row!.id;
  }

  function file(name: string, lines: readonly object[]): string {
    const target = path.join(dir, name);
    fs.writeFileSync(target, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    return target;
  }

  /** Imports `target` both ways into new organizations; what each holds, and how the command wrote. */
  async function bothWays(target: string) {
    copies = [];
    const [a, s] = [await organization(alone), await organization(served)];
    const results = [await importOrderFile(alone, a, target), await importOrderFile(served, s, target)];
    return { results, held: [await held(alone, a), await held(served, s)], copies };
  }

  test('a command hosts the embedded database alone; a server does not, nor anyone on PostgreSQL', () => {
    assert.equal(alone.hostedByCommand, engine === 'embedded');
    assert.equal(served.hostedByCommand, false);
  });

  /** Whether the command's transactions COPYed into `table` itself: on the embedded engine only. */
  const straightInto = (written: readonly string[], table: string) =>
    assert.equal(
      written.some((sql) => sql.startsWith(`COPY ${table} `)),
      engine === 'embedded',
      `COPY ${table} in the command's transaction`,
    );

  test('a large file (indexes built after the read): the same orders, lines and first orders as staged; the indexes and the check as before', async () => {
    const target = file('large.ndjson', records(LARGE));
    assert.ok(fs.statSync(target).size >= INDEXES_AFTER_BYTES, 'large enough to build the indexes after');
    const before = (await alone.query(SHAPE))[0];
    const {
      results,
      held: [mine, staged],
      copies: written,
    } = await bothWays(target);
    assert.deepEqual(results[0], results[1]);
    assert.equal(results[0]!.imported, LARGE);
    straightInto(written, 'orders');
    straightInto(written, 'order_lines');
    assert.equal(mine![1]!.n, (LARGE / 4) * 6, 'L1: every line');
    assert.deepEqual(mine, staged);
    assert.deepEqual((await alone.query(SHAPE))[0], before);
    assert.equal((await alone.query(SHAPE))[0]!.check, 'O', 'the lines’ check enabled again');
  });

  test('I2: a file that repeats an order is read again, staged: the last line wins, below and above the size from which indexes are built after the read', async () => {
    for (const count of [LARGE, 2_000]) {
      const lines: object[] = records(count);
      lines.push(order(7, '777.77'));
      const {
        results,
        held: [mine, staged],
        copies: written,
      } = await bothWays(file(`repeat-${count}.ndjson`, lines));
      assert.deepEqual(results[0], results[1]);
      assert.equal(results[0]!.imported, count);
      assert.deepEqual(mine, staged, `${count} orders`);
      straightInto(written, 'orders'); // tried straight first
    }
  });

  test('I1: a refused file writes nothing, and leaves the tables as they were', async () => {
    const before = (await alone.query(SHAPE))[0];
    const lines: object[] = records(LARGE);
    lines.splice(LARGE / 2, 0, { store: 'https://un.example', id: 'sans total' });
    const organizationId = await organization(alone);
    const result = await importOrderFile(alone, organizationId, file('refused.ndjson', lines));
    assert.equal(result.refused, true);
    assert.equal(result.rejected, 1);
    const [orders, lineRows, firsts] = await held(alone, organizationId);
    assert.deepEqual([orders!.n, lineRows!.n, firsts!.n], [0, 0, 0]);
    assert.deepEqual((await alone.query(SHAPE))[0], before);
  });
});
