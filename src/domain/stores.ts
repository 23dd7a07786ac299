// Stores connected to an organization. Their address is the `store` dimension's value.
import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { checkStoreAddress } from '../ingest/store-address.js';

/** Connects a store by its public URL; returns the address as stored. */
export async function addStore(db: Queryable, organizationId: string, rawAddress: string): Promise<string> {
  const checked = checkStoreAddress(rawAddress);
  if (checked.problem !== undefined) {
    throw new AppError(
      'INVALID_PARAMETER',
      `Adresse de boutique invalide : « ${checked.shown.slice(0, 200)} » (${checked.problem})`,
    );
  }
  const address = checked.address;
  // The organization's row is locked before the store is written, as an import's merge does
  // (src/ingest/merge.ts): a store added while an import writes the same address waits for it
  // and finds the store there, instead of the two waiting for each other (a deadlock).
  const rows = await db.query(
    `WITH organization AS (SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE)
     INSERT INTO stores (organization_id, address) SELECT id, $2 FROM organization
     ON CONFLICT (organization_id, address) DO NOTHING RETURNING id`,
    [organizationId, address],
  );
  if (rows.length === 0) throw new AppError('CONFLICT', `Boutique déjà connectée : ${address}`);
  return address;
}

export async function listStores(
  db: Queryable,
  organizationId: string,
): Promise<{ address: string; orders: number }[]> {
  const rows = await db.query<{ address: string; orders: string }>(
    `SELECT s.address, count(o.*) AS orders FROM stores s
     LEFT JOIN orders o ON o.organization_id = s.organization_id AND o.store_id = s.id
     WHERE s.organization_id = $1 GROUP BY s.id, s.address ORDER BY s.address`,
    [organizationId],
  );
  return rows.map((r) => ({ address: r.address, orders: Number(r.orders) }));
}

/** Whether the organization has any order at all (the Revenue page's empty state, issue 30). */
export async function hasOrders(db: Queryable, organizationId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM orders WHERE organization_id = $1 LIMIT 1', [organizationId]);
  return rows.length > 0;
}

/** Whether the organization has any order line (section 15): the « Produits » page's empty state. */
export async function hasOrderLines(db: Queryable, organizationId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM order_lines WHERE organization_id = $1 LIMIT 1', [
    organizationId,
  ]);
  return rows.length > 0;
}
