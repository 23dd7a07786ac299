// The merge of an import's staged lines into orders (I2) and first orders (U2): one transaction,
// the caller's. Two plans, chosen under the organization's row lock:
// - an organization without any order yet (a first import, the largest ones) needs no upsert: the
//   lines are inserted as they are, and its first orders computed from them;
// - otherwise each order is upserted from its last line (an order the file gives as it is stored
//   is left alone), the new ones folded into first orders and the customers of replaced orders
//   recomputed.
// A file rarely repeats an order, and keeping the last line of each sorts them all: the first
// plan runs without it under a savepoint, and again with it only when the database reports a
// repeat; the second counts repeated lines first (one pass), and keeps the last lines only then.
import type { Queryable } from '../db/database.js';
import { errorFields } from '../errors.js';
import { FOLD_NEW_ORDERS, firstOrdersFromLines, refreshFirstOrders } from '../metrics/first-orders.js';
import {
  deleteRewrittenLines,
  insertLinesOf,
  insertRewrittenLines,
  jsonLinesOf,
  stampLineChanges,
  tableLinesOf,
  type LinesOf,
} from './merge-lines.js';
import { indexesAfter } from './indexes-after.js';
import { ORDER_COLUMNS } from './staging.js';

/** An import's staged lines, and how many there are. */
export interface StagedLines {
  /** A FROM item; it may refer to $1 (the organization) and, when `byImport`, to $2 (the import). */
  readonly from: string;
  readonly byImport: boolean;
  readonly count: number;
  /** Known to repeat an order (a streamed import found one): the last line of each is kept at once. */
  readonly repeats?: boolean;
  /** Each staged order's lines (L1). */
  readonly linesOf: LinesOf;
  /** Run before a merge into existing orders: what looks an order's staged lines up by its line. */
  readonly prepareExisting?: string;
  /**
   * The staged tables of orders and of their lines, when a first import may write orders and
   * order_lines before their indexes (src/ingest/indexes-after.ts: the embedded engine only).
   */
  readonly indexesAfter?: { readonly orders: string; readonly lines: string };
}

/** The connector's pages, in the shared import_staging. */
export const sharedLines = (count: number): StagedLines => ({
  from: '(SELECT * FROM import_staging WHERE organization_id = $1 AND import_id = $2)',
  byImport: true,
  count,
  linesOf: jsonLinesOf,
});

/** A file import's own tables (createImportLines): its orders', and their lines'. */
export const tableLines = (
  table: string,
  linesTable: string,
  count: number,
  repeats = false,
  indexesAfter = false,
): StagedLines => ({
  from: table,
  byImport: false,
  count,
  repeats,
  linesOf: tableLinesOf(linesTable),
  // The comparison of stored and staged lines (stampLineChanges) looks each order's up.
  prepareExisting: `CREATE INDEX IF NOT EXISTS ${linesTable}_by_line ON ${linesTable} (line)`,
  ...(indexesAfter ? { indexesAfter: { orders: table, lines: linesTable } } : {}),
});

// A parameter a statement does not use has no type, which PostgreSQL refuses: each statement
// that reads the lines gets $2 only when they refer to it.
const paramsOf = (lines: StagedLines, organizationId: string, importId: string): string[] =>
  lines.byImport ? [organizationId, importId] : [organizationId];
/** The same for a statement that refers to no parameter but the lines'. */
const linesParams = (lines: StagedLines, organizationId: string, importId: string): string[] =>
  lines.byImport ? [organizationId, importId] : [];

export interface MergedCounts {
  /** New orders. */
  imported: number;
  /** Orders that existed and were replaced (I2). */
  updated: number;
}

/**
 * Merges into one organization run one after the other (the data_version bump of migration 007
 * takes this row lock anyway), so that "no order yet" stays true until this one commits.
 */
export async function lockOrganization(tx: Queryable, organizationId: string): Promise<void> {
  await tx.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
}

// In index order: a sequential scan may read every other organization's orders before one of these.
const HAS_ORDERS = `SELECT EXISTS (SELECT 1 FROM orders WHERE organization_id = $1
  ORDER BY organization_id, created_at LIMIT 1) AS found`;

export async function hasOrders(tx: Queryable, organizationId: string): Promise<boolean> {
  const [row] = await tx.query<{ found: boolean }>(HAS_ORDERS, [organizationId]);
  return row?.found === true;
}

/** Connects the stores of the lines of `from` (a FROM item), on first sight. */
export const connectStoresOf = (from: string): string => `
  INSERT INTO stores (organization_id, address)
  SELECT DISTINCT $1::bigint, store_address FROM ${from} s
  ON CONFLICT (organization_id, address) DO NOTHING`;

