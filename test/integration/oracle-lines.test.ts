// Section 15 against the independent oracle (test/helpers/oracle.ts, written from SPEC.md only):
// generated orders with lines (variants, renamed products, multi-category and uncategorized lines,
// discounts, partial refunds, orders without lines, excluded orders, re-imported orders whose lines
// are replaced), then random queries at line and order grain with line filters, F1 filters, `sort`,
// G2, O1, limits, PC1 and CSV, on the columnar engine (from its snapshot of the lines) and on the SQL
// engine alone. Deterministic: ORACLE_SEED=<n> replays another seed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseCsv } from 'csv-parse/sync';
import { startSqlEngineApp, startTestService, type TestService } from '../helpers/service.js';
import { importOrdersWithLines } from '../helpers/order-lines.js';
import {
  DEFAULT_SETTINGS,
  DISTINCT_AT_LINE_GRAIN,
  GRANULARITIES,
  LINE_DIMENSION_IDS,
  LINE_METRIC_IDS,
  METRIC_IDS,
  csvCells,
  oracle,
  queryFromSearch,
  type RawLine,
  type RawOrder,
} from '../helpers/oracle.js';
import { mulberry32 } from '../helpers/seeded-random.js';

const SEED = Number(process.env.ORACLE_SEED ?? 20261128) >>> 0;
const random = mulberry32(SEED);
const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const chance = (p: number) => random() < p;
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const shuffle = <T>(items: readonly T[]): T[] => {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
};
const cents = (n: number) => `${Math.floor(n / 100)}.${String(n % 100).padStart(2, '0')}`;
const day = (offset: number) =>
  new Date(Date.UTC(2025, 0, 1) + offset * 86_400_000).toISOString().slice(0, 10);

const STORES = ['https://a.example', 'https://b.example'];
const CATEGORIES = ['Vêtements', 'Bio', 'Maison', 'Épicerie', 'Été 2026', 'Unknown'];
/** Products: one renamed (same id, two names), one without id, variants with and without names. */
const PRODUCTS = [
  {
    id: 'p1',
    names: ['T-shirt'],
    variants: [
      ['v1', 'Bleu / M'],
      ['v2', 'Rouge / L'],
    ],
    skus: ['TS-B', 'TS-R'],
  },
  { id: 'p2', names: ['Mug', 'Mug émaillé'], variants: [], skus: ['MUG'] },
  {
    id: 'p3',
    names: ['Thé vert'],
    variants: [
      ['v3', '100 g'],
      ['v4', ''],
    ],
    skus: ['THE-100', ''],
  },
  { id: '', names: ['Emballage cadeau'], variants: [], skus: [] },
  { id: 'p5', names: ['=Formule'], variants: [], skus: ['-SKU'] },
];
const EMAILS = [
  'alice@example.com',
  'bob@example.com',
  'carol@example.com',
  'dan@example.com',
  'eve@example.com',
];

function generateLine(id: string): RawLine {
  const product = pick(PRODUCTS);
  const variant = product.variants.length > 0 && chance(0.8) ? pick(product.variants) : undefined;
  const quantity = int(1, 4);
  const subtotal = quantity * int(100, 5000);
  const discount = chance(0.4) ? int(0, Math.floor(subtotal / 3)) : 0;
  const refundedQuantity = chance(0.2) ? int(0, quantity) : 0;
  const refunded = refundedQuantity > 0 ? int(0, subtotal - discount) : 0;
  const categories = shuffle(CATEGORIES).slice(0, pick([0, 0, 1, 1, 1, 2, 3]));
  return {
    line_id: id,
    ...(product.id !== '' ? { product_id: product.id } : {}),
    ...(variant ? { variant_id: variant[0], variant_name: variant[1] } : {}),
    ...(product.skus.length > 0 ? { sku: pick(product.skus) } : {}),
    product_name: pick(product.names),
    ...(categories.length > 0 || chance(0.3) ? { categories } : {}),
    quantity,
    subtotal: cents(subtotal),
    ...(discount > 0 || chance(0.3) ? { discount: cents(discount) } : {}),
    ...(refundedQuantity > 0
      ? { refunded_quantity: refundedQuantity, refunded_amount: cents(refunded) }
      : {}),
  };
}

function generateOrder(id: string): RawOrder {
  const lines = chance(0.15) ? [] : Array.from({ length: int(1, 4) }, (_, k) => generateLine(`l${k}`));
  const total = int(0, 40_000);
  const tax = int(0, Math.floor(total / 5));
  const email = chance(0.8) ? pick(EMAILS) : undefined;
  return {
    store: pick(STORES),
    id,
    created_at: `${day(int(0, 540))}T${String(int(0, 23)).padStart(2, '0')}:${String(int(0, 59)).padStart(2, '0')}:00Z`,
    status: pick(['completed', 'completed', 'completed', 'processing', 'pending', 'refunded']),
    ...(chance(0.8) ? { billing_country: pick(['FR', 'BE', 'DE']) } : {}),
    ...(email ? { customer_email: email } : {}),
    items: int(0, 6),
    total: cents(total),
    tax_total: cents(tax),
    shipping_total: cents(int(0, 1000)),
    ...(lines.length > 0 || chance(0.5) ? { lines } : {}),
  };
}

const FILTER_VALUES: Record<string, readonly string[]> = {
  product: ['T-shirt', 'Mug', 'Mug émaillé', 'Thé vert', 'Emballage cadeau', 'Absent'],
  product_id: ['p1', 'p2', 'p3', 'Unknown', 'p5'],
  variant: ['Bleu / M', 'Rouge / L', '100 g', 'Unknown'],
  sku: ['TS-B', 'MUG', 'THE-100', 'Unknown', '-SKU'],
  category: CATEGORIES,
  country: ['FR', 'BE', 'Unknown'],
  customer_type: ['new', 'returning', 'anonymous'],
};

