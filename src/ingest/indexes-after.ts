// Issue 27, item 6: on the embedded engine, a first import that at least doubles a table writes
// its rows before that table's indexes, then builds them, in the merge's transaction. An index
// kept current row by row costs PGlite about 10 µs a row (the orders' four) or 5 µs (the lines'
// key), its pages falling out of the buffer pool and read back; built afterwards from the rows, it
// costs 2–7 µs a row, sorted once (docs/benchmarks.md). The indexes are dropped and made again
// from their definitions as the catalogue gives them, under their names: whatever a migration
// adds is kept. Never on PostgreSQL: the dropped index would lock the table, for every
// organization's reports, until the commit; on the embedded engine the merge's transaction holds
// PGlite's one session anyway (docs/decisions.md).
import type { Queryable } from '../db/database.js';

/**
 * The fewest staged orders for which a first import tries it: below, the dozen statements that drop
 * and build the indexes would cost about what they save, and the catalogue, which PGlite never
 * vacuums, would churn for nothing.
 */
export const INDEXES_AFTER_MIN = 10_000;

/** An index of the table, and the constraint it backs (a primary key), if any. */
export type TableIndex = {
  name: string;
  definition: string;
  constraint_name: string | null;
  constraint_definition: string | null;
};

// Constraints first (their indexes are dropped with them), the key before the others when built.
const INDEXES_OF = `
  SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition,
         c.conname AS constraint_name, pg_get_constraintdef(c.oid) AS constraint_definition
  FROM pg_index i
  LEFT JOIN pg_constraint c
    ON c.conindid = i.indexrelid AND c.conrelid = i.indrelid AND c.contype IN ('p', 'u')
  WHERE i.indrelid = $1::regclass
  ORDER BY c.conname IS NULL, i.indexrelid`;

// The table no larger than what is about to be written into it: rebuilding its indexes whole then
// sorts at most about twice the rows written, which still costs less than keeping them current.
const NO_LARGER = 'SELECT pg_relation_size($1::regclass) <= pg_relation_size($2::regclass) AS small';

const quoted = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * Runs `write`, which writes rows into `table`; when `table` is no larger than `staged` (the
 * staged rows about to go in; undefined: never), its indexes are dropped first and built again
 * after. A unique key the rows break fails the build as it would have failed the insert (23505).
 */
export async function indexesAfter<T>(
  tx: Queryable,
  table: string,
  staged: string | undefined,
  write: () => Promise<T>,
): Promise<T> {
  if (staged === undefined) return write();
  const [size] = await tx.query<{ small: boolean }>(NO_LARGER, [table, staged]);
  if (size?.small !== true) return write();
  const dropped = await dropIndexes(tx, table);
  const result = await write();
  await buildIndexes(tx, table, dropped);
  return result;
}

/**
 * Drops the indexes of `table`, its key's constraint included, but those named in `kept`; returns
 * what buildIndexes needs.
 */
export async function dropIndexes(
  tx: Queryable,
  table: string,
  kept: ReadonlySet<string> = new Set(),
): Promise<readonly TableIndex[]> {
  const indexes = (await tx.query<TableIndex>(INDEXES_OF, [table])).filter((index) => !kept.has(index.name));
  for (const index of indexes)
    await tx.query(
      index.constraint_name === null
        ? `DROP INDEX ${index.name}`
        : `ALTER TABLE ${table} DROP CONSTRAINT ${quoted(index.constraint_name)}`,
    );
  return indexes;
}

/** Builds again, from their definitions, the indexes dropIndexes dropped, the key first. */
export async function buildIndexes(
  tx: Queryable,
  table: string,
  indexes: readonly TableIndex[],
): Promise<void> {
  for (const index of indexes)
    await tx.query(
      index.constraint_name === null
        ? index.definition
        : `ALTER TABLE ${table} ADD CONSTRAINT ${quoted(index.constraint_name)} ${index.constraint_definition}`,
    );
}
