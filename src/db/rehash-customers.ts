// Migration 004's second half (issue 7, "Personal data"): customers stored as e-mails by earlier
// versions become their keyed hash. Run by migrate after the SQL, since SQL does not have the key.
// Idempotent and resumable: an e-mail always holds an '@' and a hash never does, so each batch
// (one transaction) rehashes whatever is left; a killed run goes on at the next start.
import { customerHash, customerKeyOf } from './customer-hash.js';
import type { Database, Queryable } from './database.js';

const BATCH = 5_000;

// The next e-mails stored as customers after $2, in order. For orders, a scan of the organization's
// orders each batch: orders_by_customer holds hashes (migration 010). Once, for old databases.
const NEXT_EMAILS = {
  orders: `SELECT DISTINCT customer FROM orders
    WHERE organization_id = $1 AND customer IS NOT NULL AND customer > $2 AND customer LIKE '%@%'
    ORDER BY customer LIMIT $3`,
  customer_first_orders: `SELECT customer FROM customer_first_orders
    WHERE organization_id = $1 AND customer > $2 AND customer LIKE '%@%'
    ORDER BY customer LIMIT $3`,
} as const;

const REHASH = {
  orders: `UPDATE orders o SET customer = m.hash
    FROM unnest($2::text[], $3::text[]) AS m (email, hash)
    WHERE o.organization_id = $1 AND hashtextextended(o.customer, 0) = hashtextextended(m.email, 0)
      AND o.customer = m.email`,
  // The earliest first order wins should the hash already be there.
  customer_first_orders: `WITH moved AS (
      DELETE FROM customer_first_orders f USING unnest($2::text[], $3::text[]) AS m (email, hash)
      WHERE f.organization_id = $1 AND f.customer = m.email
      RETURNING m.hash, f.first_order_at
    )
    INSERT INTO customer_first_orders (organization_id, customer, first_order_at)
    SELECT $1::bigint, hash, first_order_at FROM moved
    ON CONFLICT (organization_id, customer)
    DO UPDATE SET first_order_at = LEAST(customer_first_orders.first_order_at, EXCLUDED.first_order_at)`,
} as const;

/**
 * The rehash retires every order version it rewrites, and migration 012's trigger keeps each one's
 * customer in order_retirements for two days: here the e-mail. Those rows, and any other holding an
 * e-mail (a hash never has an '@'), are replaced by one that asks the snapshots to rebuild
 * (store_id NULL: every customer key of the organization changed).
 */
async function forgetRetiredEmails(tx: Queryable, organizationId: string): Promise<void> {
  await tx.query(
    `DELETE FROM order_retirements
     WHERE organization_id = $1 AND (retired_xid = pg_current_xact_id() OR customer LIKE '%@%')`,
    [organizationId],
  );
  await tx.query('INSERT INTO order_retirements (organization_id) VALUES ($1)', [organizationId]);
}

async function rehashTable(
  db: Database,
  lockId: number,
  customerKey: Buffer,
  organizationId: string,
  table: keyof typeof REHASH,
): Promise<number> {
  let after = '';
  let rehashed = 0;
  for (;;) {
    const emails = await db.transaction(async (tx: Queryable) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [lockId]);
      const rows = await tx.query<{ customer: string }>(NEXT_EMAILS[table], [organizationId, after, BATCH]);
      const found = rows.map((r) => r.customer);
      if (found.length > 0) {
        const hashes = found.map((email) => customerHash(customerKey, email));
        await tx.query(REHASH[table], [organizationId, found, hashes]);
        if (table === 'orders') await forgetRetiredEmails(tx, organizationId);
      }
      return found;
    });
    rehashed += emails.length;
    if (emails.length < BATCH) return rehashed;
    after = emails[emails.length - 1] ?? after;
  }
}

/** Rehashes every customer still stored as an e-mail; returns how many distinct values changed. */
export async function rehashCustomers(db: Database, lockId: number): Promise<number> {
  const pending = await db.query<{ organization_id: string }>(
    'SELECT organization_id FROM customer_rehash_pending ORDER BY organization_id',
  );
  if (pending.length === 0) return 0;
  const customerKey = customerKeyOf(db.secretKey);
  let rehashed = 0;
  for (const { organization_id: organizationId } of pending) {
    rehashed += await rehashTable(db, lockId, customerKey, organizationId, 'orders');
    rehashed += await rehashTable(db, lockId, customerKey, organizationId, 'customer_first_orders');
  }
  // DROP COLUMN and UPDATE leave the old values in the table files; a rewrite removes them.
  for (const table of ['orders', 'customer_first_orders', 'import_staging', 'order_retirements'])
    await db.query(`VACUUM (FULL, ANALYZE) ${table}`);
  await db.query('DELETE FROM customer_rehash_pending WHERE organization_id = ANY ($1::bigint[])', [
    pending.map((p) => p.organization_id),
  ]);
  return rehashed;
}
