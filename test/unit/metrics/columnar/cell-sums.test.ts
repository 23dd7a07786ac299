// Issue 28, item 2: a part's quarter-hour sums (cell-sums.ts) must give the rows the scan of its
// orders gives (T1, S1, S2, M1, G2, U2–U5), also once a delta has retired some of the orders they
// were summed with (issue 19): a customer's run and an anonymous order, taken out again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ORDER_METRIC_IDS } from '../../../../src/catalog.js';
import { TimeSlices } from '../../../../src/limits/time-slice.js';
import { cellSums, FIELDS, ORDERS, readyCellSums } from '../../../../src/metrics/columnar/cell-sums.js';
import { anonymousKey } from '../../../../src/metrics/columnar/codes.js';
import type { DayBuckets } from '../../../../src/metrics/columnar/day-buckets.js';
import { EXECUTION_PATHS, executePlan } from '../../../../src/metrics/columnar/execute.js';
import { LiveSnapshot } from '../../../../src/metrics/columnar/live-snapshot.js';
import { OrderColumns, type OrderValues } from '../../../../src/metrics/columnar/order-columns.js';
import type { Part } from '../../../../src/metrics/columnar/snapshot.js';
import type { ReportPlan } from '../../../../src/query/plan.js';
import { mulberry32 } from '../../../helpers/seeded-random.js';

const DAY = 86_400;
const FIRST = Date.UTC(2025, 0, 1) / 1000;
const STATUSES = ['completed', 'pending', 'refunded'];
const METRICS = ORDER_METRIC_IDS;

/** An order of day `day` (0…9), at any second of it; `customer` null: anonymous, keyed by `id`. */
function order(random: () => number, customer: string | null, id: string): OrderValues {
  const amount = () => Math.floor(random() * 10_000);
  return {
    customer,
    seconds: FIRST + Math.floor(random() * 10 * DAY),
    storeId: 1 + Math.floor(random() * 2),
    status: STATUSES[Math.floor(random() * STATUSES.length)] as string,
    country: random() < 0.5 ? 'FR' : 'Unknown',
    items: 1 + Math.floor(random() * 3),
    cents: [amount(), amount(), amount(), amount(), amount(), amount(), amount()],
    key: customer === null ? anonymousKey(1, id) : null,
  };
}

/** Days 2024-12-31 … 2025-01-11 in UTC (hours as the index's unit, as loadDayBuckets makes them). */
function utcDays(): DayBuckets {
  const starts = Float64Array.from({ length: 12 }, (_, k) => FIRST + (k - 1) * DAY);
  const labels = Array.from(starts, (s) => new Date(s * 1000).toISOString().slice(0, 10));
  const index = Int32Array.from({ length: 13 * 24 }, (_, u) => Math.min(11, Math.floor(u / 24)));
  return { labels, starts, index, unit: 3600, aligned: true };
}

const plan = (dimensions: ReportPlan['dimensions'], from: string): ReportPlan => ({
  organizationId: '1',
  dimensions,
  metrics: METRICS,
  periodStart: `${from}T00:00:00.000Z`,
  periodEnd: '2025-01-09T00:00:00.000Z',
  timezone: 'UTC',
  limit: 1000,
  filters: {},
  granularity: 'day',
  offset: 0,
  settings: { excludedStatuses: ['pending'], deductions: ['refunds', 'taxes', 'shipping', 'fees'] },
  needsFirstOrders: true,
  grain: 'order',
  readsLines: false,
  sort: [],
});

/** A snapshot of two stores and one part of `count` orders, the n-th made by `make(n)`. */
async function snapshotOf(count: number, make: (n: number) => OrderValues): Promise<LiveSnapshot> {
  const live = new LiveSnapshot('1');
  live.codes.addStore(1, 'https://a.example');
  live.codes.addStore(2, 'https://b.example');
  const columns = new OrderColumns(64, live.codes, 1_000_000);
  for (let n = 0; n < count; n++) columns.pushValues(make(n));
  live.addPart(await columns.part());
  return live;
}

test('quarter-hour sums: the scan’s rows, before and after a delta retires orders they hold (issue 28, T1, S1, S2, G2, U2–U5)', async () => {
  const random = mulberry32(28);
  const live = await snapshotOf(600, (n) =>
    order(random, n % 5 === 0 ? null : `c${n % 90}@example.com`, `o${n}`),
  );
  const buckets = utcDays();
  const cells = { ...EXECUTION_PATHS, cellsPerOrder: Infinity, waitForCells: true };
  const scan = { ...EXECUTION_PATHS, cellsPerOrder: 0 };
  const questions = [plan([], '2025-01-03'), plan(['date'], '2025-01-03'), plan(['date'], '2025-01-01')];
  const answers = async () => {
    const rows = [];
    for (const question of questions) {
      const expected = await executePlan(live.view(), question, buckets, scan);
      assert.deepStrictEqual(await executePlan(live.view(), question, buckets, cells), expected);
      rows.push(expected);
    }
    return rows;
  };
  const before = await answers(); // the part's table is built here
  // A delta: customer c1's orders written again (their run retired), an anonymous order deleted.
  const applied = await live.apply(
    {
      version: '2',
      databaseSnapshot: '',
      readAt: 0,
      stores: [[1, 'https://a.example']],
      customers: ['c1@example.com'],
      retiredAnonymous: [[1, 'o0']],
      orders: [order(random, 'c1@example.com', 'n1')],
    },
    1_000_000,
  );
  assert.ok(applied);
  assert.ok(live.view().parts[0]?.retiredRuns && live.view().parts[0]?.retiredOrders);
  const after = await answers(); // the same table, the retired orders taken out
  assert.notDeepStrictEqual(after, before, 'the delta changed the figures');
});

