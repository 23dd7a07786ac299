// What changed in an organization's orders since a snapshot was read (issue 19, migration 012),
// read in one REPEATABLE READ transaction: its data version, its database snapshot (the next
// delta's start) and its rows all describe one moment. Changed since S0, read under S1: rows
// whose change_xid is not visible in S0 (pg_visible_in_snapshot). A transaction
// in flight at S0 is not visible in S0: its rows count as changed once committed, whatever the
// order in which transactions started or committed, so no committed change is ever missed. A
// customer touched by a change (an order of theirs written, replaced or deleted, or an order
// that moved to or from them) has all their current orders read again (U2 from them).
import type { Database, Queryable } from '../../db/database.js';
import { anonymousKey } from './codes.js';
import { snapshotLabel, type SnapshotLabel } from './build-snapshot.js';
import type { Delta } from './live-snapshot.js';
import { LINES_JSON, type LineValues } from './line-columns.js';
import type { OrderValues } from './order-columns.js';

/** A delta too large to be worth applying, or that says everything changed: rebuild. */
export const REBUILD = 'rebuild';

// NOT pg_visible_in_snapshot(x, S0), as two index scans: x >= xmax(S0) (a transaction that
// started after S0) and x in xip(S0) (in flight at S0); xmax and xip are read from S0's text
// form 'xmin:xmax:xip,…'. Not a range from xmin: a long transaction anywhere in the database
// holds xmin back, and every order written since would be read again at each delta.
const changed = (table: string, columns: string, column: string) =>
  `(SELECT ${columns} FROM ${table} WHERE organization_id = $1 AND ${column} >= $2::xid8 LIMIT $4)
   UNION ALL
   (SELECT ${columns} FROM ${table} WHERE organization_id = $1 AND ${column} = ANY ($3::xid8[]) LIMIT $4)`;

/** xmax and the in-flight ids of a pg_snapshot's text form. */
function snapshotParts(snapshot: string): [string, string[]] {
  const [, xmax, xip] = snapshot.split(':');
  if (!xmax || !/^\d+$/.test(xmax)) throw new Error(`not a pg_snapshot: ${snapshot}`);
  return [xmax, xip ? xip.split(',').filter((x) => /^\d+$/.test(x)) : []];
}

const VALUES = `o.customer, floor(extract(epoch FROM o.created_at))::text AS seconds, o.store_id::text AS store_id,
  o.status, coalesce(o.billing_country, 'Unknown') AS country, o.items,
  (o.total * 100)::text AS c0, (o.tax_total * 100)::text AS c1, (o.shipping_total * 100)::text AS c2,
  (o.fee_total * 100)::text AS c3, (o.refund_total * 100)::text AS c4, (o.refund_tax * 100)::text AS c5,
  (o.refund_shipping * 100)::text AS c6, o.external_id, ${LINES_JSON}`;

type ValueRow = {
  customer: string | null;
  seconds: string;
  store_id: string;
  status: string;
  country: string;
  items: number;
  c0: string;
  c1: string;
  c2: string;
  c3: string;
  c4: string;
  c5: string;
  c6: string;
  external_id: string;
  /** Section 15: the order's lines as JSON text (null: none). */
  lines: string | null;
};

function orderValues(row: ValueRow): OrderValues {
  const storeId = Number(row.store_id);
  return {
    customer: row.customer,
    seconds: Number(row.seconds),
    storeId,
    status: row.status,
    country: row.country,
    items: Number(row.items),
    cents: [row.c0, row.c1, row.c2, row.c3, row.c4, row.c5, row.c6].map(Number),
    key: row.customer === null ? anonymousKey(storeId, row.external_id) : null,
    lines: row.lines === null ? [] : (JSON.parse(row.lines) as LineValues[]),
  };
}

/**
 * The organization's changes since `since` (a pg_snapshot as text), at most `maxOrders` orders;
 * REBUILD when there are more, or a statement retired too many to list; undefined when the
 * organization is gone.
 */
export async function readDelta(
  db: Pick<Database, 'transaction'>,
  organizationId: string,
  since: string,
  maxOrders: number,
): Promise<Delta | typeof REBUILD | undefined> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    const label = await snapshotLabel(tx, organizationId);
    if (!label) return undefined;
    return readChanges(tx, organizationId, since, maxOrders, label);
  });
}

async function readChanges(
  tx: Queryable,
  organizationId: string,
  since: string,
  maxOrders: number,
  at: SnapshotLabel,
): Promise<Delta | typeof REBUILD> {
  const [xmax, inFlight] = snapshotParts(since);
  const retired = await tx.query<{
    store_id: string | null;
    external_id: string | null;
    customer: string | null;
  }>(changed('order_retirements', 'store_id::text, external_id, customer', 'retired_xid'), [
    organizationId,
    xmax,
    inFlight,
    maxOrders + 1,
  ]);
  if (retired.length > maxOrders || retired.some((r) => r.store_id === null)) return REBUILD;
  const written = await tx.query<{ customer: string | null; store_id: string; external_id: string }>(
    changed(
      'orders',
      'customer, store_id::text, CASE WHEN customer IS NULL THEN external_id END AS external_id',
      'change_xid',
    ),
    [organizationId, xmax, inFlight, maxOrders + 1],
  );
  if (written.length + retired.length > maxOrders) return REBUILD;
  const customers = new Set<string>();
  for (const row of [...retired, ...written]) if (row.customer !== null) customers.add(row.customer);
  const anonymous = written.filter((row) => row.customer === null);
  const rows =
    customers.size === 0
      ? []
      : await tx.query<ValueRow>(
          // One bitmap scan of orders_by_customer (migration 010) for the customers' hashes, an
          // array computed once (an InitPlan): its size unknown to the planner, the plan never
          // depends on how many customers changed. A join (even LATERAL, which the planner
          // flattens) was planned as a hash join over the whole organization: 1.2 s at a
          // million orders, for each delta (issue 19, 20 orders a second).
          `SELECT ${VALUES} FROM orders o WHERE o.organization_id = $1
             AND hashtextextended(o.customer, 0) = ANY (
               (SELECT array_agg(hashtextextended(c, 0)) FROM unnest($2::text[]) c)::bigint[])
             AND o.customer = ANY ($2::text[])
           LIMIT $3`,
          [organizationId, [...customers], maxOrders + 1],
        );
  if (rows.length + anonymous.length > maxOrders) return REBUILD;
  if (anonymous.length > 0) {
    rows.push(
      ...(await tx.query<ValueRow>(
        `SELECT ${VALUES} FROM orders o WHERE o.organization_id = $1 AND o.customer IS NULL
           AND (o.store_id, o.external_id) IN (SELECT * FROM unnest($2::bigint[], $3::text[]))`,
        [organizationId, anonymous.map((r) => r.store_id), anonymous.map((r) => r.external_id)],
      )),
    );
  }
  const stores = await tx.query<{ id: string; address: string }>(
    'SELECT id::text, address FROM stores WHERE organization_id = $1',
    [organizationId],
  );
  return {
    ...at,
    stores: stores.map((s) => [Number(s.id), s.address] as const),
    customers: [...customers],
    retiredAnonymous: retired
      .filter((r) => r.customer === null)
      .map((r) => [Number(r.store_id), r.external_id as string] as const),
    orders: rows.map(orderValues),
  };
}
