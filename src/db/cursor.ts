// Issue 26, item 6: a large result read in pages through a cursor. node-postgres parses a result's
// rows as its socket delivers them, and libuv hands over up to 32 reads (2 MB) in one turn of the
// event loop: a report of 60,000 compared rows, read whole, held the loop for 100–300 ms parsing
// them. A cursor's FETCH brings one page per round trip, and the event loop turns between pages.
import type pg from 'pg';

/** Rows in one page: about 0.2 MB of a wide compared report, parsed in 5–10 ms. */
export const PAGE_ROWS = 500;

/** The name is the transaction's own: a cursor lives only within it. */
const CURSOR = 'paged_result';

/**
 * Runs `sql` (one SELECT) through a cursor in a read-only transaction on `client`, handing each
 * page of rows to `onPage` (the next FETCH waits for it). Stops early, without an error, when
 * `stop()` turns true between pages. The caller rolls back and releases the client on an error.
 */
export async function readInPages<R extends Record<string, unknown>>(
  client: pg.ClientBase,
  sql: string,
  params: readonly unknown[],
  onPage: (rows: R[]) => void | Promise<void>,
  stop: () => boolean,
): Promise<void> {
  await client.query('BEGIN READ ONLY');
  await client.query(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${sql}`, params as unknown[]);
  for (;;) {
    const page = (await client.query<R>(`FETCH ${PAGE_ROWS} FROM ${CURSOR}`)).rows;
    if (page.length > 0) await onPage(page);
    if (page.length < PAGE_ROWS || stop()) break;
  }
  await client.query('COMMIT');
}
