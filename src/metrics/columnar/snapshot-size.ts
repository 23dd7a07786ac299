// What an organization's snapshot will take before it is built (issue 27, item 6): its orders'
// columns and, since section 15, its lines' — 24 bytes a line and the 4 of each order's line start.
// At 2.5 lines an order the lines are more than half of the snapshot: counting orders alone
// (BYTES_PER_ORDER) let the background preparation start builds that could not fit.
import type { Database } from '../../db/database.js';
import { byPages, DEFAULT_CHUNK_ROWS, tidRange } from './page-statements.js';
import { BYTES_PER_LINE } from './line-columns.js';
import { BYTES_PER_ORDER } from './snapshot.js';

/** An order's share of its part's `lineStart` (freshPart in snapshot.ts). */
const LINE_START_BYTES = 4;

/** Both counts in one statement, each an index-only range of the organization's key. */
const COUNTS = `SELECT (SELECT count(*) FROM orders WHERE organization_id = $1)::float8 AS orders,
  (SELECT count(*) FROM order_lines WHERE organization_id = $1)::float8 AS lines`;

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

async function linesAtOnce(db: Pick<Database, 'query'>, organizationId: string): Promise<number> {
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

export interface SnapshotSize {
  readonly orders: number;
  readonly lines: number;
  readonly bytes: number;
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
  if (db.engine === 'embedded') {
    orders = await organizationOrders(db, organizationId);
    lines =
      orders > chunkRows
        ? await linesByPages(db, organizationId, chunkRows)
        : await linesAtOnce(db, organizationId);
  } else {
    const [row] = await db.query<{ orders: number; lines: number }>(COUNTS, [organizationId]);
    [orders, lines] = [Number(row?.orders ?? 0), Number(row?.lines ?? 0)];
  }
  return { orders, lines, bytes: orders * (BYTES_PER_ORDER + LINE_START_BYTES) + lines * BYTES_PER_LINE };
}
