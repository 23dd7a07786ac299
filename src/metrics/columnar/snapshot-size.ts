// What an organization's snapshot will take before it is built (issue 27, item 6): its orders'
// columns and, since section 15, its lines' — 24 bytes a line and the 4 of each order's line start.
// At 2.5 lines an order the lines are more than half of the snapshot: counting orders alone
// (BYTES_PER_ORDER) let the background preparation start builds that could not fit. Issue 29:
// and its customers' keys (BYTES_PER_CUSTOMER), a third of a snapshot of one-order customers
// without lines, which the start's preparation left out and so went past REPORT_MEMORY_MB.
import type { Database } from '../../db/database.js';
import { byPages, DEFAULT_CHUNK_ROWS, tidRange } from './page-statements.js';
import { BYTES_PER_LINE } from './line-columns.js';
import { BYTES_PER_CUSTOMER, BYTES_PER_ORDER } from './snapshot.js';

/** An order's share of its part's `lineStart` (freshPart in snapshot.ts). */
const LINE_START_BYTES = 4;

/**
 * The counts in one statement, each an index-only range of the organization's key. Customers: one
 * row each in customer_first_orders (U2), all but those with no counted order.
 */
const COUNTS = `SELECT (SELECT count(*) FROM orders WHERE organization_id = $1)::float8 AS orders,
  (SELECT count(*) FROM order_lines WHERE organization_id = $1)::float8 AS lines,
  (SELECT count(*) FROM customer_first_orders WHERE organization_id = $1)::float8 AS customers`;
const CUSTOMERS_COUNT = 'SELECT count(*)::float8 AS n FROM customer_first_orders WHERE organization_id = $1';

const ORDERS_COUNT = 'SELECT count(*)::float8 AS n FROM orders WHERE organization_id = $1';
const LINES_COUNT = 'SELECT count(*)::float8 AS n FROM order_lines l WHERE l.organization_id = $1';

/** The organization's orders: one index-only range, a moment even at a million orders. */
export async function organizationOrders(
  db: Pick<Database, 'query'>,
  organizationId: string,
): Promise<number> {
  const [row] = await db.query<{ n: number }>(ORDERS_COUNT, [organizationId]);
  return Number(row?.n ?? 0);
}

/** The organization's lines, in one statement. */
export async function linesAtOnce(db: Pick<Database, 'query'>, organizationId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(LINES_COUNT, [organizationId]);
  return Number(row?.n ?? 0);
}

async function linesByPages(
  db: Pick<Database, 'query'>,
  organizationId: string,
  chunkRows: number,
): Promise<number> {
  let lines = 0;
  await byPages(db, 'order_lines', chunkRows, async (pages) => {
    const [row] = await db.query<{ n: number }>(`${LINES_COUNT} AND ${tidRange('l', pages)}`, [
      organizationId,
    ]);
    lines += Number(row?.n ?? 0);
  });
  return lines;
}

/**
 * Issue 28: what a build needs before it reads the orders (enough to choose its lane, to know
 * whether it has lines, and whether its orders are read in one statement), in one short statement:
 * its orders counted up to `limit`, and its lines up to what the limit leaves (one at least). An
 * organization that the planner's statistics put far past the limit is not counted: its lines are
 * only looked for. The whole count, whose lines took about 0.3 s of the database and 0.8 s of a
 * starting server at a million orders, comes once the orders are read. Counted to the end before
 * the first order was read, a million orders took 0.3–0.37 s of the embedded database, and counted
 * up to the lane's bound with their lines, 0.24 s (docs/benchmarks.md).
 */
const BEFORE_ORDERS = `WITH o AS (SELECT count(*) AS n FROM (SELECT 1 FROM orders WHERE organization_id = $1 LIMIT $2) o)
  SELECT o.n::float8 AS orders, (SELECT count(*) FROM (SELECT 1 FROM order_lines
    WHERE organization_id = $1 LIMIT greatest($2 - o.n, 1)) l)::float8 AS lines FROM o`;
const ANY_LINE = 'SELECT EXISTS (SELECT 1 FROM order_lines WHERE organization_id = $1) AS any';

/** The planner's estimate of the organization's orders, from the statistics imports keep (ANALYZE). */
const PLANNED_ORDERS = 'EXPLAIN (FORMAT JSON) SELECT 1 FROM orders WHERE organization_id = $1';
/** How far past the limit the planner must put an organization for its orders not to be counted. */
const PLANNED_MARGIN = 2;

