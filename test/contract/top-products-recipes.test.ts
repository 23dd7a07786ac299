// Section 15 recipes of docs/clients.md run as real clients (L7, V1): docs/examples/
// pandas_top_products.py asks for the top ten products by net sales and their share, reads the CSV
// answer into pandas and prints it; its rows must be the API's JSON rows (a product named `=Promo`,
// which CSV writes `'=Promo`, included). DuckDB (its Node API) loads the same CSV with the recipe's
// typed columns and ranks the products as the API sorted them. Debian's Python as in
// pandas.test.ts: the test fails under CI=true where pandas is missing, is skipped elsewhere.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { startTestService, type TestService } from '../helpers/service.js';
import { importOrdersWithLines, type OrderWithLines } from '../helpers/order-lines.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = path.resolve(import.meta.dirname, '../../../docs/examples/pandas_top_products.py');
const run = promisify(execFile);
const COLUMNS =
  "{'product': 'VARCHAR', 'product_net_sales': 'DECIMAL(18,2)', 'units_sold': 'BIGINT', 'orders': 'BIGINT'}";
const TOP_TEN =
  'dimensions=product&metrics=product_net_sales,units_sold,orders&sort=-product_net_sales&limit=10&from=2026-01-01&to=2026-03-31';

const probe = spawnSync(PYTHON, ['-c', 'import pandas, requests'], { encoding: 'utf8' });
const missing = probe.status === 0 ? undefined : `${PYTHON} cannot import pandas and requests`;

/** Fourteen products over forty orders, two of them tied, one whose name CSV must protect. */
function ordersWithLines(): (OrderWithLines & Record<string, unknown>)[] {
  const names = [
    ...Array.from({ length: 12 }, (_, i) => `Produit ${String.fromCharCode(65 + i)}`),
    '=Promo',
    'Thé',
  ];
  return Array.from({ length: 40 }, (_, i) => ({
    store: 'https://a.example',
    id: `o${i}`,
    created_at: `2026-0${1 + (i % 3)}-${String(1 + (i % 27)).padStart(2, '0')}T10:00:00Z`,
    status: 'completed',
    items: 2,
    total: '100.00',
    lines: [0, 1].map((k) => {
      const p = (i * 3 + k * 5) % names.length;
      return {
        line_id: String(k),
        product_id: `p${p}`,
        product_name: names[p] ?? '',
        quantity: 1 + (p % 3),
        subtotal: `${10 + p * 7}.${String((i * 13) % 100).padStart(2, '0')}`,
        ...(k === 1 && i % 4 === 0 ? { discount: '1.50' } : {}),
      };
    }),
  }));
}

describe('Section 15 recipes: the top ten products in pandas and in DuckDB from the CSV answer', () => {
  let service: TestService;
  let key: string;
  before(async () => {
    service = await startTestService();
    const { org, key: k } = await service.addOrganization('Top', []);
    key = k;
    await importOrdersWithLines(service.db, org.id, ordersWithLines());
  });
  after(() => service?.cleanup());

  test('L7: the script’s rows are the API’s ten rows, each with its share of the total', async (t) => {
    if (missing) {
      if (process.env.CI === 'true') assert.fail(`CI=true: ${missing}`);
      t.skip(missing);
      return;
    }
    const { stdout } = await run(PYTHON, [SCRIPT, '2026-01-01', '2026-03-31'], {
      env: { ...process.env, SALES_METRICS_URL: service.baseUrl, SALES_METRICS_KEY: key },
    });
    const printed = JSON.parse(stdout) as Record<string, number | string>[];
    const body = (await (await service.get(`/api/reports/tabular?${TOP_TEN}`, key)).json()) as {
      rows: Record<string, number | string>[];
    };
    const total = (await (
      await service.get('/api/reports/tabular?metrics=product_net_sales&from=2026-01-01&to=2026-03-31', key)
    ).json()) as { rows: { product_net_sales: number }[] };
    assert.equal(body.rows.length, 10);
    assert.ok(
      body.rows.some((row) => row.product === '=Promo'),
      'the protected name is in the top ten',
    );
    assert.deepEqual(
      printed.map(({ share: _share, ...row }) => row),
      body.rows,
    );
    const all = total.rows[0]?.product_net_sales ?? 0;
    for (const row of printed)
      assert.equal(
        row.share,
        Math.round((Number(row.product_net_sales) / all) * 1000) / 10,
        String(row.product),
      );
  });

  test('DuckDB: read_csv with the recipe’s columns ranks the products as the API sorted them', async () => {
    const response = await service.get(`/api/reports/tabular?format=csv&${TOP_TEN}`, key);
    assert.equal(response.status, 200);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-top-'));
    const file = path.join(dir, 'top_products.csv');
    fs.writeFileSync(file, await response.text());
    const duckdb = await DuckDBInstance.create(':memory:');
    try {
      const connection = await duckdb.connect();
      await connection.run(
        `CREATE TABLE top_products AS SELECT * FROM read_csv('${file}', header = true, columns = ${COLUMNS})`,
      );
      const ranked = await connection.runAndReadAll(
        'SELECT row_number() OVER (ORDER BY product_net_sales DESC, product) AS rank, product, product_net_sales::VARCHAR AS net FROM top_products ORDER BY rank',
      );
      const json = (await (await service.get(`/api/reports/tabular?${TOP_TEN}`, key)).json()) as {
        rows: { product: string; product_net_sales: number }[];
      };
      assert.deepEqual(
        ranked.getRowObjectsJson(),
        json.rows.map((row, i) => ({
          rank: String(i + 1),
          product: row.product.startsWith('=') ? `'${row.product}` : row.product,
          net: row.product_net_sales.toFixed(2),
        })),
      );
    } finally {
      duckdb.closeSync();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
