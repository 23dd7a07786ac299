// Issue 10, a notebook as a real client: docs/examples/pandas_report.py reads a year of daily
// figures per store with `requests` (the key in the Authorization header, from the environment),
// pages through the CSV answer with `offset` (O1, V1), loads it into pandas with money as integer
// cents, and prints totals per store; they must be the API's own totals to the cent. It runs on
// Debian's Python (/usr/bin/python3 with python3-pandas and python3-requests, not a pyenv shim):
// where they are missing the test fails under CI=true, and is skipped with the reason elsewhere.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { importOrderRecords } from '../../src/ingest/import.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { YEAR_FROM, YEAR_STORES, YEAR_TO, yearOfOrders, yearTotals } from '../helpers/year-of-orders.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = path.resolve(import.meta.dirname, '../../../docs/examples/pandas_report.py');
const PERIOD = `from=${YEAR_FROM}&to=${YEAR_TO}`;
const METRICS = 'metrics=orders,gross_sales,net_revenue';
const run = promisify(execFile);

/** Why Debian's Python cannot run the script here, or undefined when it can. */
function pythonMissing(): string | undefined {
  const probe = spawnSync(PYTHON, ['-c', 'import pandas, requests'], { encoding: 'utf8' });
  if (probe.status === 0) return undefined;
  return (
    `${PYTHON} cannot import pandas and requests (${probe.error?.message ?? probe.stderr.trim()}): ` +
    'apt-get install python3-pandas python3-requests'
  );
}

interface Figures {
  orders: number;
  gross_sales: string | number;
  net_revenue: string | number;
}
interface Report {
  pages: number;
  rows: number;
  stores: Record<string, Figures>;
  total: Figures;
}

/** Integer cents of "12.30", "-0.50" (the script) or 12.3 (the API), for a comparison to the cent. */
function cents(value: string | number): number {
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(String(value));
  assert.ok(match, `not an amount: ${String(value)}`);
  const [, sign, units, fraction = ''] = match;
  const magnitude = Number(units) * 100 + Number(fraction.padEnd(2, '0'));
  return sign === '-' ? -magnitude : magnitude;
}

const inCents = (figures: Figures) => ({
  orders: figures.orders,
  grossCents: cents(figures.gross_sales),
  netCents: cents(figures.net_revenue),
});

const missing = pythonMissing();
let service: TestService | undefined;
let key: string;
let orders: Record<string, unknown>[];

async function script(args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run(PYTHON, [SCRIPT, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

async function apiRows(query: string): Promise<Record<string, unknown>[]> {
  assert.ok(service);
  const response = await service.get(`/api/reports/tabular?${query}`, key);
  const body = (await response.json()) as { rows: Record<string, unknown>[] };
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.rows;
}

describe('issue 10: the pandas notebook script reads paged CSV with requests', () => {
  before(async () => {
    if (missing) return;
    orders = yearOfOrders(2000, 11);
    service = await startTestService();
    const created = await service.addOrganization('Carnet', []);
    key = created.key;
    const imported = await importOrderRecords(service.db, created.org.id, orders);
    assert.equal(imported.refused, false, JSON.stringify(imported.errors));
  });
  after(() => service?.cleanup());

  /** Runs fn, or fails under CI=true and skips elsewhere when Debian's pandas is missing. */
  function withPandas(name: string, fn: () => Promise<void>) {
    test(name, async (t) => {
      if (missing) {
        if (process.env.CI === 'true') assert.fail(`CI=true: ${missing}`);
        t.skip(missing);
        return;
      }
      await fn();
    });
  }

  withPandas(
    'O1/V1: totals per store and overall equal the API totals to the cent, every row read once',
    async () => {
      assert.ok(service);
      const result = await script(['--from', YEAR_FROM, '--to', YEAR_TO, '--page-size', '250'], {
        SALES_METRICS_URL: service.baseUrl,
        SALES_METRICS_KEY: key,
      });
      assert.equal(result.code, 0, result.stderr);
      const report = JSON.parse(result.stdout) as Report;
      assert.ok(report.pages >= 3, `${report.pages} pages: paging was exercised`);

      const table = await apiRows(`dimensions=date,store&${METRICS}&${PERIOD}&limit=100000`);
      assert.equal(report.rows, table.length, 'rows read = rows of the whole answer');

      const apiPerStore = Object.fromEntries(
        (await apiRows(`dimensions=store&${METRICS}&${PERIOD}`)).map((row) => [
          String(row.store),
          inCents(row as unknown as Figures),
        ]),
      );
      assert.deepEqual(Object.keys(apiPerStore), [...YEAR_STORES]);
      const scriptPerStore = Object.fromEntries(
        Object.entries(report.stores).map(([store, figures]) => [store, inCents(figures)]),
      );
      assert.deepEqual(scriptPerStore, apiPerStore, 'per store: pandas = API');
      const [apiTotal] = await apiRows(`${METRICS}&${PERIOD}`);
      assert.ok(apiTotal);
      assert.deepEqual(
        inCents(report.total),
        inCents(apiTotal as unknown as Figures),
        'overall: pandas = API',
      );
      assert.ok(report.total.net_revenue !== report.total.gross_sales);
      // Both are the orders' own sums, computed without the service (T1, S1, S2).
      assert.deepEqual(scriptPerStore, Object.fromEntries(yearTotals(orders)));
    },
  );

  withPandas(
    'K3/E3: without a key the script stops with a clear message; a bad key shows the error code',
    async () => {
      assert.ok(service);
      const noKey = await script(['--from', YEAR_FROM, '--to', YEAR_TO], {
        SALES_METRICS_URL: service.baseUrl,
        SALES_METRICS_KEY: '',
      });
      assert.notEqual(noKey.code, 0);
      assert.match(noKey.stderr, /Set SALES_METRICS_KEY/);
      const badKey = await script(['--from', YEAR_FROM, '--to', YEAR_TO], {
        SALES_METRICS_URL: service.baseUrl,
        SALES_METRICS_KEY: 'smk_not-a-key',
      });
      assert.notEqual(badKey.code, 0);
      assert.match(badKey.stderr, /HTTP 401 UNAUTHENTICATED: /);
    },
  );
});
