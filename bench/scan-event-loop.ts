// Issue 26, item 6 at scale: the columnar scan of a large snapshot must not hold the event loop.
// A snapshot of N orders (default 1,000,000) made in this process, as wide as the test's
// organization (40 stores, 5 statuses, 15 countries, customers coming back, 2024 and 2025, one
// part), then the columnar engine's execution alone (no database, no HTTP), warm: Q1 (ten
// metrics' totals over 2025), Q2 (ten metrics by day) and the widest answer (by date, store,
// country, customer type and status, limit=100000) with and without compare=previous_year. Each
// is run with the scan cut into row ranges (the default) and in one pass per part (the old scan;
// the two-pass plans' key sorting is the new one both ways), alternately in the same run, so the
// ratio of their times is the cost of the cuts on this machine now. Prints the median times (the
// compared answer is not timed), the longest synchronous stretch (main thread CPU time between
// two turns of the event loop) of one more run each, and the load average.
// Usage: npx tsc -p tsconfig.json && node dist/bench/scan-event-loop.js [orders] [rounds]
import os from 'node:os';
import type { MetricId } from '../src/catalog.js';
import type { DayBuckets } from '../src/metrics/columnar/day-buckets.js';
import { executeCompared } from '../src/metrics/columnar/compared.js';
import { EXECUTION_PATHS, executePlan, type ExecutionPaths } from '../src/metrics/columnar/execute.js';
import { Dictionary } from '../src/metrics/columnar/exact.js';
import { freshPart, type Snapshot } from '../src/metrics/columnar/snapshot.js';
import { LineCodes } from '../src/metrics/columnar/line-codes.js';
import { noLines } from '../src/metrics/columnar/line-columns.js';
import type { ReportPlan } from '../src/query/plan.js';
import { longestStretch } from '../test/helpers/event-loop-stretch.js';
import { mulberry32 } from '../test/helpers/seeded-random.js';

