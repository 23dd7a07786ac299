// Section 15 in the parse and plan steps: L4's grain rule, L6's line filters, L7's sort, L9's scope.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_DEDUCTIONS, DIMENSIONS, METRICS } from '../../../src/catalog.js';
import { AppError } from '../../../src/errors.js';
import { parseCatalogScope, parseTabularQuery, type RawQuery } from '../../../src/query/parse.js';
import { planReport } from '../../../src/query/plan.js';

const context = { today: '2026-11-22', isTimeZone: (name: string) => name === 'UTC' };
const parse = (raw: RawQuery) => parseTabularQuery({ metrics: 'orders', ...raw }, context);
const settings = { excludedStatuses: [], deductions: DEFAULT_DEDUCTIONS };

function rejects(run: () => unknown, code: string, message?: RegExp): AppError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, code);
    if (message) assert.match(error.message, message);
    return error;
  }
  assert.fail('accepted');
}

test('L2, L3: the catalog lists section 15 after the reference, each entry with its grain', () => {
  assert.deepEqual(
    DIMENSIONS.filter((d) => d.grain === 'line').map((d) => d.id),
    ['product', 'product_id', 'variant', 'sku', 'category'],
  );
  assert.deepEqual(
    METRICS.filter((m) => m.grain === 'line').map((m) => m.id),
    [
      'units_sold',
      'units_refunded',
      'product_gross_sales',
      'product_discounts',
      'product_refunds',
      'product_net_sales',
    ],
  );
  assert.deepEqual(
    METRICS.slice(0, 10).map((m) => m.grain),
    Array.from({ length: 10 }, () => 'order'),
  );
});

test('L4: order metrics refused at line grain, in request order, with their replacements', () => {
  const error = rejects(
    () => parse({ metrics: 'taxes,orders,net_revenue,items_sold,unique_customers', dimensions: 'sku' }),
    'INCOMPATIBLE_METRICS',
    /taxes \(sans équivalent par produit\), net_revenue \(utilisez product_net_sales\), items_sold \(utilisez units_sold\)$/,
  );
  assert.deepEqual(error.body, { incompatibleMetrics: ['taxes', 'net_revenue', 'items_sold'] });
  assert.equal(error.status, 400);
  // At order grain every metric is accepted, line metrics included.
  assert.equal(parse({ metrics: 'gross_sales,product_net_sales', dimensions: 'date' }).metrics.length, 2);
  // Unknown ids come first (P2).
  rejects(() => parse({ metrics: 'gross_sales,nope', dimensions: 'product' }), 'UNKNOWN_IDENTIFIERS');
});

test('L4, L6: the plan knows its grain and whether it reads lines', () => {
  const plan = (raw: RawQuery) => planReport(parse(raw), { id: '1', settings });
  assert.deepEqual([plan({}).grain, plan({}).readsLines], ['order', false]);
  assert.deepEqual(
    [plan({ dimensions: 'category' }).grain, plan({ dimensions: 'category' }).readsLines],
    ['line', true],
  );
  assert.equal(plan({ metrics: 'units_sold' }).readsLines, true);
  assert.equal(plan({ 'filter.sku': 'A' }).readsLines, true);
  assert.equal(plan({ 'filter.sku': 'A' }).grain, 'order');
  assert.deepEqual(parse({ 'filter.category': ' a ,b,a' }).filters, { category: ['a', 'b'] });
});

test('L7: sort keys, descending with -, given twice joined; unrequested, empty or repeated keys → 400 naming sort', () => {
  const q = parse({
    metrics: 'orders,product_net_sales',
    dimensions: 'product',
    sort: ['-product_net_sales', ' product '],
  });
  assert.deepEqual(q.sort, [
    { id: 'product_net_sales', descending: true },
    { id: 'product', descending: false },
  ]);
  assert.equal(parse({}).sort, undefined);
  for (const sort of ['gross_sales', '', ',orders', 'orders,', '-', 'orders,-orders', 'date']) {
    rejects(
      () => parse({ metrics: 'orders', dimensions: 'product', sort }),
      'INVALID_PARAMETER',
      /^Paramètre sort invalide/,
    );
  }
});

test('L9: scope absent is the reference catalog, all is every entry, anything else → 400 naming scope', () => {
  assert.equal(parseCatalogScope({}), 'reference');
  assert.equal(parseCatalogScope({ scope: 'all' }), 'all');
  rejects(() => parseCatalogScope({ scope: 'ALL' }), 'INVALID_PARAMETER', /^Paramètre scope invalide/);
  rejects(() => parseCatalogScope({ scope: '' }), 'INVALID_PARAMETER', /^Paramètre scope invalide/);
});
