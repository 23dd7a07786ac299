// PC1 recipes of docs/clients.md run as real clients. A notebook: docs/examples/pandas_compare.py asks for each month beside
// the month before it (a custom comparison one month earlier, matched by bucket index), reads the
// CSV answer (V1) into pandas and prints it. Its rows must be the API's JSON rows (nulls and all),
// and its trend arrows the sign of the change. Debian's Python as in pandas.test.ts: the test
// fails under CI=true where pandas is missing, and is skipped with the reason elsewhere. A
// warehouse: DuckDB (its Node API) loads the compared CSV with read_csv's typed columns, empty
// cells as NULL, and lists the months that went down, as the recipe does.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { startTestService, type TestService } from '../helpers/service.js';
import { yearOfOrders } from '../helpers/year-of-orders.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = path.resolve(import.meta.dirname, '../../../docs/examples/pandas_compare.py');
const run = promisify(execFile);
/** The recipe's columns: money and changes as exact decimals; an empty cell is NULL. */
const COLUMNS =
  "{'date': 'DATE', 'date_previous': 'DATE', 'orders': 'INTEGER', 'net_revenue': 'DECIMAL(18,2)', 'orders_previous': 'INTEGER', 'net_revenue_previous': 'DECIMAL(18,2)', 'orders_change': 'DECIMAL(9,1)', 'net_revenue_change': 'DECIMAL(9,1)'}";

const probe = spawnSync(PYTHON, ['-c', 'import pandas, requests'], { encoding: 'utf8' });
const missing = probe.status === 0 ? undefined : `${PYTHON} cannot import pandas and requests`;
let service: TestService | undefined;
let key: string;

describe('PC1 recipes: month over month in pandas and in DuckDB from the CSV answer', () => {
  before(async () => {
    if (missing) return;
    service = await startTestService();
    key = (await service.addOrganization('Mois', yearOfOrders(1500, 20))).key;
  });
  after(() => service?.cleanup());

  test('the script’s rows are the API’s JSON rows; each arrow is the sign of the change', async (t) => {
    if (missing) {
      if (process.env.CI === 'true') assert.fail(`CI=true: ${missing}`);
      t.skip(missing);
      return;
    }
    assert.ok(service);
    const { stdout } = await run(PYTHON, [SCRIPT, '2025-02-01', '2025-12-31'], {
      env: { ...process.env, SALES_METRICS_URL: service.baseUrl, SALES_METRICS_KEY: key },
    });
    const printed = JSON.parse(stdout) as Record<string, unknown>[];
    const response = await service.get(
      '/api/reports/tabular?metrics=orders,net_revenue&dimensions=date&granularity=month&from=2025-02-01&to=2025-12-31&compare=custom&compare_from=2025-01-01&compare_to=2025-11-30',
      key,
    );
    const body = (await response.json()) as { rows: Record<string, unknown>[] };
    assert.equal(response.status, 200);
    // UTC months: eleven of them, each beside the month before.
    assert.equal(body.rows.length, 11);
    assert.equal(body.rows[0]?.date, '2025-02-01');
    assert.equal(body.rows[0]?.date_previous, '2025-01-01');
    const withoutTrend = printed.map(({ trend: _trend, ...row }) => row);
    assert.deepEqual(withoutTrend, body.rows);
    for (const row of printed) {
      const change = row.net_revenue_change as number | null;
      const expected = change === null ? '' : change > 0 ? '▲' : change < 0 ? '▼' : '=';
      assert.equal(row.trend, expected, JSON.stringify(row));
    }
  });

  test('DuckDB: read_csv of the compared CSV, NULL for empty cells, the months that went down', async () => {
    if (!service) service = await startTestService();
    if (!key) key = (await service.addOrganization('Mois bis', yearOfOrders(1500, 20))).key;
    const query =
      'format=csv&metrics=orders,net_revenue&dimensions=date&granularity=month&from=2025-02-01&to=2025-12-31&compare=custom&compare_from=2025-01-01&compare_to=2025-11-30';
    const response = await service.get(`/api/reports/tabular?${query}`, key);
    assert.equal(response.status, 200);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-pc1-'));
    const file = path.join(dir, 'monthly.csv');
    fs.writeFileSync(file, await response.text());
    const duckdb = await DuckDBInstance.create(':memory:');
    try {
      const connection = await duckdb.connect();
      await connection.run(
        `CREATE TABLE monthly AS SELECT * FROM read_csv('${file}', header = true, columns = ${COLUMNS})`,
      );
      const down = await connection.runAndReadAll(
        'SELECT date::VARCHAR AS date, net_revenue::VARCHAR AS net, net_revenue_previous::VARCHAR AS previous, net_revenue_change::VARCHAR AS change FROM monthly WHERE net_revenue_change < 0 ORDER BY date',
      );
      const json = (await (
        await service.get(`/api/reports/tabular?${query.replace('format=csv&', '')}`, key)
      ).json()) as {
        rows: Record<string, number | string | null>[];
      };
      const expected = json.rows
        .filter((row) => typeof row.net_revenue_change === 'number' && row.net_revenue_change < 0)
        .map((row) => ({
          date: row.date,
          net: Number(row.net_revenue).toFixed(2),
          previous: Number(row.net_revenue_previous).toFixed(2),
          change: Number(row.net_revenue_change).toFixed(1),
        }));
      assert.ok(expected.length > 0, 'some month went down');
      assert.deepEqual(down.getRowObjectsJson(), expected);
    } finally {
      duckdb.closeSync();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