const ORDERS = Number(process.argv[2] ?? 1_000_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const DAY = 86_400;
const FIRST = Date.UTC(2024, 0, 1) / 1000;
const DAYS = 731;

function snapshotOf(count: number): Snapshot {
  const random = mulberry32(26);
  const [stores, statuses, countries] = [new Dictionary(), new Dictionary(), new Dictionary()];
  const combos = { store: [] as number[], status: [] as number[], country: [] as number[] };
  for (let st = 0; st < 40; st++)
    for (let su = 0; su < 5; su++)
      for (let co = 0; co < 15; co++) {
        combos.store.push(stores.code(`https://store${st}.example`));
        combos.status.push(
          statuses.code(['completed', 'processing', 'on-hold', 'shipped', 'delivered'][su]!),
        );
        combos.country.push(countries.code(`C${co.toString().padStart(2, '0')}`));
      }
  // 90 % of the orders in runs of customers (about 2.5 each, in time order), then the anonymous ones.
  const customerCount = Math.floor(count * 0.36);
  const runStart = new Int32Array(customerCount + 1);
  const seconds = new Float64Array(count);
  const anonymousFrom = Math.floor(count * 0.9);
  for (let c = 0; c < customerCount; c++) runStart[c] = Math.floor((c * anonymousFrom) / customerCount);
  runStart[customerCount] = anonymousFrom;
  for (let c = 0; c <= customerCount; c++) {
    const [from, to] = [runStart[c]!, c < customerCount ? runStart[c + 1]! : count];
    const times = Array.from({ length: to - from }, () => FIRST + Math.floor(random() * DAYS * DAY));
    if (c < customerCount) times.sort((a, b) => a - b);
    seconds.set(times, from);
  }
  const column = (f: (i: number) => number) => Int32Array.from({ length: count }, (_, i) => f(i));
  const part = freshPart({
    orderCount: count,
    seconds,
    attribute: column(() => Math.floor(random() * 3000)),
    items: column((i) => 1 + (i % 4)),
    total: column(() => 1000 + Math.floor(random() * 20000)),
    taxTotal: column(() => 200),
    shippingTotal: column(() => 490),
    feeTotal: column(() => 0),
    refundTotal: column(() => 0),
    refundTax: column(() => 0),
    refundShipping: column(() => 0),
    runStart,
    customerCount,
    runCustomer: Int32Array.from({ length: customerCount }, (_, c) => c),
    anonymousKey: column((i) => i).subarray(anonymousFrom),
    lines: noLines(count),
  });
  const attributes = {
    count: 3000,
    store: Int32Array.from(combos.store),
    status: Int32Array.from(combos.status),
    country: Int32Array.from(combos.country),
  };
  return {
    organizationId: '1',
    version: '1',
    parts: [part],
    attributes,
    stores,
    statuses,
    countries,
    lineItems: new LineCodes().items(),
    bytes: 0,
  };
}

/** UTC days of 2023-12-31 … 2026-01-01, hours as the index's unit (as loadDayBuckets makes them). */
function utcDays(): DayBuckets {
  const starts = Float64Array.from({ length: DAYS + 2 }, (_, k) => FIRST + (k - 1) * DAY);
  const labels = Array.from(starts, (s) => new Date(s * 1000).toISOString().slice(0, 10));
  const index = Int32Array.from({ length: (DAYS + 3) * 24 }, (_, u) =>
    Math.min(DAYS + 1, Math.floor(u / 24)),
  );
  return { labels, starts, index, unit: 3600, aligned: true };
}

const METRICS: MetricId[] = [
  'orders',
  'gross_sales',
  'net_revenue',
  'taxes',
  'shipping',
  'items_sold',
  'average_order_value',
  'unique_customers',
  'new_customers',
  'returning_customers',
];
const plan = (dimensions: ReportPlan['dimensions'], compare: boolean): ReportPlan => ({
  organizationId: '1',
  dimensions,
  metrics: METRICS,
  periodStart: '2025-01-01T00:00:00Z',
  periodEnd: '2026-01-01T00:00:00Z',
  timezone: 'UTC',
  limit: 100_000,
  filters: {},
  granularity: 'day',
  offset: 0,
  settings: { excludedStatuses: ['on-hold'], deductions: ['refunds', 'taxes', 'shipping', 'fees'] },
  needsFirstOrders: true,
  ...(compare
    ? {
        comparison: {
          mode: 'previous_year',
          from: '2024-01-01',
          to: '2024-12-31',
          periodStart: '2024-01-01T00:00:00Z',
          periodEnd: '2025-01-01T00:00:00Z',
        },
      }
    : {}),
  grain: 'order',
  readsLines: false,
  sort: [],
});

const started = performance.now();
const snapshot = snapshotOf(ORDERS);
const buckets = utcDays();
console.log(`${ORDERS} orders made in ${((performance.now() - started) / 1000).toFixed(1)} s`);
const WIDEST = ['date', 'store', 'country', 'customer_type', 'status'] as const;
const questions: [string, ReportPlan][] = [
  ['Q1 totals', plan([], false)],
  ['Q2 by day', plan(['date'], false)],
  ['widest', plan([...WIDEST], false)],
  ['widest compared', plan([...WIDEST], true)],
];
const onePass: ExecutionPaths = { ...EXECUTION_PATHS, scanOrders: Infinity };
const run = (p: ReportPlan, paths: ExecutionPaths) =>
  p.comparison
    ? executeCompared(
        snapshot,
        { ...p, comparison: p.comparison },
        { main: buckets, previous: buckets },
        paths,
      )
    : executePlan(snapshot, p, buckets, paths);

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
console.log(`load average: ${load()}`);
console.log('question        | scan  | ms (median of timed runs) | longest stretch CPU ms | rows');
for (const [name, p] of questions) {
  // The compared answer's time is mostly its 100,000 rows, built alike both ways: stretch only.
  const rounds = p.comparison ? 0 : name === 'widest' ? Math.ceil(ROUNDS / 3) : ROUNDS;
  const times = { cut: [] as number[], whole: [] as number[] };
  await run(p, EXECUTION_PATHS); // warm
  // Timed without the stretch meter, whose timer would tick far more often for the cut scan.
  for (let r = 0; r < rounds; r++)
    for (const [scan, paths] of [
      ['cut', EXECUTION_PATHS],
      ['whole', onePass],
    ] as const) {
      const at = performance.now();
      await run(p, paths);
      times[scan].push(performance.now() - at);
    }
  for (const [scan, paths] of [
    ['cut', EXECUTION_PATHS],
    ['whole', onePass],
  ] as const) {
    const { result, longestMs } = await longestStretch(() => run(p, paths));
    const ms = times[scan].sort((a, b) => a - b)[Math.floor(times[scan].length / 2)];
    console.log(
      `${name.padEnd(15)} | ${scan.padEnd(5)} | ${(ms?.toFixed(0) ?? '-').padStart(25)} | ${longestMs.toFixed(0).padStart(22)} | ${result?.rows.length}`,
    );
  }
}
console.log(`load average: ${load()}`);
