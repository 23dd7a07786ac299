// Issue 27 item 5, the « Produits » page over real HTTP against the real server and database: its
// French labels, its figures and its CSV equal the API's own answers for the same query (S3, L2–L5,
// L7, PC1), names with markup shown as text, hostile values refused with a 400 (never a 500), and
// the empty states (no line at all, no line in the period). One server and one data set.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseCsv } from 'csv-parse/sync';
import { addUserToOrganization } from '../../src/domain/users.js';
import { describeOn } from '../helpers/database.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { Client, PASSWORD } from '../helpers/web-client.js';

const STORE = 'https://produits.example';
const MUG = '<b>Mug</b> & "tasse"'; // markup in a product's name must stay text
const METRICS = 'units_sold,product_gross_sales,product_discounts,product_refunds,product_net_sales,orders';
const MARCH = 'from=2026-03-01&to=2026-03-31';

const order = (id: string, created_at: string, total: string, lines?: unknown[]) => ({
  store: STORE,
  id,
  created_at,
  status: 'completed',
  items: 1,
  total,
  ...(lines ? { lines } : {}),
});
const mug = (line_id: string, quantity: number, subtotal: string, more: Record<string, unknown> = {}) => ({
  line_id,
  product_id: 'p1',
  sku: 'MUG-1',
  product_name: MUG,
  categories: ['Cuisine', 'Cadeaux'],
  quantity,
  subtotal,
  ...more,
});
const shirt = (line_id: string, variant: string, quantity: number, subtotal: string, more = {}) => ({
  line_id,
  product_id: 'p2',
  variant_id: variant,
  sku: `TS-${variant}`,
  product_name: 'T-shirt',
  variant_name: variant,
  categories: ['Mode'],
  quantity,
  subtotal,
  ...more,
});

// March 2026 and its previous period (29 January – 28 February). m3 has no lines: in the total's
// orders (as the Revenue page counts them), in no row. The mug is in two categories (L5).
const ORDERS = [
  order('m1', '2026-03-02T10:00:00Z', '50.00', [
    mug('1', 2, '30.00', { discount: '3.00' }),
    shirt('2', 'Rouge', 1, '20.00', { refunded_quantity: 1, refunded_amount: '20.00' }),
  ]),
  order('m2', '2026-03-05T10:00:00Z', '60.00', [shirt('1', 'Bleu', 3, '60.00', { discount: '6.00' })]),
  order('m3', '2026-03-10T10:00:00Z', '15.00'),
  order('p1', '2026-02-10T10:00:00Z', '15.00', [mug('1', 1, '15.00')]),
];

/** The page's figure text (« 1 234,56 € », « 3 ») back to a number. */
const number = (text: string): number =>
  Number(
    text
      .replace(/[\s\u00a0\u202f€]/g, '')
      .replace('−', '-')
      .replace(',', '.'),
  );

/** The table's rows: data-key → the figures of each column (the main value of a compared cell). */
function tableRows(page: string): Map<string, Record<string, number>> {
  const rows = new Map<string, Record<string, number>>();
  const body = page.slice(page.indexOf('<tbody>'), page.indexOf('</tbody>'));
  for (const row of body.split('<tr ').slice(1)) {
    const key = /data-key="([^"]*)"/.exec(row)?.[1] ?? '';
    const figures: Record<string, number> = {};
    for (const cell of row.matchAll(
      /data-col="([a-z_]+)"[^>]*><span class="cell">(?:<span class="now">)?([^<]*)/g,
    ))
      figures[cell[1] ?? ''] = number(cell[2] ?? '');
    rows.set(
      key
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&'),
      figures,
    );
  }
  return rows;
}

