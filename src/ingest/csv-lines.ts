// L8: a CSV file whose header has `line_id` holds one order line a row, the layout of the usual
// "one row per line item" exports. The rows of one order (same `store` and `id`) are consecutive;
// its columns are filled on its first row and, on the next ones, empty or equal to the first
// row's; a different value rejects the row (I1), and with it the order, whose lines would be
// incomplete. A row whose line columns are all empty is an order without lines: its only row.
// One order is held at a time, at most L1's 1,000 lines (I3: memory stays flat).
// An order whose rows come back after another order's is refused there (its rows are not
// consecutive): taken as a second copy of the order, the last one would replace the first (I2) and
// its first rows' lines would vanish without a word (a file sorted by product, not by order). The
// orders already gathered are remembered by their first row, the last SEEN_ORDERS of them: past
// that distance, a repeat is a re-import of the order (I2), as in NDJSON (docs/decisions.md).
import { LINE_BOUNDS, LINE_FIELDS, thousands } from './order-line.js';
import type { ReadEntry, RowProblem } from './read-entry.js';

const LINE_COLUMNS = new Set<string>(LINE_FIELDS);
/** How many gathered orders are remembered to refuse one whose rows come back (about 10 MB). */
export const SEEN_ORDERS = 100_000;
/** L8: the categories of a line in one cell. */
export const CATEGORY_SEPARATOR = '|';

/** Whether a CSV header announces one order line a row (L8). */
export const hasLineColumns = (header: readonly string[]): boolean => header.includes('line_id');

/** The order being gathered: its first row's record, its lines, and what was wrong with its rows. */
interface Gathered {
  line: number;
  record: Record<string, unknown>;
  lines: Record<string, unknown>[];
  rows: number[];
  /** Lines past L1's bound: counted, not kept. */
  extraLines: number;
  problems: RowProblem[];
  /** Its first row had no line: an order without lines, which no other row may follow. */
  withoutLines: boolean;
}

/** A row's line columns as a line (`categories` split), or undefined when they are all empty. */
function lineOf(record: Record<string, unknown>): Record<string, unknown> | undefined {
  let line: Record<string, unknown> | undefined;
  for (const field of LINE_FIELDS) {
    const value = record[field];
    if (value === undefined) continue;
    line ??= {};
    line[field] =
      field === 'categories' && typeof value === 'string' ? value.split(CATEGORY_SEPARATOR) : value;
  }
  return line;
}

/** The order columns of a record (the line columns left out). */
function orderColumnsOf(record: Record<string, unknown>): Record<string, unknown> {
  const order: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) if (!LINE_COLUMNS.has(name)) order[name] = value;
  return order;
}

/** Whether a row continues the order being gathered: its store and id empty or the same. */
const continues = (order: Gathered, record: Record<string, unknown>): boolean =>
  (record.store === undefined || record.store === order.record.store) &&
  (record.id === undefined || record.id === order.record.id);

/** A next row's order columns against the first row's: each different one is a problem. */
function conflicts(order: Gathered, record: Record<string, unknown>, line: number): RowProblem[] {
  const problems: RowProblem[] = [];
  const names = new Set([...Object.keys(record), ...Object.keys(order.record)]);
  for (const name of names) {
    if (LINE_COLUMNS.has(name) || name === 'lines') continue;
    const value = record[name];
    if (value === undefined || value === order.record[name]) continue;
    const first = order.record[name];
    const was = first === undefined ? 'vide' : `« ${String(first).slice(0, 60)} »`;
    const message = `« ${String(value).slice(0, 60)} » diffère de la première ligne de la commande (ligne ${order.line} : ${was}) : laissez la cellule vide ou recopiez-la`;
    problems.push({ line, field: name, message });
  }
  return problems;
}

function start(line: number, record: Record<string, unknown>): Gathered {
  const first = lineOf(record);
  return {
    line,
    record: orderColumnsOf(record),
    lines: first === undefined ? [] : [first],
    rows: first === undefined ? [] : [line],
    extraLines: 0,
    problems: [],
    withoutLines: first === undefined,
  };
}

/** Adds a next row of the order: its line, or the problems that reject it. */
function add(order: Gathered, line: number, record: Record<string, unknown>): void {
  const found = conflicts(order, record, line);
  const orderLine = lineOf(record);
  if (orderLine === undefined || order.withoutLines) {
    const message =
      'une ligne sans produit (colonnes de ligne vides) est une commande sans lignes : elle doit être la seule ligne de sa commande';
    found.push({ line, field: orderLine === undefined ? 'line_id' : '(ligne)', message });
  }
  order.problems.push(...found);
  if (found.length > 0 || orderLine === undefined) return;
  if (order.lines.length >= LINE_BOUNDS.lines) order.extraLines++;
  else {
    order.lines.push(orderLine);
    order.rows.push(line);
  }
}

function entryOf(order: Gathered): ReadEntry {
  const record = { ...order.record, lines: order.lines };
  const problems = [...order.problems];
  if (order.extraLines > 0) {
    const count = thousands(order.lines.length + order.extraLines);
    const message = `${count} lignes, ${thousands(LINE_BOUNDS.lines)} au plus par commande`;
    problems.push({ line: order.line, field: 'lines', message });
  }
  return {
    line: order.line,
    record,
    rows: order.rows,
    ...(problems.length > 0 ? { problems } : {}),
  };
}

/**
 * L8: gathers the rows of each order into one entry whose record has `lines`, and `rows` the
 * file's line of each order line (its errors name that line). Error entries pass as they are.
 */
export async function* gatherOrderLines(
  rows: AsyncIterable<ReadEntry>,
  header: () => readonly string[] | undefined,
): AsyncGenerator<ReadEntry> {
  let order: Gathered | undefined;
  let gathering: boolean | undefined;
  const seen = new Map<string, number>(); // an order's key → its first row, oldest first
  const done = (gathered: Gathered): ReadEntry => {
    const key = keyOf(gathered.record);
    const first = seen.get(key);
    if (first !== undefined) {
      const message = `les lignes de cette commande ne se suivent pas : elle a déjà des lignes plus haut (ligne ${first}), séparées d’elle par d’autres commandes ; triez le fichier par commande`;
      gathered.problems.unshift({ line: gathered.line, field: 'id', message });
    } else {
      seen.set(key, gathered.line);
      if (seen.size > SEEN_ORDERS) seen.delete(seen.keys().next().value as string);
    }
    return entryOf(gathered);
  };
  for await (const row of rows) {
    gathering ??= 'record' in row ? hasLineColumns(header() ?? []) : undefined;
    if (!('record' in row) || gathering !== true) {
      yield row;
      continue;
    }
    if (order !== undefined && continues(order, row.record)) {
      add(order, row.line, row.record);
      continue;
    }
    if (order !== undefined) yield done(order);
    order = start(row.line, row.record);
  }
  if (order !== undefined) yield done(order);
}

/** An order's identity in the file: its store and id as written (I2 spells stores alike later). */
const keyOf = (record: Record<string, unknown>): string =>
  `${String(record.store ?? '')}\u0000${String(record.id ?? '')}`;
