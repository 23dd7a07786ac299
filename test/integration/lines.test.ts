// Section 15 (L2–L7, L9, L10) through real HTTP on orders worked out by hand in the comments. Every
// 200 answer is asked of the service's default engine (columnar) and of the SQL engine, which must
// agree byte for byte; the random cases are in oracle.test.ts.
//
// The period is March 2026, default Report settings (S2: refunds, taxes, shipping deducted):
// - o1, 2 March, alice, 116.00 = lines 90.00 after discounts + tax 18.00 + shipping 8.00; refunded
//   12.00 of which 2.00 tax. Net revenue 116 − 12 − (18 − 2) − 8 = 80.00.
//   · T-shirt Bleu / M, 2 × 30.00 = 60.00, discount 10.00, 1 refunded for 10.00, categories
//     Vêtements and Bio: net 60 − 10 − 10 = 40.00, 1 unit sold.
//   · Mug, 40.00, no variant, no category: net 40.00.
//   Product net sales 80.00 = net revenue: the refund's tax is deducted from both sides.
// - o2, 3 March, bob, 30.00 = T-shirt Rouge / L (20.00, discount 2.00, Vêtements) 18.00 + tax 5.00
//   + shipping 5.00 + fee 2.00. Net revenue 20.00 (fees are not deducted by default): 2.00 more than
//   its product net sales, the fee, which is no line.
// - o3, 3 March, anonymous, 15.00, no lines: in every order figure, in no line row.
// - o4, 4 March, pending (S1: excluded): 5 mugs that count nowhere.
// - o5, 10 February, carol, Mug × 2 for 80.00: the comparison period's only order.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSqlEngineApp, startTestService, type TestService } from '../helpers/service.js';
import { importOrdersWithLines, type OrderWithLines } from '../helpers/order-lines.js';

const STORE = 'https://a.example';
const ORDERS: (OrderWithLines & Record<string, unknown>)[] = [
  {
    store: STORE,
    id: 'o1',
    created_at: '2026-03-02T10:00:00Z',
    status: 'completed',
    customer_email: 'alice@example.com',
    billing_country: 'FR',
    items: 3,
    total: '116.00',
    tax_total: '18.00',
    shipping_total: '8.00',
    refund_total: '12.00',
    refund_tax: '2.00',
    lines: [
      {
        line_id: '1',
        product_id: 'p1',
        variant_id: 'v1',
        sku: 'TS-B-M',
        product_name: 'T-shirt',
        variant_name: 'Bleu / M',
        categories: ['Vêtements', 'Bio'],
        quantity: 2,
        subtotal: '60.00',
        discount: '10.00',
        refunded_quantity: 1,
        refunded_amount: '10.00',
      },
      { line_id: '2', product_id: 'p2', sku: 'MUG', product_name: 'Mug', quantity: 1, subtotal: '40.00' },
    ],
  },
  {
    store: STORE,
    id: 'o2',
    created_at: '2026-03-03T10:00:00Z',
    status: 'completed',
    customer_email: 'bob@example.com',
    billing_country: 'BE',
    items: 1,
    total: '30.00',
    tax_total: '5.00',
    shipping_total: '5.00',
    fee_total: '2.00',
    lines: [
      {
        line_id: 'a',
        product_id: 'p1',
        variant_id: 'v2',
        sku: 'TS-R-L',
        product_name: 'T-shirt',
        variant_name: 'Rouge / L',
        categories: ['Vêtements'],
        quantity: 1,
        subtotal: '20.00',
        discount: '2.00',
      },
    ],
  },
  {
    store: STORE,
    id: 'o3',
    created_at: '2026-03-03T12:00:00Z',
    status: 'completed',
    items: 1,
    total: '15.00',
  },
  {
    store: STORE,
    id: 'o4',
    created_at: '2026-03-04T10:00:00Z',
    status: 'pending',
    customer_email: 'alice@example.com',
    items: 5,
    total: '200.00',
    lines: [{ line_id: '1', product_id: 'p2', product_name: 'Mug', quantity: 5, subtotal: '200.00' }],
  },
  {
    store: STORE,
    id: 'o5',
    created_at: '2026-02-10T10:00:00Z',
    status: 'completed',
    customer_email: 'carol@example.com',
    items: 2,
    total: '80.00',
    lines: [{ line_id: '1', product_id: 'p2', product_name: 'Mug', quantity: 2, subtotal: '80.00' }],
  },
];

