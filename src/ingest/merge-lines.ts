// An import's order lines (SPEC section 15, L1) into order_lines, in the merge's transaction
// (src/ingest/merge.ts, stream-merge.ts). A file import's own staging holds them one typed row a
// line, beside its orders (src/ingest/staging.ts); the shared import_staging holds each order's
// lines as one JSON array, expanded here by the database. Either way a staged order `s` has its
// lines as a FROM item (LinesOf) joined to it, set-based. A line belongs to one version of its
// order (migration 017): lines are written only for orders whose row this transaction wrote, and
// an order whose only change is in its lines gets its row stamped too, so that data_version,
// change_xid and order_retirements see the change as the order's (I2).
import { LINE_FIELDS } from './order-line.js';

/**
 * The staged lines of the staged order `s` (an alias): a FROM item of the columns `position`
 * (from 0) and LINE_FIELDS, to LATERAL-join to it.
 */
export type LinesOf = (s: string) => string;

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

/** The lines of an order staged in import_staging: its JSON array, each line's place from 0. */
export const jsonLinesOf: LinesOf = (s) => `(
  SELECT (j.n - 1)::int AS position, ${LINE_FIELDS.map((f) => `j.${f}`).join(', ')}
  FROM ROWS FROM (jsonb_to_recordset(${s}.lines) AS (${LINE_FIELDS.map((f) => `${f} ${LINE_TYPES[f]}`).join(', ')}))
    WITH ORDINALITY AS j (${LINE_FIELDS.join(', ')}, n))`;

/**
 * The lines of an order staged in a file import's own tables: those of its line number (the
 * planner turns it into a join). `where`: a further condition on the lines `li` (a batch's range).
 */
export const tableLinesOf =
  (table: string, where = 'true'): LinesOf =>
  (s) =>
    `(SELECT * FROM ${table} li WHERE li.line = ${s}.line AND ${where})`;

const STORED_COLUMNS = `organization_id, store_id, external_id, position, ${LINE_FIELDS.join(', ')}`;
const LINE_VALUES = LINE_FIELDS.map((f) => `l.${f}`).join(', ');

/** Inserts the lines of every staged order of `from` (a FROM item): orders all new or all rewritten. */
export const insertLinesOf = (from: string, linesOf: LinesOf): string => `
  INSERT INTO order_lines (${STORED_COLUMNS})
  SELECT $1::bigint, st.id, s.external_id, l.position, ${LINE_VALUES} FROM ${from} s
  JOIN stores st ON st.organization_id = $1 AND st.address = s.store_address
  CROSS JOIN LATERAL ${linesOf('s')} l`;

// The staged orders of `from` whose row this transaction wrote (inserted or replaced: its
// change_xid, migration 012), each looked up by its whole key; a FROM item of its own (OFFSET 0).
// The planner counts about one such order whatever the truth (change_xid's statistics know no row
// of a transaction still running). As a plain join it started from orders_by_change and scanned
// the whole staged table once for each order written: a 40,000-order import into an organization
// with orders ran for hours (issue 18's slow readers). Fenced, the staged orders are read once,
// each looks its order up by key (the lookup a subquery of its own, the transaction's test outside
// it), and the lines are then looked up by order, whatever the statistics say.
const writtenNow = (from: string): string => `(
  SELECT st.id AS store_id, s.* FROM ${from} s
  JOIN stores st ON st.organization_id = $1 AND st.address = s.store_address
  CROSS JOIN LATERAL (
    SELECT o.change_xid FROM orders o
    WHERE o.organization_id = $1 AND o.store_id = st.id AND o.external_id = s.external_id
    OFFSET 0
  ) o
  WHERE o.change_xid = pg_current_xact_id()
  OFFSET 0)`;

/**
 * I2: removes the lines of the staged orders of `from` that this transaction wrote. Their rows are
 * gathered first, each written order looking its lines up by key, then removed by their place: as
 * a join, a planner that counted few lines for the organization (statistics not yet taken) read
 * them all and ran the written orders' whole lookup again for each.
 */
export const deleteRewrittenLines = (from: string): string => `
  DELETE FROM order_lines WHERE ctid = ANY (ARRAY(
    SELECT l.ctid FROM ${writtenNow(from)} w
    CROSS JOIN LATERAL (
      SELECT ol.ctid FROM order_lines ol
      WHERE ol.organization_id = $1 AND ol.store_id = w.store_id AND ol.external_id = w.external_id
      OFFSET 0
    ) l))`;

/** I2: inserts the lines of the staged orders of `from` that this transaction wrote. */
export const insertRewrittenLines = (from: string, linesOf: LinesOf): string => `
  INSERT INTO order_lines (${STORED_COLUMNS})
  SELECT $1::bigint, s.store_id, s.external_id, l.position, ${LINE_VALUES}
  FROM ${writtenNow(from)} s
  CROSS JOIN LATERAL ${linesOf('s')} l`;

// An order's stored lines and its staged ones, as arrays of typed rows in their order: equal
// exactly when every field of every line is (12.3 = 12.30, as numeric).
const linesDiffer = (linesOf: LinesOf): string => `
  ARRAY(SELECT ROW(${LINE_FIELDS.map((f) => `ol.${f}`).join(', ')}) FROM order_lines ol
        WHERE ol.organization_id = $1 AND ol.store_id = o.store_id AND ol.external_id = o.external_id
        ORDER BY ol.position)
  IS DISTINCT FROM
  ARRAY(SELECT ROW(${LINE_VALUES}) FROM ${linesOf('s')} l ORDER BY l.position)`;

/**
 * I2: stamps, as the upsert would, the existing orders of `from` (a FROM item of one line per
 * order) that the file gives unchanged but for their lines: the upsert leaves those rows alone
 * (`unchanged` is its own test, negated), and their lines are then replaced with the others'.
 */
export const stampLineChanges = (from: string, linesOf: LinesOf, unchanged: string): string => `
  UPDATE orders o SET updated_at = now(), change_xid = pg_current_xact_id()
  FROM ${from} s
  JOIN stores st ON st.organization_id = $1 AND st.address = s.store_address
  WHERE o.organization_id = $1 AND o.store_id = st.id AND o.external_id = s.external_id
    AND ${unchanged} AND ${linesDiffer(linesOf)}`;
