// Orders with their lines (SPEC L1) into an organization, until the import reads `lines` itself
// (the `linesin` branch): the orders through the real import, then their lines written with SQL,
// each order's row touched in the same transaction as migration 017 asks (data_version, the
// columnar deltas). The interface is the import's: orders with an optional `lines` array, so that
// switching to the real import changes only this file.
import type { Database } from '../../src/db/database.js';
import { normalizeStoreAddress } from '../../src/db/store-address.js';
import { importOrderRecords } from '../../src/ingest/import.js';

/** One line of L1, as an import file gives it. */
export interface RawLine {
  line_id: string;
  product_id?: string | null;
  variant_id?: string | null;
  sku?: string | null;
  product_name: string;
  variant_name?: string | null;
  categories?: readonly string[];
  quantity: number;
  subtotal: string | number;
  discount?: string | number;
  refunded_quantity?: number;
  refunded_amount?: string | number;
}

export type OrderWithLines = Record<string, unknown> & {
  readonly store: string;
  readonly id: string;
  readonly lines?: readonly RawLine[];
};

const COLUMNS = [
  'organization_id',
  'store_id',
  'external_id',
  'line_id',
  'position',
  'product_id',
  'variant_id',
  'sku',
  'product_name',
  'variant_name',
  'categories',
  'quantity',
  'subtotal',
  'discount',
  'refunded_quantity',
  'refunded_amount',
];
const TYPES = [
  'bigint',
  'bigint',
  'text',
  'text',
  'integer',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text[]',
  'integer',
  'numeric',
  'numeric',
  'integer',
  'numeric',
];

/** Imports `orders` (I2: a re-imported order's lines are replaced wholly; no `lines`, none). */
export async function importOrdersWithLines(
  db: Database,
  organizationId: string,
  orders: readonly OrderWithLines[],
): Promise<void> {
  const result = await importOrderRecords(
    db,
    organizationId,
    orders.map(({ lines: _lines, ...order }) => order),
  );
  if (result.refused) throw new Error(`fixture refused: ${JSON.stringify(result).slice(0, 500)}`);
  const stores = await db.query<{ id: string; address: string }>(
    'SELECT id, address FROM stores WHERE organization_id = $1',
    [organizationId],
  );
  const storeId = new Map(stores.map((s) => [String(s.address), String(s.id)]));
  await db.transaction(async (tx) => {
    for (const order of orders) {
      const store = storeId.get(normalizeStoreAddress(order.store));
      const key = [organizationId, store, String(order.id)];
      await tx.query(
        'DELETE FROM order_lines WHERE organization_id = $1 AND store_id = $2 AND external_id = $3',
        key,
      );
      for (const [position, line] of (order.lines ?? []).entries()) {
        const values = [
          ...key,
          line.line_id,
          position,
          line.product_id ?? null,
          line.variant_id ?? null,
          line.sku ?? null,
          line.product_name,
          line.variant_name ?? null,
          [...(line.categories ?? [])],
          line.quantity,
          String(line.subtotal),
          String(line.discount ?? 0),
          line.refunded_quantity ?? 0,
          String(line.refunded_amount ?? 0),
        ];
        const placeholders = TYPES.map((type, i) => `$${i + 1}::${type}`).join(', ');
        await tx.query(`INSERT INTO order_lines (${COLUMNS.join(', ')}) VALUES (${placeholders})`, values);
      }
      // Migration 017: the order's row changes with its lines (data_version, change_xid).
      await tx.query(
        'UPDATE orders SET updated_at = now() WHERE organization_id = $1 AND store_id = $2 AND external_id = $3',
        key,
      );
    }
  });
}
