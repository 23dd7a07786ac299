// What an organization's snapshot will take before it is built (issue 27, item 6): its orders'
// columns and, since section 15, its lines' — 24 bytes a line and the 4 of each order's line start.
// At 2.5 lines an order the lines are more than half of the snapshot: counting orders alone
// (BYTES_PER_ORDER) let the background preparation start builds that could not fit.
import type { Queryable } from '../../db/database.js';
import { BYTES_PER_LINE } from './line-columns.js';
import { BYTES_PER_ORDER } from './snapshot.js';

/** An order's share of its part's `lineStart` (freshPart in snapshot.ts). */
const LINE_START_BYTES = 4;

/** Both counts in one statement, each an index-only range of the organization's key. */
const COUNTS = `SELECT (SELECT count(*) FROM orders WHERE organization_id = $1)::float8 AS orders,
  (SELECT count(*) FROM order_lines WHERE organization_id = $1)::float8 AS lines`;

export interface SnapshotSize {
  readonly orders: number;
  readonly lines: number;
  readonly bytes: number;
}

/** The organization's orders and lines now, and the bytes a snapshot of them takes. */
export async function expectedSnapshotSize(
  db: Pick<Queryable, 'query'>,
  organizationId: string,
): Promise<SnapshotSize> {
  const [row] = await db.query<{ orders: number; lines: number }>(COUNTS, [organizationId]);
  const [orders, lines] = [Number(row?.orders ?? 0), Number(row?.lines ?? 0)];
  return { orders, lines, bytes: orders * (BYTES_PER_ORDER + LINE_START_BYTES) + lines * BYTES_PER_LINE };
}