// The lines to write: every one, or the last of each order (I2) when the file repeats orders.
const latest = (lines: StagedLines, repeats: boolean): string =>
  repeats
    ? `(SELECT DISTINCT ON (store_address, external_id) * FROM ${lines.from} s
        ORDER BY store_address, external_id, line DESC)`
    : lines.from;

const INSERTED_COLUMNS = `organization_id, store_id, ${ORDER_COLUMNS.slice(1).join(', ')}`;
const selectedColumns = (lines: string): string => `
  SELECT $1::bigint, st.id, ${ORDER_COLUMNS.slice(1)
    .map((c) => `l.${c}`)
    .join(', ')} FROM ${lines} l
  JOIN stores st ON st.organization_id = $1 AND st.address = l.store_address`;

/** Inserts the lines of `from` (a FROM item) as orders: a plain INSERT, for orders none of which exists. */
export const insertOrdersOf = (from: string): string =>
  `INSERT INTO orders (${INSERTED_COLUMNS}) ${selectedColumns(from)}`;

// U2, I2: the customers whose first orders may move later or vanish: those of the orders this
// import replaces with another customer, instant or status (nothing else moves a first order),
// before and after. Run before the upsert, which changes them. New orders can only bring a
// first order earlier: the upsert folds them in itself (FOLD_NEW_ORDERS).
// Each line looks its order up by its whole key (OFFSET 0 keeps that lookup a subquery of its own:
// as a join, planners chose a partial key, filtering several orders a line).
const rememberReplacedCustomers = (lines: StagedLines): string => `
  INSERT INTO import_customers (organization_id, import_id, customer)
  SELECT DISTINCT $1::bigint, $2::uuid, c.customer FROM ${lines.from} s
  JOIN stores st ON st.organization_id = $1 AND st.address = s.store_address
  CROSS JOIN LATERAL (
    SELECT o.customer FROM orders o
    WHERE o.organization_id = $1 AND o.store_id = st.id AND o.external_id = s.external_id
      AND (o.customer, o.created_at, o.status) IS DISTINCT FROM (s.customer, s.created_at, s.status)
    OFFSET 0
  ) o
  CROSS JOIN LATERAL (VALUES (o.customer), (s.customer)) AS c (customer)
  WHERE c.customer IS NOT NULL
  ON CONFLICT DO NOTHING`;

/** The columns a replaced order takes from its line: all but its key. */
const REPLACED_COLUMNS = ORDER_COLUMNS.slice(2);

// I2: every order inserted or replaced in one statement; xmax = 0 tells a new row from a replaced
// one. An order the file repeats as it is stored is left alone (no new row version, no index
// entry, no data version bump): re-importing a whole export rewrites only what changed.
// The lines hold each order once here (`repeats` keeps the last line of each otherwise): with
// the WHERE below, the database would no longer report a second write of one order.
const upsertLines = (lines: StagedLines, repeats: boolean): string => `
  WITH upserted AS (
    INSERT INTO orders (${INSERTED_COLUMNS}) ${selectedColumns(latest(lines, repeats))}
    ON CONFLICT (organization_id, store_id, external_id) DO UPDATE
    SET ${REPLACED_COLUMNS.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_at = now(),
      change_xid = pg_current_xact_id()
    WHERE (${REPLACED_COLUMNS.map((c) => `orders.${c}`).join(', ')})
      IS DISTINCT FROM (${REPLACED_COLUMNS.map((c) => `EXCLUDED.${c}`).join(', ')})
    RETURNING (xmax = 0) AS inserted, customer, created_at, status
  ), ${FOLD_NEW_ORDERS('upserted')}
  SELECT (count(*) FILTER (WHERE inserted))::int AS imported FROM upserted`;

// The upsert's test negated: an existing order `o` the staged line `s` gives as it is stored.
const UNCHANGED = `(${REPLACED_COLUMNS.map((c) => `o.${c}`).join(', ')})
  IS NOT DISTINCT FROM (${REPLACED_COLUMNS.map((c) => `s.${c}`).join(', ')})`;

// How many lines repeat an order of an earlier line (I2), in one pass over the lines.
const repeatedLines = (lines: StagedLines): string => `
  SELECT coalesce(sum(n - 1), 0)::int AS repeated FROM (
    SELECT count(*) AS n FROM ${lines.from} s GROUP BY store_address, external_id HAVING count(*) > 1
  ) g`;

// What the database says when a plain INSERT writes an order twice: a unique key violated.
export const UNIQUE_VIOLATION = '23505';

/**
 * Runs `write` assuming no order is repeated; when the database finds one, undoes it (savepoint)
 * and runs it again on the last line of each order.
 */
