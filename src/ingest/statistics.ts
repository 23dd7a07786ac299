// Statistics of the tables an import writes. PGlite runs no autovacuum, and a server's comes up
// to a minute after a large import, or never for an organization that is a small part of a large
// table. Until then the planner may count no order for an organization that has a million, and
// the plans of a merge into it (src/ingest/merge.ts: the customers of replaced orders, their first
// orders) look each order up by scanning all of the organization's: quadratic.
import type { Queryable } from '../db/database.js';

const ORDERS_CHANGES = `SELECT c.reltuples::float8 AS rows, coalesce(s.n_mod_since_analyze, 0)::float8 AS changed
  FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = 'orders'::regclass`;

/** autovacuum's own rule: more than 10% of the table changed since its last ANALYZE. */
async function muchChanged(db: Queryable, written: number): Promise<boolean> {
  const [orders] = await db.query<{ rows: number; changed: number }>(ORDERS_CHANGES);
  return orders !== undefined && written + orders.changed > 50 + 0.1 * Math.max(orders.rows, 0);
}

/** Past this many, the planner sees an organization worth looking up by key whatever the truth. */
const SEEN_AS_LARGE = 10_000;

/**
 * Whether the planner counts ten times fewer orders for the organization than it has: counted up
 * to that point only (an index range of SEEN_AS_LARGE × 10 entries at most).
 */
async function underestimated(db: Queryable, organizationId: string): Promise<boolean> {
  const [plan] = await db.query<{ 'QUERY PLAN': { Plan?: { 'Plan Rows'?: number } }[] }>(
    'EXPLAIN (FORMAT JSON) SELECT 1 FROM orders WHERE organization_id = $1',
    [organizationId],
  );
  const estimated = plan?.['QUERY PLAN'][0]?.Plan?.['Plan Rows'] ?? 0;
  if (estimated >= SEEN_AS_LARGE) return false;
  const bound = 10 * Math.max(estimated, 100);
  const [found] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM (SELECT 1 FROM orders WHERE organization_id = $1 LIMIT $2) o',
    [organizationId, bound + 1],
  );
  return (found?.n ?? 0) > bound;
}

/**
 * Below this many lines, a merge's plans do not depend on how much of the table changed since the
 * last ANALYZE: each line is looked up by its order's key, each customer by their hash. Only an
 * organization the planner does not see at all (underestimated) can still turn those lookups into
 * scans of its orders. ANALYZE reads a sample of the whole table: seconds at a million orders, which
 * a trickle of small imports would pay each time the table has drifted (issue 19, item 4).
 */
export const SMALL_MERGE = 1_000;

/**
 * Refreshes the statistics of orders and first orders when much of them changed since the last
 * time (`written`: rows just committed, which the counters may not have yet), or when they miss
 * `organizationId`'s orders. `merging`: the lines of the merge about to run, when that is the
 * reason; a merge of fewer than SMALL_MERGE lines leaves the table-wide rule to autovacuum (on the
 * embedded engine, to the end of each import). Outside any transaction: ANALYZE holds its lock
 * until the end of the one it runs in.
 */
export async function analyzeIfStale(
  db: Queryable,
  options: {
    written?: number;
    organizationId?: string;
    merging?: number;
    /**
     * Work of the caller's that needs no statement, run while the database analyzes (started once
     * ANALYZE is sent), if it does: a command saves its report snapshot meanwhile (issue 27). Not
     * run when nothing is stale.
     */
    beside?: () => Promise<void>;
  } = {},
): Promise<boolean> {
  const tableWide = options.merging === undefined || options.merging >= SMALL_MERGE;
  const stale =
    (tableWide && (await muchChanged(db, options.written ?? 0))) ||
    (options.organizationId !== undefined && (await underestimated(db, options.organizationId)));
  if (!stale) return false;
  const analyzing = db.query('ANALYZE orders, customer_first_orders, order_lines');
  const { beside } = options;
  if (beside === undefined) await analyzing;
  else {
    // A turn of the event loop first: the statement is written to the database's socket by then.
    const work = new Promise<void>((resolve) => setImmediate(resolve)).then(beside);
    // Waited for whatever becomes of it: its failure is the caller's, who holds its promise.
    const [analyzed] = await Promise.allSettled([analyzing, work]);
    if (analyzed.status === 'rejected') throw analyzed.reason;
  }
  return true;
}

/**
 * The tables an import or a connector's page rewrites: replaced orders and lines, first orders,
 * the rows that tell deltas what changed, and the staging tables emptied after each merge.
 */
const WRITTEN_TABLES = [
  'orders',
  'order_lines',
  'customer_first_orders',
  'order_retirements',
  'import_staging',
  'import_customers',
];

/**
 * Each written table's dead rows, and its rows as last measured: pg_class.reltuples outlives a
 * restart, the activity counters do not (after one, the live count reads 0 until rows change).
 */
const DEAD_ROWS = `SELECT s.relname::text AS name, s.n_dead_tup::float8 AS dead,
    greatest(c.reltuples, s.n_live_tup, 0)::float8 AS rows
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE s.relname = ANY($1::text[])`;

/**
 * The embedded engine's autovacuum, which PGlite does not run: every replaced order or line left
 * its old version behind for good, so a file imported again every night, or a store whose orders
 * change, grew the tables by their whole size each time (20,000 orders with lines imported eight
 * times: `orders` 6.8 MB, then 39 MB; `order_lines` 13 MB, then 79 MB), and every scan with them.
 * VACUUM (ANALYZE) of each table past autovacuum's own rule (more dead rows than 50 + 20 % of its
 * rows) makes that room reusable. Outside any transaction (VACUUM cannot run in one); the names
 * are this module's own. Returns the tables vacuumed.
 */
export async function vacuumIfBloated(db: Queryable): Promise<string[]> {
  // The merge's counts of dead rows wait in this session until it reports them, at most once a
  // second: read at once, they were sometimes those from before it, and no table was vacuumed.
  await db.query('SELECT pg_stat_force_next_flush()');
  const tables = await db.query<{ name: string; dead: number; rows: number }>(DEAD_ROWS, [WRITTEN_TABLES]);
  const bloated = tables.filter((t) => t.dead > 50 + 0.2 * t.rows).map((t) => t.name);
  for (const table of bloated) await db.query(`VACUUM (ANALYZE) ${table}`);
  return bloated;
}