test('a report never waits for quarter-hour sums: the first finds none and starts their build, a later one finds them built (issue 28)', async () => {
  const random = mulberry32(29);
  const live = await snapshotOf(300, (n) => order(random, `c${n % 40}@example.com`, `o${n}`));
  const part = live.view().parts[0] as Part;
  const excluded = new Uint8Array(64);
  const ask = () => readyCellSums(part, excluded, 'none', Infinity, 1 << 15, new TimeSlices('1'));
  assert.equal(ask(), undefined, 'not built yet: the report scans the orders');
  const table = await cellSums(part, excluded, 'none', Infinity, 1 << 15, new TimeSlices('1'));
  assert.ok(table);
  assert.equal(ask(), table, 'the build the first report started, found ready');
  const orders = Array.from({ length: table.cells }, (_, c) => table.sums[c * FIELDS + ORDERS] as number);
  assert.equal(
    orders.reduce((n, v) => n + v, 0),
    300,
  );
});

test('customers counted by their first and last counted orders: the walk’s counts at the period’s very edges, in one row and by day (issue 28, T1, S1, G2, U2–U5)', async () => {
  const random = mulberry32(30);
  const start = Date.UTC(2025, 0, 3) / 1000;
  const end = Date.UTC(2025, 0, 9) / 1000;
  // Instants on both sides of each end of the period, and within it: first and last orders on
  // the edges, customers with orders before and after the period and none within.
  const instants = [start - DAY, start - 1, start, start + 1, start + DAY, end - 1, end, end + 1, end + DAY];
  const live = await snapshotOf(2_000, (n) => ({
    ...order(random, `c${Math.floor(n / 3) + (n % 7)}@example.com`, `o${n}`),
    seconds: instants[Math.floor(random() * instants.length)] as number,
  }));
  const cells = { ...EXECUTION_PATHS, cellsPerOrder: Infinity, waitForCells: true };
  const scan = { ...EXECUTION_PATHS, cellsPerOrder: 0 };
  for (const needsFirstOrders of [true, false]) {
    // By day, the customers without an order in the period are passed over by their bounds.
    const byDay = { ...plan(['date'], '2025-01-03'), needsFirstOrders };
    const days = await executePlan(live.view(), byDay, utcDays(), scan);
    assert.deepStrictEqual(await executePlan(live.view(), byDay, utcDays(), cells), days);
    assert.ok((days?.rows.length ?? 0) >= 3);
    const question = { ...plan([], '2025-01-03'), needsFirstOrders };
    const expected = await executePlan(live.view(), question, utcDays(), scan);
    assert.deepStrictEqual(await executePlan(live.view(), question, utcDays(), cells), expected);
    const row = expected?.rows[0] as Record<string, unknown>;
    assert.ok(Number(row.unique_customers) > 0 && Number(row.new_customers) > 0);
    // U2, U3 only with first orders: else every customer counted is new.
    assert.equal(Number(row.returning_customers) > 0, needsFirstOrders);
  }
});

test('a customer with counted orders before and after the period and only an excluded one inside is not counted (issue 28, S1, U4)', async () => {
  const random = mulberry32(31);
  const start = Date.UTC(2025, 0, 3) / 1000;
  const end = Date.UTC(2025, 0, 9) / 1000;
  const at = (customer: string, seconds: number, status: string, n: number): OrderValues => ({
    ...order(random, customer, `x${n}`),
    seconds,
    status,
  });
  const live = await snapshotOf(
    4,
    (n) =>
      [
        at('around@example.com', start - DAY, 'completed', n),
        at('around@example.com', start + DAY, 'pending', n), // S1: excluded
        at('around@example.com', end + DAY, 'completed', n),
        at('inside@example.com', start + 2 * DAY, 'completed', n),
      ][n] as OrderValues,
  );
  const question = plan([], '2025-01-03');
  const cells = { ...EXECUTION_PATHS, cellsPerOrder: Infinity, waitForCells: true };
  const scan = { ...EXECUTION_PATHS, cellsPerOrder: 0 };
  const expected = await executePlan(live.view(), question, utcDays(), scan);
  assert.deepStrictEqual(await executePlan(live.view(), question, utcDays(), cells), expected);
  assert.equal((expected?.rows[0] as Record<string, unknown>).unique_customers, 1);
});
