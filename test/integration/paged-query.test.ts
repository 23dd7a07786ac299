// Issue 26, item 6: a large result read a page at a time (src/db/cursor.ts), so that parsing it
// never holds the event loop for long; the rows all arrive, in order; a client that goes away
// stops the reading and leaves the connection clean (finding 6).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PAGE_ROWS } from '../../src/db/cursor.js';
import { engine, openTestDatabase, testOn, type TestDatabase } from '../helpers/database.js';

const ROWS = 2 * PAGE_ROWS + 234;
const SERIES = 'SELECT n, (n::numeric / 4)::text AS quarter FROM generate_series(1, $1::int) AS n ORDER BY n';

type NumberRow = { n: number; quarter: string };

describe('issue 26, item 6: a large result read a page at a time', () => {
  let database: TestDatabase;

  before(async () => {
    database = await openTestDatabase();
  });
  after(() => database.cleanup());

  test('every row arrives, in order; on a PostgreSQL server in pages of PAGE_ROWS', async () => {
    const pages: number[][] = [];
    await database.db.queryPages<NumberRow>(SERIES, [ROWS], (rows) => {
      pages.push(rows.map((r) => r.n));
    });
    assert.deepEqual(
      pages.flat(),
      Array.from({ length: ROWS }, (_, i) => i + 1),
    );
    assert.deepEqual(
      pages.map((p) => p.length),
      engine === 'postgres' ? [PAGE_ROWS, PAGE_ROWS, 234] : [ROWS],
    );
  });

  testOn('postgres', 'a client gone between pages: no further page, the connection left clean', async () => {
    const gone = new AbortController();
    let pages = 0;
    const reading = database.db.queryPages<NumberRow>(
      SERIES,
      [ROWS],
      () => {
        pages += 1;
        gone.abort(new Error('client gone'));
      },
      { signal: gone.signal },
    );
    await assert.rejects(reading, /client gone/);
    assert.equal(pages, 1);
    const [left] = await database.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
    );
    assert.equal(left?.n, 0, 'no transaction left open');
  });

  testOn('postgres', 'finding 6: a page whose client went away is cancelled on the server', async () => {
    const gone = new AbortController();
    const reading = database.db.queryPages('SELECT pg_sleep(30) AS slept', [], () => undefined, {
      signal: gone.signal,
    });
    const active = async () =>
      (
        await database.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'FETCH%' AND state = 'active'",
        )
      )[0]?.n;
    while ((await active()) === 0) await new Promise((r) => setTimeout(r, 20));
    const started = performance.now();
    gone.abort(new Error('client gone'));
    await assert.rejects(reading, /client gone/);
    while ((await active()) !== 0 && performance.now() - started < 1000)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(await active(), 0, 'cancelled on the server');
  });
});