async function withoutRepeatsFirst<T>(
  tx: Queryable,
  lines: StagedLines,
  write: (repeats: boolean) => Promise<T>,
) {
  if (lines.repeats === true) return { result: await write(true), repeats: true };
  await tx.query('SAVEPOINT without_repeats');
  try {
    const result = await write(false);
    await tx.query('RELEASE SAVEPOINT without_repeats');
    return { result, repeats: false };
  } catch (error) {
    const code = errorFields(error).code;
    if (code !== UNIQUE_VIOLATION) throw error;
    await tx.query('ROLLBACK TO SAVEPOINT without_repeats');
    return { result: await write(true), repeats: true };
  }
}

/** A first import: the lines inserted as they are, the first orders computed from them (U2). */
async function mergeIntoEmpty(
  tx: Queryable,
  organizationId: string,
  importId: string,
  lines: StagedLines,
): Promise<MergedCounts> {
  const params = paramsOf(lines, organizationId, importId);
  const bulk = lines.indexesAfter;
  // Each table's rows then its indexes, when that pays (bulk); the orders' key is built before
  // the lines' check of their orders (migration 020) looks them up.
  const { repeats } = await withoutRepeatsFirst(tx, lines, (repeated) =>
    indexesAfter(tx, 'orders', bulk?.orders, () => tx.query(insertOrdersOf(latest(lines, repeated)), params)),
  );
  // L1: every order is new
  await indexesAfter(tx, 'order_lines', bulk?.lines, () =>
    tx.query(insertLinesOf(latest(lines, repeats), lines.linesOf), params),
  );
  if (repeats) {
    // The orders now hold the last line of each order: the first orders are computed from them.
    await refreshFirstOrders(tx, organizationId, 'all');
    const [row] = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM orders WHERE organization_id = $1',
      [organizationId],
    );
    return { imported: row?.n ?? 0, updated: 0 };
  }
  // Each line is an order: the first orders come from the lines, without reading orders back.
  await firstOrdersFromLines(tx, organizationId, lines.from, params);
  return { imported: lines.count, updated: 0 };
}

/** Orders upserted from their last line (I2), first orders folded and recomputed (U2). */
async function mergeIntoExisting(
  tx: Queryable,
  organizationId: string,
  importId: string,
  lines: StagedLines,
): Promise<MergedCounts> {
  const params = paramsOf(lines, organizationId, importId);
  const [found] = await tx.query<{ repeated: number }>(
    repeatedLines(lines),
    linesParams(lines, organizationId, importId),
  );
  const repeated = found?.repeated ?? 0;
  if (lines.prepareExisting !== undefined) await tx.query(lines.prepareExisting);
  await tx.query(rememberReplacedCustomers(lines), [organizationId, importId]);
  const orders = latest(lines, repeated > 0);
  // I2, L1: an order changed only in its lines is stamped first (the upsert leaves it alone)...
  await tx.query(stampLineChanges(orders, lines.linesOf, UNCHANGED), params);
  const [counts] = await tx.query<{ imported: number }>(upsertLines(lines, repeated > 0), params);
  if (counts === undefined) throw new Error('merge returned no row');
  // ...then every order this transaction wrote gets the file's lines, wholly (`lines` absent: none).
  await tx.query(deleteRewrittenLines(orders), params);
  await tx.query(insertRewrittenLines(orders, lines.linesOf), params);
  await refreshFirstOrders(tx, organizationId, { customersOfImport: importId });
  // Every order the file names that was not new existed: replaced, or already as the file says.
  return { imported: counts.imported, updated: lines.count - repeated - counts.imported };
}

/** I2, U2: moves the staged lines into orders and keeps first orders current, in the caller's transaction. */
export async function mergeStaged(
  tx: Queryable,
  organizationId: string,
  importId: string,
  lines: StagedLines,
): Promise<MergedCounts> {
  // STATEMENT_TIMEOUT_MS cancels runaway reports; the merge's length follows the file's size.
  await tx.query('SET LOCAL statement_timeout = 0');
  await lockOrganization(tx, organizationId);
  await tx.query(connectStoresOf(lines.from), paramsOf(lines, organizationId, importId));
  const counts = (await hasOrders(tx, organizationId))
    ? await mergeIntoExisting(tx, organizationId, importId, lines)
    : await mergeIntoEmpty(tx, organizationId, importId, lines);
  await tx.query(DISCARD_CUSTOMERS, [organizationId, importId]);
  return counts;
}

const DISCARD_CUSTOMERS = 'DELETE FROM import_customers WHERE organization_id = $1 AND import_id = $2';
const DISCARD_STAGED = 'DELETE FROM import_staging WHERE organization_id = $1 AND import_id = $2';

/** Removes what an import left in the shared tables (its customers, its lines in import_staging). */
export async function discardStaged(db: Queryable, organizationId: string, importId: string): Promise<void> {
  await db.query(DISCARD_CUSTOMERS, [organizationId, importId]);
  await db.query(DISCARD_STAGED, [organizationId, importId]);
}