export interface RowsBeforeOrders {
  /** The orders: exactly when fewer than the limit, else at least the limit (counted or estimated). */
  readonly orders: number;
  /** The lines: exactly when orders and lines are fewer than the limit, else at least that many (0: none). */
  readonly linesUpTo: number;
}

export async function rowsBeforeOrders(
  db: Pick<Database, 'query'>,
  organizationId: string,
  limit: number,
): Promise<RowsBeforeOrders> {
  const planned = await plannedOrders(db, organizationId);
  if (planned >= PLANNED_MARGIN * limit) {
    const [row] = await db.query<{ any: boolean }>(ANY_LINE, [organizationId]);
    return { orders: planned, linesUpTo: row?.any === true ? 1 : 0 };
  }
  const [row] = await db.query<{ orders: number; lines: number }>(BEFORE_ORDERS, [organizationId, limit]);
  const orders = Number(row?.orders ?? 0);
  const linesUpTo = Number(row?.lines ?? 0);
  return { orders: orders < limit ? orders : Math.max(limit, planned), linesUpTo };
}

/** The planner's estimate, 0 if it gives none. */
async function plannedOrders(db: Pick<Database, 'query'>, organizationId: string): Promise<number> {
  const [row] = await db.query<Record<string, unknown>>(PLANNED_ORDERS, [organizationId]);
  const plans = Object.values(row ?? {})[0] as [{ Plan?: { 'Plan Rows'?: unknown } }] | undefined;
  const rows = Number(plans?.[0]?.Plan?.['Plan Rows']);
  return Number.isFinite(rows) && rows > 0 ? rows : 0;
}

export interface SnapshotSize {
  readonly orders: number;
  readonly lines: number;
  readonly customers: number;
  readonly bytes: number;
}

/** The bytes of a snapshot of these rows: its orders' and lines' columns and its customers' keys. */
export function snapshotBytes(orders: number, lines: number, customers: number): number {
  return (
    orders * (BYTES_PER_ORDER + LINE_START_BYTES) + lines * BYTES_PER_LINE + customers * BYTES_PER_CUSTOMER
  );
}

/**
 * The organization's orders and lines now, and the bytes a snapshot of them takes. On the embedded
 * database the lines of an organization of more than chunkRows orders are counted over ranges of
 * pages, as the build reads them: counted in one statement, a million orders' lines held the one
 * session for everyone past the 5 s a request waits for it (issue 28, item 3).
 */
export async function expectedSnapshotSize(
  db: Pick<Database, 'engine' | 'query'>,
  organizationId: string,
  chunkRows = DEFAULT_CHUNK_ROWS,
): Promise<SnapshotSize> {
  let orders: number;
  let lines: number;
  let customers: number;
  if (db.engine === 'embedded') {
    orders = await organizationOrders(db, organizationId);
    lines =
      orders > chunkRows
        ? await linesByPages(db, organizationId, chunkRows)
        : await linesAtOnce(db, organizationId);
    const [counted] = await db.query<{ n: number }>(CUSTOMERS_COUNT, [organizationId]);
    customers = Number(counted?.n ?? 0);
  } else {
    const [row] = await db.query<{ orders: number; lines: number; customers: number }>(COUNTS, [
      organizationId,
    ]);
    [orders, lines, customers] = [
      Number(row?.orders ?? 0),
      Number(row?.lines ?? 0),
      Number(row?.customers ?? 0),
    ];
  }
  return { orders, lines, customers, bytes: snapshotBytes(orders, lines, customers) };
}

/**
 * The size a build goes by, after it has read its data version: `counted` when given (issue 29:
 * the count the start's memory check or the lane's choice took moments before, not taken again:
 * a second on a million orders), else counted now. Rows written since that count only grow the
 * build's columns; but the lines are read at all only when the count saw some, so a count that
 * saw none is checked again here (an empty range of the lines' index), lest lines written in
 * between be missing from a snapshot labelled with their version (X1).
 */
export async function sizeForBuild(
  db: Pick<Database, 'engine' | 'query'>,
  organizationId: string,
  chunkRows: number,
  counted: SnapshotSize | undefined,
): Promise<SnapshotSize> {
  if (!counted) return expectedSnapshotSize(db, organizationId, chunkRows);
  if (counted.lines > 0) return counted;
  const lines = await linesAtOnce(db, organizationId);
  return lines === 0
    ? counted
    : { ...counted, lines, bytes: snapshotBytes(counted.orders, lines, counted.customers) };
}
