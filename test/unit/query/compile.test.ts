import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  atLineGrain,
  DEFAULT_DEDUCTIONS,
  DIMENSIONS,
  METRICS,
  type Deduction,
} from '../../../src/catalog.js';
import { compileReport } from '../../../src/query/compile.js';
import { netRevenueSql } from '../../../src/query/net-revenue.js';
import { planReport } from '../../../src/query/plan.js';
import { NO_EXTENSIONS, type TabularQuery } from '../../../src/query/parse.js';

const settings = { excludedStatuses: ['pending', 'failed'], deductions: DEFAULT_DEDUCTIONS };
const query = (over: Partial<TabularQuery> = {}): TabularQuery => ({
  dimensions: [],
  metrics: ['orders'],
  from: '2026-03-01',
  to: '2026-03-31',
  timezone: 'Europe/Paris',
  limit: 100,
  ...NO_EXTENSIONS,
  ...over,
});

test('T1: the plan covers from 00:00Z to the day after to, 00:00Z, whatever the timezone', () => {
  const plan = planReport(query(), { id: '7', settings });
  assert.equal(plan.periodStart, '2026-03-01T00:00:00Z');
  assert.equal(plan.periodEnd, '2026-04-01T00:00:00Z');
  assert.equal(plan.organizationId, '7');
});

test('tenancy: every compiled query filters orders, order lines, stores and first orders by the organization', () => {
  const plan = planReport(
    query({
      dimensions: DIMENSIONS.map((d) => d.id),
      metrics: METRICS.filter((m) => atLineGrain(m.id).kind !== 'refused').map((m) => m.id),
    }),
    { id: '42', settings },
  );
  const { sql, params } = compileReport(plan);
  assert.equal(params[0], '42');
  assert.match(sql, /WHERE o\.organization_id = \$1::bigint/);
  assert.match(sql, /JOIN order_lines l ON l\.organization_id = \$1::bigint/);
  assert.match(sql, /JOIN stores s ON s\.organization_id = o\.organization_id/);
  assert.match(sql, /customer_first_orders f ON f\.organization_id = \$1::bigint/);
});

test('L4: an order metric refused at line grain never compiles (the parse step refuses it first)', () => {
  const plan = planReport(query({ dimensions: ['product'], metrics: ['gross_sales'] }), {
    id: '1',
    settings,
  });
  assert.throws(() => compileReport(plan), /at line grain: gross_sales/);
});

test('values are bound, never pasted: timezone, period, statuses and limit are parameters', () => {
  const evil = "UTC'; DROP TABLE orders; --";
  const plan = planReport(query({ dimensions: ['date'], timezone: evil }), {
    id: '1',
    settings: { excludedStatuses: ["x'y"], deductions: [] },
  });
  const { sql, params } = compileReport(plan);
  assert.ok(!sql.includes('DROP'));
  assert.ok(!sql.includes("x'y"));
  assert.ok(params.includes(evil));
  assert.ok(params.includes(101), 'limit + 1 reveals truncation (T6)');
});

test('T3/T5: dimensions are grouped and sorted by code point in request order; no dimension means one totals row', () => {
  const grouped = compileReport(
    planReport(query({ dimensions: ['store', 'date'] }), { id: '1', settings }),
  ).sql;
  assert.match(grouped, /GROUP BY 1, 2/);
  assert.match(grouped, /ORDER BY "store" COLLATE "C", "date" COLLATE "C"/);
  const totals = compileReport(planReport(query(), { id: '1', settings })).sql;
  assert.doesNotMatch(totals, /GROUP BY|LIMIT/);
});

test('the first-order join is only planned when customer types are needed', () => {
  assert.equal(
    planReport(query({ metrics: ['unique_customers'] }), { id: '1', settings }).needsFirstOrders,
    false,
  );
  assert.equal(
    planReport(query({ metrics: ['new_customers'] }), { id: '1', settings }).needsFirstOrders,
    true,
  );
  assert.equal(
    planReport(query({ dimensions: ['customer_type'] }), { id: '1', settings }).needsFirstOrders,
    true,
  );
});

test('S2: net revenue deducts each chosen component, a refunded amount only once', () => {
  const cases: [Deduction[], string][] = [
    [[], 'o.total'],
    [['refunds'], 'o.total - o.refund_total'],
    [['taxes'], 'o.total - o.tax_total'],
    [
      ['refunds', 'taxes', 'shipping'],
      'o.total - o.refund_total - (o.tax_total - o.refund_tax) - (o.shipping_total - o.refund_shipping)',
    ],
    [['taxes', 'shipping', 'fees'], 'o.total - o.tax_total - o.shipping_total - o.fee_total'],
  ];
  for (const [deductions, expected] of cases) assert.equal(netRevenueSql(deductions), expected);
});