const MARCH = 'from=2026-03-01&to=2026-03-31';
const LINE_METRICS =
  'units_sold,units_refunded,product_gross_sales,product_discounts,product_refunds,product_net_sales';

let service: TestService;
let key: string;
let sqlApp: Awaited<ReturnType<typeof startSqlEngineApp>> | undefined;

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly truncated: string | null;
}

async function ask(baseUrl: string, path: string): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return {
    status: response.status,
    text: await response.text(),
    truncated: response.headers.get('x-rows-truncated'),
  };
}

/** Both engines' answer to a tabular query: the same bytes and headers (L10). */
async function both(query: string, status = 200): Promise<Answer> {
  const path = `/api/reports/tabular?${query}`;
  const columnar = await ask(service.baseUrl, path);
  const sql = await ask(sqlApp?.baseUrl ?? '', path);
  assert.deepEqual(columnar, sql, `both engines, ${query}`);
  assert.equal(columnar.status, status, `${query}: ${columnar.text}`);
  return columnar;
}

const rowsOf = async (query: string) => (JSON.parse((await both(query)).text) as { rows: unknown[] }).rows;

describe('Section 15: order lines in reports', () => {
  before(async () => {
    service = await startTestService({ RATE_LIMIT_MAX: '100000' });
    const { org, key: k } = await service.addOrganization('Lines', []);
    key = k;
    await importOrdersWithLines(service.db, org.id, ORDERS);
    sqlApp = await startSqlEngineApp(service);
  });
  after(async () => {
    await sqlApp?.close();
    await service?.cleanup();
  });

  test('L3, L4: by product, the six line metrics, orders and customers counted distinct; pending and line-less orders nowhere', async () => {
    assert.deepEqual(
      await rowsOf(`metrics=orders,${LINE_METRICS},unique_customers&dimensions=product&${MARCH}`),
      [
        {
          product: 'Mug',
          orders: 1,
          units_sold: 1,
          units_refunded: 0,
          product_gross_sales: 40,
          product_discounts: 0,
          product_refunds: 0,
          product_net_sales: 40,
          unique_customers: 1,
        },
        {
          product: 'T-shirt',
          orders: 2,
          units_sold: 2,
          units_refunded: 1,
          product_gross_sales: 80,
          product_discounts: 12,
          product_refunds: 10,
          product_net_sales: 58,
          unique_customers: 2,
        },
      ],
    );
  });

  test('L2: a missing variant is Unknown; product_id and sku as sent', async () => {
    assert.deepEqual(await rowsOf(`metrics=units_sold&dimensions=variant,product_id,sku&${MARCH}`), [
      { variant: 'Bleu / M', product_id: 'p1', sku: 'TS-B-M', units_sold: 1 },
      { variant: 'Rouge / L', product_id: 'p1', sku: 'TS-R-L', units_sold: 1 },
      { variant: 'Unknown', product_id: 'p2', sku: 'MUG', units_sold: 1 },
    ]);
  });

  test('L5: a line is in the row of each of its categories, Unknown without one: the rows add up to more than the total', async () => {
    assert.deepEqual(await rowsOf(`metrics=orders,product_net_sales&dimensions=category&${MARCH}`), [
      { category: 'Bio', orders: 1, product_net_sales: 40 },
      { category: 'Unknown', orders: 1, product_net_sales: 40 },
      { category: 'Vêtements', orders: 2, product_net_sales: 58 },
    ]);
    // 40 + 40 + 58 = 138 against 98 in all: the T-shirt of o1 is in two categories.
    assert.deepEqual(await rowsOf(`metrics=product_net_sales&${MARCH}`), [{ product_net_sales: 98 }]);
  });

  test('L4 at order grain, worked example: product net sales reconcile with net revenue (taxes, shipping, fees, line-less orders)', async () => {
    assert.deepEqual(
      await rowsOf(
        `metrics=orders,gross_sales,net_revenue,product_gross_sales,product_net_sales&dimensions=date&${MARCH}`,
      ),
      [
        // o1: lines 80.00 net = net revenue 80.00.
        {
          date: '2026-03-02',
          orders: 1,
          gross_sales: 116,
          net_revenue: 80,
          product_gross_sales: 100,
          product_net_sales: 80,
        },
        // o2 + o3: net revenue 20 + 15 = 35 against lines 18: o2's fee (2.00) and o3 without lines (15.00).
        {
          date: '2026-03-03',
          orders: 2,
          gross_sales: 45,
          net_revenue: 35,
          product_gross_sales: 20,
          product_net_sales: 18,
        },
      ],
    );
  });

  test('L6: line filters keep the orders that contain the line, whole for order metrics, their kept lines for line metrics', async () => {
    assert.deepEqual(
      await rowsOf(`metrics=orders,gross_sales,product_net_sales&filter.sku=TS-B-M&${MARCH}`),
      [{ orders: 1, gross_sales: 116, product_net_sales: 40 }],
    );
    // Orders without lines are left out by any line filter, Unknown included.
    assert.deepEqual(
      await rowsOf(`metrics=orders,product_net_sales&filter.category=Unknown&dimensions=product&${MARCH}`),
      [{ product: 'Mug', orders: 1, product_net_sales: 40 }],
    );
    // With the category dimension, only the filtered categories' rows.
    assert.deepEqual(
      await rowsOf(`metrics=orders,units_sold&filter.category=Vêtements&dimensions=category&${MARCH}`),
      [{ category: 'Vêtements', orders: 2, units_sold: 2 }],
    );
    // Line filters AND F1's order filters.
    assert.deepEqual(
      await rowsOf(`metrics=orders,net_revenue&filter.product=T-shirt&filter.country=BE&${MARCH}`),
      [{ orders: 1, net_revenue: 20 }],
    );
    const answer = JSON.parse((await both(`metrics=orders&filter.product=Mug,T-shirt&${MARCH}`)).text);
    assert.deepEqual(answer.filters, { product: ['Mug', 'T-shirt'] });
    assert.deepEqual(answer.rows, [{ orders: 2 }]);
  });

  test('L7: sort=-product_net_sales&limit=1 is the top product; ties in T3 order; X-Rows-Truncated', async () => {
    const top = await both(
      `metrics=product_net_sales,orders&dimensions=product&sort=-product_net_sales&limit=1&${MARCH}`,
    );
    assert.deepEqual(JSON.parse(top.text).rows, [{ product: 'T-shirt', product_net_sales: 58, orders: 2 }]);
    assert.equal(top.truncated, 'true');
    // Bio and Unknown tie at 40: T3 between them.
    assert.deepEqual(
      await rowsOf(`metrics=product_net_sales&dimensions=category&sort=-product_net_sales&${MARCH}`),
      [
        { category: 'Vêtements', product_net_sales: 58 },
        { category: 'Bio', product_net_sales: 40 },
        { category: 'Unknown', product_net_sales: 40 },
      ],
    );
    // A dimension key, descending; at order grain too.
    assert.deepEqual(await rowsOf(`metrics=orders&dimensions=country&sort=-country&${MARCH}`), [
      { country: 'Unknown', orders: 1 },
      { country: 'FR', orders: 1 },
      { country: 'BE', orders: 1 },
    ]);
  });

  test('L7 with PC1 and L10: rows matched by product, sorted by the main period’s value; CSV alike', async () => {
    const query = `metrics=product_net_sales&dimensions=product&${MARCH}&compare=custom&compare_from=2026-02-01&compare_to=2026-02-28`;
    assert.deepEqual(await rowsOf(`${query}&sort=-product_net_sales`), [
      {
        product: 'T-shirt',
        product_net_sales: 58,
        product_net_sales_previous: 0,
        product_net_sales_change: null,
      },
      {
        product: 'Mug',
        product_net_sales: 40,
        product_net_sales_previous: 80,
        product_net_sales_change: -50,
      },
    ]);
    const csv = await both(`${query}&format=csv`);
    assert.equal(
      csv.text,
      'product,product_net_sales,product_net_sales_previous,product_net_sales_change\r\nMug,40,80,-50\r\nT-shirt,58,0,\r\n',
    );
  });

  test('L4: order metrics with no meaning per product → 400 INCOMPATIBLE_METRICS naming each and its replacement', async () => {
    const answer = await both(
      `metrics=gross_sales,orders,taxes,net_revenue&dimensions=date,product&${MARCH}`,
      400,
    );
    const body = JSON.parse(answer.text);
    assert.equal(body.code, 'INCOMPATIBLE_METRICS');
    assert.deepEqual(body.incompatibleMetrics, ['gross_sales', 'taxes', 'net_revenue']);
    assert.match(body.error, /gross_sales \(utilisez product_gross_sales\)/);
    assert.match(body.error, /net_revenue \(utilisez product_net_sales\)/);
    assert.match(body.error, /taxes \(sans équivalent/);
  });

  test('L7: sort naming an id not requested, an empty key or a key twice → 400 naming sort', async () => {
    for (const sort of ['gross_sales', '', 'orders,', 'orders,-orders', '-']) {
      const body = JSON.parse(
        (await both(`metrics=orders&dimensions=product&sort=${sort}&${MARCH}`, 400)).text,
      );
      assert.equal(body.code, 'INVALID_PARAMETER', sort);
      assert.match(body.error, /^Paramètre sort invalide/, sort);
    }
  });

  test('L9: the catalog without scope is G1’s; scope=all adds section 15 with grains; another scope → 400', async () => {
    const reference = JSON.parse((await ask(service.baseUrl, '/api/reports/catalog')).text);
    assert.equal(reference.dimensions.length, 5);
    assert.equal(reference.metrics.length, 10);
    assert.deepEqual(Object.keys(reference.metrics[0]), ['id', 'label', 'type']);
    const all = JSON.parse((await ask(service.baseUrl, '/api/reports/catalog?scope=all')).text);
    assert.deepEqual(all.dimensions.slice(5), [
      { id: 'product', label: 'Produit', type: 'string', grain: 'line' },
      { id: 'product_id', label: 'Identifiant produit', type: 'string', grain: 'line' },
      { id: 'variant', label: 'Variante', type: 'string', grain: 'line' },
      { id: 'sku', label: 'SKU', type: 'string', grain: 'line' },
      { id: 'category', label: 'Catégorie', type: 'string', grain: 'line' },
    ]);
    assert.deepEqual(all.metrics[0], { id: 'orders', label: 'Commandes', type: 'number', grain: 'order' });
    assert.deepEqual(
      all.metrics.slice(10).map((m: { label: string; type: string }) => `${m.label}:${m.type}`),
      [
        'Unités vendues:number',
        'Unités remboursées:number',
        'Ventes brutes produits:currency',
        'Remises produits:currency',
        'Remboursements produits:currency',
        'Ventes nettes produits:currency',
      ],
    );
    const refused = await ask(service.baseUrl, '/api/reports/catalog?scope=lines');
    assert.equal(refused.status, 400);
    assert.match(JSON.parse(refused.text).error, /^Paramètre scope invalide/);
  });

  test('C1: the cache key holds line filters and sort (no answer served for another)', async () => {
    const base = `metrics=product_net_sales&dimensions=product&${MARCH}`;
    const plain = await rowsOf(base);
    const sorted = await rowsOf(`${base}&sort=-product_net_sales`);
    const filtered = await rowsOf(`${base}&filter.product=Mug`);
    assert.notDeepEqual(plain, sorted);
    assert.deepEqual(filtered, [{ product: 'Mug', product_net_sales: 40 }]);
  });
});