describeOn('embedded', 'the « Produits » page over HTTP (issue 27, item 5)', () => {
  let service: TestService;
  let key = '';
  let browser: Client;
  let empty: Client;

  const api = async (query: string) => {
    const response = await service.get(`/api/reports/tabular?${query}`, key);
    assert.equal(response.status, 200, query);
    return response;
  };

  before(async () => {
    service = await startTestService();
    const added = await service.addOrganization('Atelier Produits', ORDERS);
    key = added.key;
    await addUserToOrganization(service.db, added.org.id, 'produits@atelier.example', PASSWORD);
    browser = new Client(service.baseUrl);
    assert.equal((await browser.login('produits@atelier.example')).status, 303);
    const bare = await service.addOrganization('Boutique sans lignes', [
      order('z1', '2026-03-02T10:00:00Z', '9.00'),
    ]);
    await addUserToOrganization(service.db, bare.org.id, 'vide@atelier.example', PASSWORD);
    empty = new Client(service.baseUrl);
    assert.equal((await empty.login('vide@atelier.example')).status, 303);
  });
  after(() => service?.cleanup());

  test('S3, L2–L4, L7: French labels; every row and the total equal the API’s answer for the same query', async () => {
    const response = await browser.get(`/reports/products?${MARCH}`);
    assert.equal(response.status, 200);
    const page = await response.text();
    for (const label of [
      'Produits',
      'Regrouper par',
      'Comparer à',
      'Trier par',
      'Ventes nettes',
      'Unités vendues',
      'Commandes',
      'Ventes brutes',
      'Remises',
      'Remboursements',
      'CSV pour Excel (français)',
      'CSV de l’API',
    ])
      assert.ok(page.includes(label), label);
    assert.match(
      page,
      /<a href="\/reports\/products"\s+aria-current="page">Produits<\/a>/,
      'in the navigation',
    );
    const body = (await (
      await api(`dimensions=product&metrics=${METRICS}&${MARCH}&sort=-product_net_sales`)
    ).json()) as {
      rows: Record<string, string | number>[];
    };
    const rows = tableRows(page);
    assert.deepEqual(
      [...rows.keys()],
      body.rows.map((r) => JSON.stringify([r.product])),
      'same rows, same order',
    );
    // Hand-worked: the T-shirt 80.00 gross − 6.00 − 20.00 refunded = 54.00, 3 units kept, 2 orders.
    assert.deepEqual(rows.get('["T-shirt"]'), {
      product_net_sales: 54,
      units_sold: 3,
      orders: 2,
      product_gross_sales: 80,
      product_discounts: 6,
      product_refunds: 20,
    });
    for (const row of body.rows) {
      const shown = rows.get(JSON.stringify([row.product]));
      for (const metric of METRICS.split(','))
        assert.equal(shown?.[metric], row[metric], `${row.product} ${metric}`);
    }
    const totals = (await (await api(`metrics=${METRICS}&${MARCH}`)).json()) as {
      rows: Record<string, number>[];
    };
    const totalRow = page.slice(page.indexOf('id="products-totals"'));
    for (const metric of METRICS.split(',')) {
      const cell =
        new RegExp(`data-col="${metric}"[^>]*><span class="cell">([^<]*)`).exec(totalRow)?.[1] ?? '';
      assert.equal(number(cell), totals.rows[0]?.[metric], `total ${metric}`);
    }
    assert.equal(
      totals.rows[0]?.orders,
      3,
      'the total counts m3, which has no lines, as the Revenue page does',
    );
  });

  test('escaping: a product name with markup is text in the table and in the chart', async () => {
    const page = await (await browser.get(`/reports/products?${MARCH}`)).text();
    assert.ok(!page.includes('<b>Mug</b>'), 'no markup from a name');
    assert.ok(page.includes('&lt;b&gt;Mug&lt;/b&gt; &amp; &quot;tasse&quot;'), 'the name, escaped');
    assert.match(
      page,
      /<svg[^>]*role="img"[^>]*aria-label="Meilleures ventes nettes par produit, du 1(er)? mars au 31 mars 2026[^"]*&lt;b&gt;Mug/,
    );
  });

  test('L2, L5, L7, PC1: by variant, by category, sorted, compared, each as the API answers', async () => {
    const cases: [string, string][] = [
      ['group=variant&sort=name', 'dimensions=product,variant&sort=product,variant'],
      ['group=category&sort=-units_sold', 'dimensions=category&sort=-units_sold'],
      ['group=sku&compare=previous_period', 'dimensions=sku&sort=-product_net_sales&compare=previous_period'],
    ];
    for (const [pageQuery, apiQuery] of cases) {
      const page = await (await browser.get(`/reports/products?${MARCH}&${pageQuery}`)).text();
      const body = (await (await api(`metrics=${METRICS}&${MARCH}&${apiQuery}`)).json()) as {
        dimensions: string[];
        rows: Record<string, string | number>[];
      };
      const rows = tableRows(page);
      assert.deepEqual(
        [...rows.keys()],
        body.rows.map((r) => JSON.stringify(body.dimensions.map((d) => r[d]))),
        pageQuery,
      );
      for (const row of body.rows) {
        const shown = rows.get(JSON.stringify(body.dimensions.map((d) => row[d])));
        for (const metric of METRICS.split(','))
          assert.equal(shown?.[metric], row[metric], `${pageQuery} ${metric}`);
      }
    }
    const variants = await (await browser.get(`/reports/products?${MARCH}&group=variant`)).text();
    assert.ok(
      variants.includes('T-shirt — Bleu') && variants.includes('sans variante'),
      'a variant named with its product',
    );
    const categories = await (await browser.get(`/reports/products?${MARCH}&group=category`)).text();
    assert.match(categories, /peut dépasser le total/, 'L5 said in words');
    const compared = await (await browser.get(`/reports/products?${MARCH}&compare=previous_period`)).text();
    assert.match(compared, /contre 29\/01\u00a0–\u00a028\/02\/2026/);
    assert.match(compared, /▲ \+80,0\u00a0%/, 'the mug: 27.00 net against 15.00');
  });

  test('V1: the page’s CSV is byte for byte the API’s CSV of the same query', async () => {
    const downloads: [string, string][] = [
      ['', 'dimensions=product&sort=-product_net_sales'],
      [
        'group=variant&compare=previous_year&sort=orders',
        'dimensions=product,variant&sort=orders&compare=previous_year',
      ],
    ];
    for (const [pageQuery, apiQuery] of downloads) {
      const csv = await browser.get(`/reports/products.csv?${MARCH}&${pageQuery}`);
      assert.equal(csv.status, 200);
      assert.match(csv.headers.get('content-disposition') ?? '', /attachment; filename="produits-/);
      const expected = await (await api(`metrics=${METRICS}&${MARCH}&${apiQuery}&format=csv`)).text();
      assert.equal(await csv.text(), expected, pageQuery);
    }
  });

  test('CSV pour Excel: BOM, `;`, decimal comma, CRLF, the table’s columns and total; every figure the API’s (S3, L4, PC1)', async () => {
    const page = await (await browser.get(`/reports/products?${MARCH}&group=variant`)).text();
    assert.match(
      page,
      /href="\/reports\/products-excel\.csv\?from=2026-03-01&amp;to=2026-03-31&amp;group=variant/,
    );
    const COLUMNS = [
      'product_net_sales',
      'units_sold',
      'orders',
      'product_gross_sales',
      'product_discounts',
      'product_refunds',
    ];
    const cases: [string, string, string[]][] = [
      ['', 'dimensions=product&sort=-product_net_sales', ['product']],
      [
        'group=variant&compare=previous_year&sort=orders',
        'dimensions=product,variant&sort=orders&compare=previous_year',
        ['product', 'variant'],
      ],
    ];
    for (const [pageQuery, apiQuery, dimensions] of cases) {
      const response = await browser.get(`/reports/products-excel.csv?${MARCH}&${pageQuery}`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-disposition') ?? '', /filename="produits-.*-excel\.csv"/);
      const bytes = Buffer.from(await response.arrayBuffer());
      assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 byte order mark');
      const text = bytes.subarray(3).toString('utf8');
      assert.ok(text.endsWith('\r\n') && !/[^\r]\n/.test(text), 'CRLF line ends');
      const [header, ...records] = parseCsv(text, { delimiter: ';', record_delimiter: '\r\n' }) as string[][];
      const compared = pageQuery.includes('compare');
      assert.deepEqual(header!.slice(0, dimensions.length + 6), [
        ...(dimensions.length === 1 ? ['Produit'] : ['Produit', 'Variante']),
        'Ventes nettes',
        'Unités vendues',
        'Commandes',
        'Ventes brutes',
        'Remises',
        'Remboursements',
      ]);
      assert.equal(header!.length, dimensions.length + (compared ? 18 : 6));
      const api = async (query: string) =>
        (
          (await (await service.get(`/api/reports/tabular?${query}`, key)).json()) as {
            rows: Record<string, unknown>[];
          }
        ).rows;
      const expected = await api(`metrics=${METRICS}&${MARCH}&${apiQuery}`);
      const [totals] = await api(`metrics=${METRICS}&${MARCH}${compared ? '&compare=previous_year' : ''}`);
      assert.equal(records.length, expected.length + 1, 'the rows, then the total');
      const figures = (row: Record<string, unknown>) => [
        ...COLUMNS.map((c) => row[c]),
        ...(compared
          ? [...COLUMNS.map((c) => row[`${c}_previous`]), ...COLUMNS.map((c) => row[`${c}_change`])]
          : []),
      ];
      const read = (cell: string) => (cell === '' ? null : Number(cell.replace(',', '.')));
      for (const [r, row] of [...expected, totals!].entries()) {
        const record = records[r]!;
        const names =
          r < expected.length
            ? dimensions.map((d) => String(row[d]))
            : ['Total', ...dimensions.slice(1).map(() => '')];
        assert.deepEqual(
          record.slice(0, dimensions.length),
          names.map((n) => (n === 'Unknown' ? 'sans variante' : n)),
        );
        assert.ok(
          record.slice(dimensions.length).every((cell) => /^(-?\d+(,\d+)?)?$/.test(cell)),
          'decimal comma, no grouping',
        );
        const got = record.slice(dimensions.length).map(read);
        const want = figures(row).map((v) => (v === null || v === undefined ? null : Number(v)));
        // Amounts to the cent; a change in percent to its one decimal.
        got.forEach((value, c) => {
          const close = c >= 12 ? value !== null && Math.abs(value - want[c]!) <= 0.05 : false;
          assert.ok(
            value === want[c] || close,
            `${pageQuery} row ${r}, ${header![c + dimensions.length]}: ${value} ≠ ${want[c]}`,
          );
        });
      }
    }
  });

  test('E3 on the page: hostile values get a 400 in French next to the field, never a 500 nor the value', async () => {
    const hostile = [
      'group=%3Cscript%3E',
      'sort=product_net_sales%3Bdrop',
      'sort=-',
      'sort=taxes',
      'compare=custom',
      'from=2026-02-30',
      'to=%00',
      'from=2026-04-01&to=2026-03-01',
      'from=0001-01-01&to=0001-01-05&compare=previous_period',
      `group=${'x'.repeat(5000)}`,
    ];
    for (const query of hostile) {
      for (const path of ['/reports/products', '/reports/products.csv', '/reports/products-excel.csv']) {
        const response = await browser.get(`${path}?${query}`);
        assert.equal(response.status, 400, `${path}?${query.slice(0, 40)}`);
        const text = await response.text();
        assert.ok(
          !text.includes('<script>') && !text.includes('drop') && !text.includes('xxxxx'),
          'not shown back',
        );
        if (path === '/reports/products') assert.match(text, /invalide|commencerait|après la date de fin/);
      }
    }
    const twice = await browser.get(`/reports/products?group=sku&group=category`);
    assert.equal(twice.status, 400, 'a list where one value is expected');
  });

  test('empty states: no line at all leads to Boutiques; no line in the period says so', async () => {
    const none = await (await empty.get(`/reports/products?${MARCH}`)).text();
    assert.match(none, /Aucun produit vendu pour l’instant/);
    assert.match(none, /href="\/settings\/stores"/);
    assert.ok(!none.includes('products-table'), 'no table of zeros');
    const outside = await (await browser.get('/reports/products?from=2020-01-01&to=2020-01-31')).text();
    assert.match(outside, /Aucune vente de produit sur cette période/);
    assert.ok(!outside.includes('products-table'));
  });
});
