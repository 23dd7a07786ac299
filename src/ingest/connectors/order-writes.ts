// Writing what a store said (issue 11): order lines go through the import's own validation
// (validateOrder), staging and merge (I2 upsert, U2 first orders), so that synced figures are
// those of importing the same orders from a file; orders that no longer count are deleted and
// their customers' first orders recomputed. One transaction per page, fenced by the connection's
// lease: a worker that lost its lease writes nothing.
import type { Database, Queryable } from '../../db/database.js';
import { refreshFirstOrders } from '../../metrics/first-orders.js';
import { customerKeyOf } from '../customer.js';
import { discardStaged, lockOrganization, mergeStaged, sharedLines } from '../merge.js';
import { StagingBuffer, sharedStaging } from '../staging.js';
import { vacuumIfBloated } from '../statistics.js';
import { validateOrder } from '../validate-order.js';
import type { OrderLine, UnmappedOrder } from './connector.js';
import { ordersWritten } from '../../observability/metrics.js';

export interface LeasedConnection {
  readonly id: string;
  readonly organizationId: string;
  readonly storeId: string;
  readonly address: string;
}

export class LeaseLost extends Error {
  constructor() {
    super('bail de synchronisation perdu');
  }
}

export interface Changes {
  readonly lines: readonly OrderLine[];
  readonly gone: readonly string[];
}

export interface Written {
  readonly imported: number;
  readonly updated: number;
  readonly removed: number;
  readonly rejected: readonly UnmappedOrder[];
}

/**
 * Deletes orders of a store (`'all'` of them, or those ids), remembering their customers under
 * `importId` in import_customers for refreshFirstOrders (U2); returns how many went.
 */
export async function removeStoreOrders(
  tx: Queryable,
  organizationId: string,
  storeId: string,
  importId: string,
  externalIds: readonly string[] | 'all',
): Promise<number> {
  const [row] = await tx.query<{ removed: number }>(
    `WITH gone AS (
       DELETE FROM orders WHERE organization_id = $1 AND store_id = $2
         AND ($3::text[] IS NULL OR external_id = ANY ($3::text[]))
       RETURNING customer
     ), remembered AS (
       INSERT INTO import_customers (organization_id, import_id, customer)
       SELECT DISTINCT $1::bigint, $4::uuid, customer FROM gone WHERE customer IS NOT NULL
       ON CONFLICT DO NOTHING
     )
     SELECT count(*)::int AS removed FROM gone`,
    [organizationId, storeId, externalIds === 'all' ? null : [...externalIds], importId],
  );
  return row?.removed ?? 0;
}

/** Holds the connection's row until the transaction ends; throws LeaseLost when another owns it. */
export async function fence(tx: Queryable, connectionId: string, owner: string): Promise<void> {
  const rows = await tx.query(
    'SELECT 1 FROM store_connections WHERE id = $1 AND lease_owner = $2 FOR UPDATE',
    [connectionId, owner],
  );
  if (rows.length === 0) throw new LeaseLost();
}

/**
 * Writes one page of changes under the import id `jobId` (a running import job, so that no
 * recovery takes its staged rows for a killed import's), then runs `andThen` in the same
 * transaction (the sync engine moves its cursor there: a page is never written twice).
 */
export async function writeChanges(
  db: Database,
  connection: LeasedConnection,
  owner: string,
  jobId: string,
  changes: Changes,
  andThen: (tx: Queryable, rejected: readonly UnmappedOrder[]) => Promise<void>,
): Promise<Written> {
  const customerKey = customerKeyOf(db.secretKey);
  const staging = new StagingBuffer(db, sharedStaging(connection.organizationId, jobId));
  const rejected: UnmappedOrder[] = [];
  let staged = 0;
  for (const line of changes.lines) {
    const validation = validateOrder({ ...line, store: connection.address }, customerKey);
    if (validation.ok) staging.add(++staged, validation.order);
    else
      rejected.push({
        id: line.id,
        message: validation.errors.map((e) => `${e.field} : ${e.message}`).join(' ; '),
      });
  }
  let merged = false;
  try {
    await staging.finish();
    const counts = await db.transaction(async (tx) => {
      await fence(tx, connection.id, owner);
      // Every writer of an organization's orders locks its row first (src/ingest/merge.ts).
      await lockOrganization(tx, connection.organizationId);
      const removed =
        changes.gone.length > 0
          ? await removeStoreOrders(tx, connection.organizationId, connection.storeId, jobId, changes.gone)
          : 0;
      let result = { imported: 0, updated: 0 };
      if (staged > 0) {
        // A recovery that took this job for a killed one would have removed its staged rows:
        // then nothing is merged and the page is read again, rather than a page silently lost.
        const [row] = await tx.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM import_staging WHERE organization_id = $1 AND import_id = $2',
          [connection.organizationId, jobId],
        );
        if (row?.n !== staged) throw new Error(`lignes préparées disparues (${row?.n ?? 0} sur ${staged})`);
        result = await mergeStaged(tx, connection.organizationId, jobId, sharedLines(staged));
        await discardStaged(tx, connection.organizationId, jobId);
      } else if (removed > 0) {
        await refreshFirstOrders(tx, connection.organizationId, { customersOfImport: jobId });
        await discardStaged(tx, connection.organizationId, jobId);
      }
      await andThen(tx, rejected);
      return { ...result, removed };
    });
    merged = true;
    ordersWritten.inc({ source: 'connector' }, counts.imported + counts.updated); // issue 29: /metrics
    // PGlite runs no autovacuum: a store whose orders keep changing would grow the tables for good.
    if (db.engine === 'embedded') await vacuumIfBloated(db).catch(() => undefined);
    return { ...counts, rejected };
  } finally {
    if (!merged) {
      await staging.settle();
      await discardStaged(db, connection.organizationId, jobId).catch(() => undefined);
    }
  }
}
