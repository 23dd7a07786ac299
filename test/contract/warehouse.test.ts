// Issue 10, a warehouse as a real client: DuckDB (its Node API, in memory) loads a year of daily
// figures per store from the CSV answer (V1), 500 rows a page with `offset` (O1) until
// X-Rows-Truncated is gone, each page through a file and `read_csv` with exact DECIMAL(18,2)
// money, as a loader would. Its sums must equal the API's own totals to the cent (T1: the
// timezone of the daily rows never changes which orders count), and its rows the whole table.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { importOrderRecords } from '../../src/ingest/import.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { YEAR_FROM, YEAR_STORES, YEAR_TO, yearOfOrders, yearTotals } from '../helpers/year-of-orders.js';

const PAGE = 500;
const PERIOD = `from=${YEAR_FROM}&to=${YEAR_TO}`;
const METRICS = 'metrics=orders,gross_sales,net_revenue';
/** Daily rows as seen in Paris: a year crossing both DST changes. */
const DAILY = `dimensions=date,store&${METRICS}&${PERIOD}&timezone=Europe/Paris`;
const HEADER = 'date,store,orders,gross_sales,net_revenue';
const COLUMNS =
  "{'date': 'DATE', 'store': 'VARCHAR', 'orders': 'INTEGER', 'gross_sales': 'DECIMAL(18,2)', 'net_revenue': 'DECIMAL(18,2)'}";

interface Totals {
  orders: number;
  grossCents: number;
  netCents: number;
}

/** Integer cents of an API number (two decimals at most, M1) or of a DuckDB decimal's text. */
function cents(value: unknown): number {
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(String(value));
  assert.ok(match, `not an amount of two decimals at most: ${String(value)}`);
  const [, sign, units, fraction = ''] = match;
  const magnitude = Number(units) * 100 + Number(fraction.padEnd(2, '0'));
  return sign === '-' ? -magnitude : magnitude;
}

const totalsOf = (row: Record<string, unknown>): Totals => ({
  orders: Number(row.orders),
  grossCents: cents(row.gross_sales),
  netCents: cents(row.net_revenue),
});

let service: TestService;
let key: string;
let orders: Record<string, unknown>[];
let folder: string;
let duckdb: DuckDBInstance;
let connection: DuckDBConnection;

async function apiJson(query: string): Promise<Record<string, unknown>[]> {
  const response = await service.get(`/api/reports/tabular?${query}`, key);
  const body = (await response.json()) as { rows: Record<string, unknown>[] };
  assert.equal(response.status, 200, JSON.stringify(body));
  assert.equal(response.headers.get('x-rows-truncated'), null, `${query}: the whole table`);
  return body.rows;
}

async function select(sql: string): Promise<Record<string, unknown>[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJson();
}