/** A random valid request of section 15, as a query string. */
function generateQuery(): string {
  const lineDimensions = shuffle(LINE_DIMENSION_IDS).slice(0, pick([0, 1, 1, 1, 2]));
  const orderDimensions = shuffle(['date', 'store', 'country', 'customer_type', 'status'] as const).slice(
    0,
    pick([0, 0, 1, 1, 2]),
  );
  const dimensions = shuffle([...lineDimensions, ...orderDimensions]);
  const allowed =
    lineDimensions.length > 0
      ? [...DISTINCT_AT_LINE_GRAIN, ...LINE_METRIC_IDS]
      : [...METRIC_IDS, ...LINE_METRIC_IDS, ...LINE_METRIC_IDS];
  const metrics = [...new Set(shuffle(allowed).slice(0, int(1, 5)))];
  const to = day(int(20, 560));
  const params = [
    `metrics=${metrics.join(',')}`,
    `from=${day(int(-10, 540))}`.replace(/from=(.*)/, (m, f: string) => (f > to ? `from=${to}` : m)),
    `to=${to}`,
  ];
  if (dimensions.length > 0) params.push(`dimensions=${dimensions.join(',')}`);
  if (chance(0.2)) params.push(`timezone=${pick(['Europe/Paris', 'America/New_York'])}`);
  for (const id of shuffle(Object.keys(FILTER_VALUES)).slice(0, pick([0, 0, 1, 1, 2]))) {
    const values = shuffle(FILTER_VALUES[id] ?? []).slice(0, int(1, 2));
    params.push(`filter.${id}=${encodeURIComponent(values.join(',')).replace(/%2C/g, ',')}`);
  }
  if (chance(0.5)) {
    const keys = shuffle([...dimensions, ...metrics]).slice(0, int(1, 2));
    params.push(`sort=${keys.map((k) => (chance(0.6) ? `-${k}` : k)).join(',')}`);
  }
  if (dimensions.includes('date') && chance(0.4)) params.push(`granularity=${pick(GRANULARITIES)}`);
  if (chance(0.3)) params.push(`limit=${int(1, 8)}`);
  if (chance(0.2)) params.push(`offset=${int(1, 5)}`);
  if (chance(0.25)) params.push(`compare=${pick(['previous_period', 'previous_year'])}`);
  if (chance(0.15)) params.push('format=csv');
  return params.join('&');
}

/** undefined when the service answers as the oracle; otherwise what differs. */
async function mismatch(get: TestService['get'], key: string, orders: readonly RawOrder[], query: string) {
  const search = new URLSearchParams(query);
  const csv = search.get('format') === 'csv';
  search.delete('format');
  const expected = oracle(orders, DEFAULT_SETTINGS, queryFromSearch(search));
  const response = await get(`/api/reports/tabular?${query}`, key);
  const text = await response.text();
  if (response.status !== 200) return `${query}: ${response.status} ${text}`;
  const truncated = response.headers.get('x-rows-truncated') === 'true';
  if (truncated !== expected.truncated) return `${query}: X-Rows-Truncated ${truncated}`;
  const got = csv ? parseCsv(text, { record_delimiter: '\r\n' }) : JSON.parse(text);
  const want = csv ? csvCells(expected.body) : expected.body;
  try {
    assert.deepEqual(got, want);
    return undefined;
  } catch {
    return `${query}\n  expected ${JSON.stringify(want).slice(0, 600)}\n  actual   ${JSON.stringify(got).slice(0, 600)}`;
  }
}

describe(`oracle, section 15: line reports equal an independent implementation of the SPEC (seed ${SEED})`, () => {
  let service: TestService;
  let key: string;
  let orders: RawOrder[] = [];

  before(async () => {
    service = await startTestService({ RATE_LIMIT_MAX: '100000' });
    const created = await service.addOrganization('Lines oracle', []);
    key = created.key;
    orders = Array.from({ length: 260 }, (_, i) => generateOrder(`o${i}`));
    // I2: re-imported orders replace their lines wholly (some lose them all).
    const second = Array.from({ length: 30 }, () => generateOrder(pick(orders).id));
    for (const order of second) order.store = orders.find((o) => o.id === order.id)?.store ?? order.store;
    await importOrdersWithLines(service.db, created.org.id, orders);
    await importOrdersWithLines(service.db, created.org.id, second);
    orders = [...orders, ...second];
  });
  after(() => service?.cleanup());

  test('L2–L7, L10: 90 random queries on the columnar engine, 50 on the SQL engine alone', async (t) => {
    const problems: string[] = [];
    let rows = 0;
    for (let i = 0; i < 90; i++) {
      const query = generateQuery();
      rows += oracle(orders, DEFAULT_SETTINGS, queryFromSearch(new URLSearchParams(query))).totalRows;
      const problem = await mismatch(service.get, key, orders, query);
      if (problem) problems.push(problem);
    }
    const sql = await startSqlEngineApp(service);
    try {
      for (let i = 0; i < 50; i++) {
        const problem = await mismatch(sql.get, key, orders, generateQuery());
        if (problem) problems.push(problem);
      }
    } finally {
      await sql.close();
    }
    t.diagnostic(
      `seed ${SEED}: 140 queries, ${rows} rows on the columnar side, ${problems.length} mismatches`,
    );
    assert.deepEqual(problems.slice(0, 3), []);
  });
});
