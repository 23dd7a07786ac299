// Issue 27, item 6 (src/metrics/columnar/import-snapshot.ts): a command hosting the embedded
// database alone builds its first import's report snapshot from the orders as it writes them, and
// saves it, instead of reading the rows back once committed. Asserted against the SQL engine (the
// reference) on every dimension, order and line metrics, three zones, over orders chosen where a
// value written by the command could differ from the value PostgreSQL stores: offsets and
// fractions of a second, years 50 and 9999, anonymous orders, missing countries and line texts
// (L2), categories with quotes, backslashes, tabs and none (L5), discounts and partial refunds,
// excluded first orders (U2). The saved file is what a server reads back, and it is kept current by
// the server's deltas afterwards. No snapshot of the import is used when it was not committed (a
// refused file, a repeated order read again staged) or when the organization changed since its
// commit: the command then reads the rows back, as before. On PostgreSQL a command never writes
// the orders itself: the snapshot is always read back, and the same comparisons hold.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LINE_METRIC_IDS, ORDER_METRIC_IDS, type DimensionId } from '../../src/catalog.js';
import { PREPARE_MIN_ORDERS, prepareReports, snapshotWhileWriting } from '../../src/cli/prepare-reports.js';
import type { Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { findOrganization } from '../../src/domain/organizations.js';
import { importOrderFile, importOrderRecords } from '../../src/ingest/import.js';
import { ColumnarReportEngine, type SnapshotEvent } from '../../src/metrics/columnar/columnar-engine.js';
import { SqlReportEngine } from '../../src/metrics/engine.js';
import { NO_EXTENSIONS } from '../../src/query/parse.js';
import { planReport } from '../../src/query/plan.js';
import { engine, migratedConfig } from '../helpers/database.js';

const OFFSETS = ['Z', '+14:00', '-09:30', '+0545', '-12:00', '+01:00'];
const STATUSES = ['completed', 'processing', 'cancelled', 'failed', 'Zéta', '𝒮tatus'];
const CATEGORIES: string[][] = [
  [],
  ['Thés'],
  ['Thés', 'Tab\there'],
  ['"Cité"', 'a\\b'],
  ['Unknown'],
  ['Unknown', 'Thés'],
];

/** Order i: 0 to 3 lines; customers shared across days, one order in 7 anonymous. */
function order(i: number, id = `o${i}`): Record<string, unknown> {
  const lines = Array.from({ length: i % 4 }, (_, k) => ({
    line_id: `l${k}`,
    product_id: k === 2 ? null : `p${(i + k) % 30}`,
    product_name: (i + k) % 17 === 0 ? 'Thé « vert »' : `Produit ${(i + k) % 30}`,
    ...(k === 1 ? { variant_id: `v${i % 3}`, variant_name: i % 2 === 0 ? '' : `Taille ${i % 3}` } : {}),
    ...(k === 0 ? { sku: i % 5 === 0 ? '' : `SKU-${i % 30}` } : {}),
    categories: CATEGORIES[(i + k) % CATEGORIES.length],
    quantity: 1 + k,
    subtotal: `${10 + (i % 7)}.${String(i % 100).padStart(2, '0')}`,
    discount: k === 1 ? '1.50' : '0.00',
    ...(i % 9 === 0 && k === 0 ? { refunded_quantity: 1, refunded_amount: '3.33' } : {}),
  }));
  // Mostly 2025–2026, a fraction of a second on some, and a few at the ends of the years allowed.
  const day = new Date(Date.UTC(2025, 0, 1) + (i % 700) * 86_400_000 + (i % 86_400) * 1000);
  const fraction =
    i % 3 === 0 ? `.${String(999_999 - (i % 1000)).padStart(6, '0')}` : i % 3 === 1 ? '.5' : '';
  const local = day.toISOString().slice(0, 19);
  const createdAt =
    i % 1000 === 1
      ? '0050-03-01T00:30:00+14:00'
      : i % 1000 === 2
        ? '9999-12-31T23:59:59.999999Z'
        : `${local}${fraction}${OFFSETS[i % OFFSETS.length]}`;
  return {
    store: i % 4 === 0 ? 'https://deux.example' : 'https://un.example/boutique',
    id,
    created_at: createdAt,
    status: STATUSES[i % STATUSES.length],
    ...(i % 7 === 0 ? {} : { customer_email: `client${i % 1499}@example.com` }),
    // Customers whose every order is excluded (S1): none of them has a first order (U2).
    ...(i % 500 === 3 ? { customer_email: `annule${i % 1000}@example.com`, status: 'cancelled' } : {}),
    ...(i % 5 === 0 ? {} : { billing_country: ['FR', 'de', 'BE'][i % 3] }),
    items: i % 4,
    total: `${20 + (i % 50)}.${String(i % 97).padStart(2, '0')}`,
    tax_total: '3.10',
    shipping_total: i % 2 === 0 ? '4.90' : '0',
    refund_total: i % 9 === 0 ? '5.00' : '0',
    lines,
  };
}

const ORDERS = PREPARE_MIN_ORDERS + 500;

const DIMENSION_SETS: DimensionId[][] = [
  [],
  ['date'],
  ['store', 'country'],
  ['customer_type', 'status'],
  ['product'],
  ['product_id', 'variant'],
  ['sku'],
  ['category'],
  ['store', 'category'],
];
const FEW_SETS: DimensionId[][] = [[], ['date'], ['product']];
const LINE_DIMENSIONS: readonly DimensionId[] = ['product', 'product_id', 'variant', 'sku', 'category'];
const ZONES = ['UTC', 'Europe/Paris', 'Pacific/Kiritimati'];

describe('a command’s first import builds its report snapshot as it writes (issue 27)', () => {
  let fresh: Awaited<ReturnType<typeof migratedConfig>>;
  let db: Database; // a command hosting the database (the CLI alone)
  let config: Config;
  let dir: string;
  let orgs = 0;

  before(async () => {
    fresh = await migratedConfig();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-import-snapshot-'));
    // The secret key is a getter of its own (read when first needed), not a copied field.
    config = Object.defineProperties(
      { ...fresh.config, reportEngine: 'columnar', reportSnapshotDir: path.join(dir, 'snapshots') },
      { secretKey: { get: () => fresh.config.secretKey } },
    ) as Config;
    db = await openDatabase(config, { role: 'cli' });
  });
  after(async () => {
    await db.close();
    await fresh.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function organization(): Promise<{ id: string; slug: string }> {
    const slug = `import-snapshot-${++orgs}`;
    const [row] = await db.query<{ id: string }>(
      'INSERT INTO organizations (slug, name) VALUES ($1, $2) RETURNING id',
      [slug, 'Instantané à l’import'],
    );
    return { id: row!.id, slug };
  }

  function file(name: string, lines: readonly object[]): string {
    const target = path.join(dir, name);
    fs.writeFileSync(target, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    return target;
  }

  /** Imports the file as the CLI does (its snapshot built as it writes), then prepares the reports. */
  async function importAndPrepare(organizationId: string, target: string) {
    const built = await snapshotWhileWriting(config, db, organizationId);
    assert.equal(built !== undefined, engine === 'embedded', 'built as written by a command alone only');
    const result = await importOrderFile(db, organizationId, target, built ? { written: built } : {});
    const preparation = await prepareReports(config, db, organizationId, result.imported, built);
    return { result, preparation, reason: built?.reason };
  }

  /**
   * Every dimension set by every metric of its grain, those of orders in three zones, the file's
   * engine against SQL's (`few`: totals, days and products only).
   */
  async function sameAsSql(slug: string, what: string, few = false): Promise<SnapshotEvent[]> {
    const events: SnapshotEvent[] = [];
    const sql = new SqlReportEngine(db);
    const refused = { run: () => Promise.reject(new Error('answered by SQL, not from the snapshot')) };
    const columnar = new ColumnarReportEngine(db, refused, {
      memoryBudgetBytes: 256 * 1024 * 1024,
      snapshotDir: config.reportSnapshotDir!,
      buildWaitMs: 60_000,
      onEvent: (event) => events.push(event),
    });
    try {
      const org = await findOrganization(db, slug);
      for (const timezone of ZONES)
        for (const dimensions of few ? FEW_SETS : DIMENSION_SETS) {
          const lineGrain = dimensions.some((d) => LINE_DIMENSIONS.includes(d));
          if (lineGrain && timezone !== 'UTC') continue; // a day's bounds are the order dimensions'
          for (const metrics of lineGrain ? [LINE_METRIC_IDS] : [ORDER_METRIC_IDS, LINE_METRIC_IDS]) {
            const plan = planReport(
              {
                dimensions,
                metrics: [...metrics],
                from: '2025-01-01',
                to: '2026-12-31',
                timezone,
                limit: 10_000,
                ...NO_EXTENSIONS,
              },
              org,
            );
            assert.deepStrictEqual(
              await columnar.run(plan),
              await sql.run(plan),
              `${what}: ${dimensions.join('×') || 'totals'} ${metrics.join(',')} ${timezone}`,
            );
          }
        }
      for (const [from, to] of [
        ['0050-01-01', '0050-12-31'],
        ['9999-01-01', '9999-12-31'],
      ] as const) {
        const plan = planReport(
          {
            dimensions: ['date'],
            metrics: [...ORDER_METRIC_IDS],
            from,
            to,
            timezone: 'UTC',
            limit: 1000,
            ...NO_EXTENSIONS,
          },
          org,
        );
        const rows = await columnar.run(plan);
        assert.deepStrictEqual(rows, await sql.run(plan), `${what}: ${from}`);
      }
    } finally {
      await columnar.close();
    }
    return events;
  }

  test('the snapshot built as the orders are written answers as SQL does, read back from its file, and a delta keeps it current', async () => {
    const org = await organization();
    const orders = Array.from({ length: ORDERS }, (_, i) => order(i));
    const { result, preparation, reason } = await importAndPrepare(org.id, file('first.ndjson', orders));
    assert.equal(result.imported, ORDERS, JSON.stringify(result.errors.slice(0, 3)));
    assert.equal(preparation.prepared, true, JSON.stringify(preparation));
    assert.equal(
      preparation.prepared && preparation.from,
      engine === 'embedded' ? 'import' : 'database',
      String(reason),
    );
    assert.equal(preparation.prepared && preparation.orders, ORDERS);
    // U2 from what PostgreSQL stored: each customer's earliest counted order, to the microsecond.
    const [firsts] = await db.query<{ customers: number; wrong: number }>(
      `SELECT count(*)::int AS customers,
         count(*) FILTER (WHERE f.first_order_at IS DISTINCT FROM m.first)::int AS wrong
       FROM customer_first_orders f
       FULL JOIN (SELECT customer, min(created_at) AS first FROM orders
                  WHERE organization_id = $1 AND customer IS NOT NULL
                    AND status <> ALL ((SELECT excluded_statuses FROM organizations WHERE id = $1)::text[])
                  GROUP BY customer) m USING (customer)
       WHERE f.organization_id = $1 OR f.organization_id IS NULL`,
      [org.id],
    );
    assert.deepEqual(firsts, { customers: 1499, wrong: 0 }, 'U2: first orders');
    const events = await sameAsSql(org.slug, 'as imported');
    assert.deepEqual(
      events.filter((e) => e.event === 'loaded' || e.event === 'built').map((e) => e.event),
      ['loaded'],
      'read back from the file the command saved',
    );

    // A server's import afterwards (a re-imported order, a new one): the file's snapshot takes
    // the delta, its data version and database snapshot being the commit's.
    await importOrderRecords(db, org.id, [order(3, 'o3'), { ...order(4, 'nouvelle'), status: 'completed' }]);
    const later = await sameAsSql(org.slug, 'after a delta', true);
    assert.deepEqual(
      later.filter((e) => e.event === 'loaded' || e.event === 'built').map((e) => e.event),
      ['loaded'],
    );
  });

  test('not used when the organization changed after the commit, nor when the file was read again staged (I2): read back instead, the statistics fresh', async () => {
    const org = await organization();
    const orders = Array.from({ length: ORDERS }, (_, i) => order(i));
    const built = await snapshotWhileWriting(config, db, org.id);
    const result = await importOrderFile(
      db,
      org.id,
      file('changed.ndjson', orders),
      built ? { written: built } : {},
    );
    await importOrderRecords(db, org.id, [{ ...order(5, 'entre-temps'), status: 'completed' }]);
    const preparation = await prepareReports(config, db, org.id, result.imported, built);
    assert.equal(preparation.prepared && preparation.from, 'database');
    if (built) assert.equal(built.reason, 'changed');
    await sameAsSql(org.slug, 'changed after the commit', true);

    const repeated = await organization();
    const twice = [...orders.slice(0, ORDERS - 1), { ...order(7, 'o7'), total: '999.99' }];
    const again = await importAndPrepare(repeated.id, file('repeated.ndjson', twice));
    assert.equal(again.result.imported, ORDERS - 1, 'I2: the repeated order once');
    assert.equal(again.preparation.prepared && again.preparation.from, 'database');
    if (engine === 'embedded') assert.equal(again.reason, 'discarded');
    // The statistics see the organization's lines once its import ends, on both engines: on
    // PostgreSQL a first import merged once read (here, for its repeated order) left the planner
    // counting next to none until autovacuum came, and each line report took about 19 s.
    const [plan] = await db.query<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>(
      'EXPLAIN (FORMAT JSON) SELECT 1 FROM order_lines WHERE organization_id = $1',
      [repeated.id],
    );
    const lines = twice.reduce((n, o) => n + (o.lines as unknown[]).length, 0);
    assert.ok(plan!['QUERY PLAN'][0]!.Plan['Plan Rows'] > lines / 10, 'the planner sees the lines');
    await sameAsSql(repeated.slug, 'repeated order', true);
  });
});
