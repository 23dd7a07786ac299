// An import's order lines (SPEC section 15, L1) into order_lines, in the merge's transaction
// (src/ingest/merge.ts, stream-merge.ts). Each staged order carries its lines as one JSON array
// (src/ingest/staging.ts), expanded here by the database. A line belongs to one version of its
// order (migration 017): lines are written only for orders whose row this transaction wrote, and
// an order whose only change is in its lines gets its row stamped too, so that data_version,
// change_xid and order_retirements see the change as the order's (I2).
import { LINE_FIELDS } from './order-line.js';

// jsonb_to_recordset's column types, those of order_lines: the database checks each value once more.
const LINE_TYPES: Record<(typeof LINE_FIELDS)[number], string> = {
  line_id: 'text',
  product_id: 'text',
  variant_id: 'text',
  sku: 'text',
  product_name: 'text',
  variant_name: 'text',
  categories: 'text[]',
  quantity: 'integer',
  subtotal: 'numeric(16, 2)',
  discount: 'numeric(16, 2)',
  refunded_quantity: 'integer',
  refunded_amount: 'numeric(16, 2)',
};

/** The lines of staged row `s`, as `l` with `l.n` its place from 1 (a FROM item to LATERAL-join). */
const EXPANDED = `ROWS FROM (jsonb_to_recordset(s.lines) AS (${LINE_FIELDS.map((f) => `${f} ${LINE_TYPES[f]}`).join(', ')}))
  WITH ORDINALITY AS l (${LINE_FIELDS.join(', ')}, n)`;

const STORED_COLUMNS = `organization_id, store_id, external_id, position, ${LINE_FIELDS.join(', ')}`;
const expandedColumns = `$1::bigint, st.id, s.external_id, (l.n - 1)::int, ${LINE_FIELDS.map((f) => `l.${f}`).join(', ')}`;

/** Inserts the lines of every staged order of `from` (a FROM item): orders all new or all rewritten. */
export const insertLinesOf = (from: string): string => `
  INSERT INTO order_lines (${STORED_COLUMNS})
  SELECT ${expandedColumns} FROM ${from} s
  JOIN stores st ON st.organization_id = $1 AND st.address = s.store_address
  CROSS JOIN LATERAL ${EXPANDED}
  WHERE s.lines IS NOT NULL`;

// The staged orders of `from` whose row this transaction wrote (inserted or replaced: its
// change_xid, migration 012), each looked up by its whole key.
const writtenNow = (from: string): string => `
  SELECT st.id AS store_id, s.external_id, s.lines FROM ${from} s
  JOIN stores st ON st.organization_id = $1 AND st.address = s.store_address
  JOIN orders o ON o.organization_id = $1 AND o.store_id = st.id AND o.external_id = s.external_id
  WHERE o.change_xid = pg_current_xact_id()`;

/** I2: removes the lines of the staged orders of `from` that this transaction wrote. */
export const deleteRewrittenLines = (from: string): string => `
  DELETE FROM order_lines ol USING (${writtenNow(from)}) w
  WHERE ol.organization_id = $1 AND ol.store_id = w.store_id AND ol.external_id = w.external_id`;

/** I2: inserts the lines of the staged orders of `from` that this transaction wrote. */
export const insertRewrittenLines = (from: string): string => `
  INSERT INTO order_lines (${STORED_COLUMNS})
  SELECT $1::bigint, s.store_id, s.external_id, (l.n - 1)::int, ${LINE_FIELDS.map((f) => `l.${f}`).join(', ')}
  FROM (${writtenNow(from)}) s
  CROSS JOIN LATERAL ${EXPANDED}
  WHERE s.lines IS NOT NULL`;

// An order's stored lines and its staged ones, as arrays of typed rows in their order: equal
// exactly when every field of every line is (12.3 = 12.30, as numeric).
const linesDiffer = `
  ARRAY(SELECT ROW(${LINE_FIELDS.map((f) => `ol.${f}`).join(', ')}) FROM order_lines ol
        WHERE ol.organization_id = $1 AND ol.store_id = o.store_id AND ol.external_id = o.external_id
        ORDER BY ol.position)
  IS DISTINCT FROM
  ARRAY(SELECT ROW(${LINE_FIELDS.map((f) => `l.${f}`).join(', ')})
        FROM ${EXPANDED} ORDER BY l.n)`;

/**
 * I2: stamps, as the upsert would, the existing orders of `from` (a FROM item of one line per
 * order) that the file gives unchanged but for their lines: the upsert leaves those rows alone
 * (`unchanged` is its own test, negated), and their lines are then replaced with the others'.
 */
export const stampLineChanges = (from: string, unchanged: string): string => `
  UPDATE orders o SET updated_at = now(), change_xid = pg_current_xact_id()
  FROM ${from} s
  JOIN stores st ON st.organization_id = $1 AND st.address = s.store_address
  WHERE o.organization_id = $1 AND o.store_id = st.id AND o.external_id = s.external_id
    AND ${unchanged} AND ${linesDiffer}`;
