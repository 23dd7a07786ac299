// The embedded database runs one statement at a time for everyone: a build reads a large
// organization's rows in statements over ranges of a table's pages (TID range scans: one sequential
// pass over the whole table, other organizations' rows skipped), others' queries running between
// them (issue 28, item 3). Used by the build's COPY and by its count of the lines.
import type { Queryable } from '../../db/database.js';
import { nextTurn } from './order-columns.js';

/** Orders per statement on the embedded database, about, at most (statements cover pages: PAGE_ROWS). */
export const DEFAULT_CHUNK_ROWS = 50_000;
/**
 * How long one of the embedded build's statements should hold the one session (issue 28, item 3):
 * the others' statements wait behind it, and a request that waits 5 s for a connection gets 503
 * DATABASE_UNAVAILABLE. At 1,000,000 orders on a loaded machine a statement of DEFAULT_CHUNK_ROWS
 * took several seconds: the next statement's pages are scaled to the last one's time.
 */
export const STATEMENT_TARGET_MS = 1000;
/** The fewest pages a statement reads (some 300 rows): fewer would cost more in statements than in rows. */
const MIN_PAGES = 8;
/**
 * The pages of the first statement, at most (some 10,000 rows): its time is not known yet, and a
 * statement of 1,250 pages took 3 to 12 s at a load average of 23 (bench/cold-build.ts
 * --statements); the next ones grow back to `chunkRows` when they are fast.
 */
const FIRST_PAGES = 256;
/** Order or line rows in an 8 kB heap page, roughly (some 200 bytes each): turns chunkRows into pages. */
const PAGE_ROWS = 40;

/** Heap pages [from, to); to undefined: to the end, pages added meanwhile included. */
export type Pages = readonly [from: number, to: number | undefined];

/** The condition on `alias`.ctid of a range of pages (integers formatted here: COPY takes no parameters). */
export function tidRange(alias: string, pages: Pages): string {
  const tid = (page: number) => `'(${page},0)'::tid`;
  const to = pages[1] === undefined ? '' : ` AND ${alias}.ctid < ${tid(pages[1])}`;
  return `${alias}.ctid >= ${tid(pages[0])}${to}`;
}

/**
 * The embedded database's read of a table in statements over ranges of its pages, about chunkRows
 * rows each, others' queries running between them; the last one reads to the end.
 */
export async function byPages(
  db: Pick<Queryable, 'query'>,
  table: 'orders' | 'order_lines',
  chunkRows: number,
  read: (pages: Pages) => Promise<void>,
): Promise<void> {
  const [size] = await db.query<{ pages: number }>(
    `SELECT (pg_relation_size('${table}') / current_setting('block_size')::bigint)::integer AS pages`,
  );
  const most = Math.max(1, Math.ceil(chunkRows / PAGE_ROWS));
  let step = Math.min(most, FIRST_PAGES);
  for (let from = 0; ;) {
    const last = from + step >= (size?.pages ?? 0);
    const started = performance.now();
    await read([from, last ? undefined : from + step]);
    if (last) break;
    from += step;
    step = nextStep(step, performance.now() - started, most);
    await nextTurn();
  }
}

/**
 * The pages of the next statement, from the last one's: scaled to STATEMENT_TARGET_MS, between
 * MIN_PAGES (or `most` if fewer) and `most`. Its time counts our decoding and the wait for the
 * session too: it can only make the statements shorter than needed, never longer.
 */
export function nextStep(step: number, tookMs: number, most: number): number {
  const scaled = Math.floor((step * STATEMENT_TARGET_MS) / Math.max(1, tookMs));
  return Math.max(Math.min(MIN_PAGES, most), Math.min(most, scaled));
}
