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

/** An order of the import format (section 12) with its lines (L1). */
export interface OrderWithLines {
  readonly store: string;
  readonly id: string;
  readonly lines?: readonly RawLine[];
}

const COLUMNS: readonly (readonly [string, string])[] = [
  ['store_id', 'bigint'],
  ['external_id', 'text'],
  ['line_id', 'text'],
  ['position', 'integer'],
  ['product_id', 'text'],
  ['variant_id', 'text'],
  ['sku', 'text'],
  ['product_name', 'text'],
  ['variant_name', 'text'],
  // An array of arrays cannot be unnested one level: each line's categories travel as JSON.
  ['categories', 'text'],
  ['quantity', 'integer'],
  ['subtotal', 'numeric'],
  ['discount', 'numeric'],
  ['refunded_quantity', 'integer'],
  ['refunded_amount', 'numeric'],
];

/** Imports `orders` (I2: a re-imported order's lines are replaced wholly; no `lines`, none). */
export async function importOrdersWithLines(
  db: Database,
  organizationId: string,
  orders: readonly OrderWithLines[],
): Promise<void> {
  const records = orders.map(({ lines: _lines, ...order }) => order as Record<string, unknown>);
  const result = await importOrderRecords(db, organizationId, records);
  if (result.refused) throw new Error(`fixture refused: ${JSON.stringify(result).slice(0, 500)}`);
  const stores = await db.query<{ id: string; address: string }>(
    'SELECT id, address FROM stores WHERE organization_id = $1',
    [organizationId],
  );
  const storeId = new Map(stores.map((s) => [String(s.address), String(s.id)]));
  // The last import of an order wins (I2), as in the import itself.
  const last = new Map(orders.map((o) => [`${normalizeStoreAddress(o.store)}\u0000${o.id}`, o]));
  const keys = [...last.values()].map((o) => [storeId.get(normalizeStoreAddress(o.store)), String(o.id)]);
  const columns: unknown[][] = COLUMNS.map(() => []);
  for (const order of last.values()) {
    for (const [position, line] of (order.lines ?? []).entries()) {
      const row = [
        storeId.get(normalizeStoreAddress(order.store)),
        String(order.id),
        line.line_id,
        position,
        line.product_id ?? null,
        line.variant_id ?? null,
        line.sku ?? null,
        line.product_name,
        line.variant_name ?? null,
        JSON.stringify(line.categories ?? []),
        line.quantity,
        String(line.subtotal),
        String(line.discount ?? 0),
        line.refunded_quantity ?? 0,
        String(line.refunded_amount ?? 0),
      ];
      row.forEach((value, i) => columns[i]?.push(value));
    }
  }
  const orderKeys = [keys.map((k) => k[0]), keys.map((k) => k[1])];
  const byKey =
    'organization_id = $1 AND (store_id, external_id) IN (SELECT * FROM unnest($2::bigint[], $3::text[]))';
  await db.transaction(async (tx) => {
    await tx.query(`DELETE FROM order_lines WHERE ${byKey}`, [organizationId, ...orderKeys]);
    const unnested = COLUMNS.map(([, type], i) => `$${i + 2}::${type}[]`).join(', ');
    const names = COLUMNS.map(([name]) => name);
    const values = names.map((name) =>
      name === 'categories' ? 'ARRAY(SELECT json_array_elements_text(categories::json))' : name,
    );
    await tx.query(
      `INSERT INTO order_lines (organization_id, ${names.join(', ')})
       SELECT $1, ${values.join(', ')} FROM unnest(${unnested}) AS x(${names.join(', ')})`,
      [organizationId, ...columns],
    );
    // Migration 017: the order's row changes with its lines (data_version, change_xid).
    await tx.query(`UPDATE orders SET updated_at = now() WHERE ${byKey}`, [organizationId, ...orderKeys]);
  });
}