/** What a loader does: pages of CSV, each written to a file and appended to the table. */
async function loadDailyFigures(): Promise<{ pages: number; rows: number }> {
  await connection.run(
    'CREATE TABLE daily (date DATE, store VARCHAR, orders INTEGER, gross_sales DECIMAL(18,2), net_revenue DECIMAL(18,2))',
  );
  let rows = 0;
  for (let page = 0; ; page++) {
    assert.ok(page < 20, 'paging never ends');
    const response = await service.get(
      `/api/reports/tabular?format=csv&${DAILY}&limit=${PAGE}&offset=${page * PAGE}`,
      key,
    );
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.equal(response.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.ok(text.startsWith(`${HEADER}\r\n`), `page ${page}: V1 header line of ids, CRLF`);
    const lines = text.split('\r\n');
    assert.equal(lines.pop(), '', `page ${page}: every line ends with CRLF`);
    const file = path.join(folder, `daily-${page}.csv`);
    fs.writeFileSync(file, text);
    await connection.run(
      `INSERT INTO daily SELECT * FROM read_csv('${file.replaceAll("'", "''")}', header = true, ` +
        `delim = ',', quote = '"', escape = '"', columns = ${COLUMNS})`,
    );
    const [count] = await select('SELECT count(*)::INTEGER AS n FROM daily');
    assert.equal(Number(count?.n) - rows, lines.length - 1, `page ${page}: every CSV line loaded`);
    rows = Number(count?.n);
    if (response.headers.get('x-rows-truncated') !== 'true') {
      assert.ok(lines.length - 1 <= PAGE);
      return { pages: page + 1, rows };
    }
    assert.equal(lines.length - 1, PAGE, `page ${page}: a truncated page is full (T6, O1)`);
  }
}

describe('issue 10: DuckDB loads a year of daily figures per store from paged CSV', () => {
  before(async () => {
    orders = yearOfOrders(3000);
    service = await startTestService();
    const created = await service.addOrganization('Entrepôt', []);
    key = created.key;
    const imported = await importOrderRecords(service.db, created.org.id, orders);
    assert.equal(imported.refused, false, JSON.stringify(imported.errors));
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-warehouse-'));
    duckdb = await DuckDBInstance.create(':memory:');
    connection = await duckdb.connect();
  });
  after(async () => {
    connection?.closeSync();
    duckdb?.closeSync();
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
    await service?.cleanup();
  });

  test('O1/V1: pages of 500 CSV rows until X-Rows-Truncated is absent; DuckDB sums equal the API totals to the cent', async () => {
    const loaded = await loadDailyFigures();
    assert.ok(loaded.pages >= 3, `${loaded.pages} pages: paging was exercised`);

    // The whole table, in one JSON answer: same rows, same order of loading, same values (V1).
    const table = await apiJson(`${DAILY}&limit=100000`);
    assert.equal(loaded.rows, table.length, 'rows loaded = rows of the whole answer');
    const warehouseRows = await select(
      "SELECT strftime(date, '%Y-%m-%d') AS date, store, orders, gross_sales::VARCHAR AS gross_sales, net_revenue::VARCHAR AS net_revenue FROM daily ORDER BY date, store",
    );
    const line = (row: Record<string, unknown>) =>
      `${String(row.date)} ${String(row.store)} ${JSON.stringify(totalsOf(row))}`;
    assert.deepEqual(warehouseRows.map(line), table.map(line), 'no row lost or repeated between pages');
    const [distinct] = await select('SELECT count(DISTINCT (date, store))::INTEGER AS n FROM daily');
    assert.equal(Number(distinct?.n), loaded.rows);
    const [negative] = await select('SELECT count(*)::INTEGER AS n FROM daily WHERE net_revenue < 0');
    assert.ok(Number(negative?.n) > 0, 'some days net negative: numbers, never quoted like text (V1)');
    const [dst] = await select(
      "SELECT count(*)::INTEGER AS n FROM daily WHERE date IN ('2025-03-30', '2025-10-26')",
    );
    assert.ok(Number(dst?.n) > 0, 'rows on both DST days');

    const perStore = new Map(
      (
        await select(
          'SELECT store, sum(orders)::INTEGER AS orders, sum(gross_sales)::VARCHAR AS gross_sales, sum(net_revenue)::VARCHAR AS net_revenue FROM daily GROUP BY store',
        )
      ).map((row) => [String(row.store), totalsOf(row)]),
    );
    const apiPerStore = new Map(
      (await apiJson(`dimensions=store&${METRICS}&${PERIOD}`)).map((row) => [
        String(row.store),
        totalsOf(row),
      ]),
    );
    assert.deepEqual([...apiPerStore.keys()], [...YEAR_STORES], 'every store has orders');
    for (const store of YEAR_STORES) {
      assert.deepEqual(perStore.get(store), apiPerStore.get(store), `${store}: DuckDB = API`);
    }
    const [overall] = await select(
      'SELECT sum(orders)::INTEGER AS orders, sum(gross_sales)::VARCHAR AS gross_sales, sum(net_revenue)::VARCHAR AS net_revenue FROM daily',
    );
    const [apiOverall] = await apiJson(`${METRICS}&${PERIOD}`);
    assert.ok(overall && apiOverall);
    assert.deepEqual(totalsOf(overall), totalsOf(apiOverall), 'overall: DuckDB = API (T5 totals row)');

    // And both are the orders' own sums, computed here without the service (T1, S1, S2).
    assert.deepEqual(Object.fromEntries(apiPerStore), Object.fromEntries(yearTotals(orders)));
  });

  test('O1: an offset past the end answers the header line alone, not truncated', async () => {
    const response = await service.get(`/api/reports/tabular?format=csv&${DAILY}&offset=1000000`, key);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), `${HEADER}\r\n`);
    assert.equal(response.headers.get('x-rows-truncated'), null);
  });
});
