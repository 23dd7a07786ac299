// Migration 014's second half (issue 18, finding 5): the addresses stored before the WHATWG rule
// (store-address.ts) are rewritten with it, organization by organization (one transaction each,
// so a killed run goes on at the next start). Stores whose addresses turn out to be one are merged
// into one, as a user expects of `HTTPS://E.EXAMPLE.FR` and `https://e.example.fr`: the store
// already at the normalized address (else the oldest) keeps its id and takes the others' orders;
// an order both had (same id) keeps its last written version (updated_at); a connection moves
// with its store unless the kept store has one. Credentials leave stored addresses. An address
// that is no http(s) URL (earlier versions imported any text) is left as it is.
import type { Database, Queryable } from './database.js';
import { checkStoreAddress, WITH_CREDENTIALS } from './store-address.js';

type StoreRow = {
  readonly id: string;
  readonly address: string;
};

/** What a stored address becomes: the rule's address, without credentials, or itself. */
function rewritten(address: string): string {
  const checked = checkStoreAddress(address);
  if (checked.address !== undefined) return checked.address;
  return checked.problem === WITH_CREDENTIALS ? checked.shown : address;
}

// $1 organization, $2 the store kept, $3 the store merged into it.
const MERGE = [
  // An order both stores have: the later written version wins.
  `DELETE FROM orders k USING orders d
   WHERE k.organization_id = $1 AND k.store_id = $2 AND d.organization_id = $1 AND d.store_id = $3
     AND d.external_id = k.external_id AND d.updated_at > k.updated_at`,
  `DELETE FROM orders d USING orders k
   WHERE d.organization_id = $1 AND d.store_id = $3 AND k.organization_id = $1 AND k.store_id = $2
     AND k.external_id = d.external_id`,
  'UPDATE orders SET store_id = $2 WHERE organization_id = $1 AND store_id = $3',
  `UPDATE store_connections SET store_id = $2 WHERE organization_id = $1 AND store_id = $3
     AND NOT EXISTS (SELECT 1 FROM store_connections WHERE organization_id = $1 AND store_id = $2)`,
  'DELETE FROM stores WHERE organization_id = $1 AND id = $3 AND id <> $2',
];

// U2 after merges (an order dropped as a duplicate may have been a customer's first), as
// refreshFirstOrders('all') computes it (src/metrics/first-orders.ts, S1's counted orders).
const REFRESH_FIRST_ORDERS = [
  'DELETE FROM customer_first_orders WHERE organization_id = $1',
  `INSERT INTO customer_first_orders (organization_id, customer, first_order_at)
   SELECT $1::bigint, o.customer, min(o.created_at) FROM orders o
   WHERE o.organization_id = $1 AND o.customer IS NOT NULL
     AND o.status <> ALL ((SELECT excluded_statuses FROM organizations WHERE id = $1)::text[])
   GROUP BY o.customer`,
];

/** Rewrites one organization's addresses; the number of stores merged into another. */
async function normalizeOrganization(tx: Queryable, organizationId: string): Promise<number> {
  // As an import's merge does before it writes stores (src/ingest/merge.ts).
  await tx.query('SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
  const stores = await tx.query<StoreRow>(
    'SELECT id::text AS id, address FROM stores WHERE organization_id = $1 ORDER BY id',
    [organizationId],
  );
  const groups = new Map<string, StoreRow[]>();
  for (const store of stores) {
    const target = rewritten(store.address);
    groups.set(target, [...(groups.get(target) ?? []), store]);
  }
  let merged = 0;
  for (const [target, group] of groups) {
    const kept = group.find((s) => s.address === target) ?? group[0];
    if (!kept) continue;
    for (const other of group) {
      if (other === kept) continue;
      for (const statement of MERGE) await tx.query(statement, [organizationId, kept.id, other.id]);
      merged++;
    }
    if (kept.address !== target)
      await tx.query('UPDATE stores SET address = $3 WHERE organization_id = $1 AND id = $2', [
        organizationId,
        kept.id,
        target,
      ]);
  }
  if (merged > 0) for (const statement of REFRESH_FIRST_ORDERS) await tx.query(statement, [organizationId]);
  return merged;
}

/** Runs over the organizations migration 014 listed; the number of stores merged. Idempotent. */
export async function normalizeStoredAddresses(db: Database, lockId: number): Promise<number> {
  const pending = await db.query<{ organization_id: string }>(
    'SELECT organization_id::text AS organization_id FROM store_address_pending ORDER BY organization_id',
  );
  let merged = 0;
  for (const { organization_id: organizationId } of pending) {
    merged += await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [lockId]);
      const still = await tx.query(
        'DELETE FROM store_address_pending WHERE organization_id = $1 RETURNING 1',
        [organizationId],
      );
      return still.length > 0 ? normalizeOrganization(tx, organizationId) : 0;
    });
  }
  return merged;
}
