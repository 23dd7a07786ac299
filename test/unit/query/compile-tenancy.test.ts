import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atLineGrain, DEFAULT_DEDUCTIONS, DIMENSIONS, METRICS, type MetricId } from '../../../src/catalog.js';
import { compileReport } from '../../../src/query/compile.js';
import { compileComparedReport } from '../../../src/query/compile-compared.js';
import { NO_EXTENSIONS } from '../../../src/query/parse.js';
import { planReport } from '../../../src/query/plan.js';
import { tenantTablesWithoutFilter } from '../../helpers/tenancy.js';

const EVERY_FILTER = { store: ['s'], country: ['FR'], customer_type: ['new'], status: ['completed'] };
/** L6: every line filter, and F1's with them. */
const EVERY_LINE_FILTER = { product: ['p'], product_id: ['1'], variant: ['v'], sku: ['s'], category: ['c'] };
const BOTH_FILTERS = { ...EVERY_FILTER, ...EVERY_LINE_FILTER };

/** L4: the metrics a request may ask with these dimensions (the others are refused at line grain). */
const allowed = (dimensions: readonly string[], metrics: readonly MetricId[]): MetricId[] =>
  DIMENSIONS.some((d) => d.grain === 'line' && dimensions.includes(d.id))
    ? metrics.filter((m) => atLineGrain(m).kind !== 'refused')
    : [...metrics];

test('tenancy: for every combination of dimensions (L2 too), with and without filters (F1, L6), every table of the compiled query is filtered by organization', () => {
  const ids = DIMENSIONS.map((d) => d.id);
  let checked = 0;
  for (let mask = 0; mask < 1 << ids.length; mask++) {
    const dimensions = ids.filter((_, i) => mask & (1 << i));
    for (const metrics of [METRICS.map((m) => m.id), ['orders' as const], ['new_customers' as const]]) {
      for (const filters of [
        {},
        EVERY_FILTER,
        { store: ['s'] },
        { customer_type: ['returning'] },
        EVERY_LINE_FILTER,
        BOTH_FILTERS,
      ]) {
        const plan = planReport(
          {
            dimensions,
            metrics: allowed(dimensions, metrics),
            from: '2026-01-01',
            to: '2026-01-31',
            timezone: 'UTC',
            limit: 10,
            ...NO_EXTENSIONS,
            filters,
          },
          { id: '1', settings: { excludedStatuses: [], deductions: DEFAULT_DEDUCTIONS } },
        );
        const { sql } = compileReport(plan);
        assert.deepEqual(tenantTablesWithoutFilter(sql), [], sql);
        checked++;
      }
    }
  }
  assert.equal(checked, 1024 * 3 * 6);
});

test('the tenancy checker itself catches a missing filter', () => {
  assert.deepEqual(tenantTablesWithoutFilter('SELECT count(*) FROM orders o WHERE o.created_at > $1'), [
    'orders o',
  ]);
  assert.deepEqual(
    tenantTablesWithoutFilter(
      'SELECT * FROM orders o JOIN stores s ON s.id = o.store_id WHERE o.organization_id = $1',
    ),
    ['stores s'],
  );
  assert.deepEqual(tenantTablesWithoutFilter('UPDATE api_keys SET revoked_at = now() WHERE prefix = $1'), [
    'api_keys',
  ]);
  assert.deepEqual(tenantTablesWithoutFilter('SELECT 1 FROM organizations WHERE id = $1'), []);
});

test('tenancy, PC1: every table of a compared statement (both periods) is filtered by organization', () => {
  const ids = DIMENSIONS.map((d) => d.id);
  let checked = 0;
  for (let mask = 0; mask < 1 << ids.length; mask++) {
    const dimensions = ids.filter((_, i) => mask & (1 << i));
    for (const filters of [{}, EVERY_FILTER, BOTH_FILTERS]) {
      const plan = planReport(
        {
          dimensions,
          metrics: allowed(
            dimensions,
            METRICS.map((m) => m.id),
          ),
          from: '2026-01-01',
          to: '2026-01-31',
          timezone: 'UTC',
          limit: 10,
          ...NO_EXTENSIONS,
          filters,
          comparison: { mode: 'previous_year', from: '2025-01-01', to: '2025-01-31' },
        },
        { id: '1', settings: { excludedStatuses: [], deductions: DEFAULT_DEDUCTIONS } },
      );
      const { sql } = compileComparedReport({ ...plan, comparison: plan.comparison! });
      assert.equal(sql.match(/FROM orders o/g)?.length, 2, sql);
      assert.deepEqual(tenantTablesWithoutFilter(sql), [], sql);
      checked++;
    }
  }
  assert.equal(checked, 1024 * 3);
});
