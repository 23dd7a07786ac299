// Issue 28, item 2 at ten million orders: the columnar engine's answer to bench:cold's two
// questions (the ten metrics' totals over two years, and the same by day in Europe/Paris) on a
// snapshot of N demo orders (default 10,000,000) made in this process from the same generator as
// the import's (no database, no HTTP), beside the in-memory reference scan of the same orders
// (reference-scan.ts), which also checks every figure. With SCAN_OLD=folder (another build's
// `dist`), that build's execution runs on the same snapshot too, in turn with this one, so that
// the two are compared in one sitting on one set of data. Prints each one's median and its ratio
// to the reference scan, with the load average.
// Usage: npx tsc -p tsconfig.json && node --max-old-space-size=8192 dist/bench/scan-big.js [orders] [rounds]
//        (SCAN_OLD=/tmp/old-dist to compare with another build)
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ORDER_METRIC_IDS, type MetricId } from '../src/catalog.js';
import { generateDemoOrders, type DemoOrder } from '../src/demo/generate.js';
import { normalizedEmail } from '../src/ingest/customer.js';
import { anonymousKey } from '../src/metrics/columnar/codes.js';
import type { DayBuckets } from '../src/metrics/columnar/day-buckets.js';
import type { executePlan as ExecutePlan } from '../src/metrics/columnar/execute.js';
import { LiveSnapshot } from '../src/metrics/columnar/live-snapshot.js';
import { OrderColumns } from '../src/metrics/columnar/order-columns.js';
import type { ReportRows } from '../src/metrics/engine.js';
import type { ReportPlan } from '../src/query/plan.js';
import { localDays, ReferenceOrders, type ReferenceRow } from './reference-scan.js';

const ORDERS = Number(process.argv[2] ?? 10_000_000);
const ROUNDS = Number(process.argv[3] ?? 7);
const DAYS = 1095;
const ZONE = 'Europe/Paris';
const ALL_METRICS = ORDER_METRIC_IDS;
// SCAN_METRICS=a,b: only these metrics (to weigh each one's share of the scan).
const METRICS = process.env.SCAN_METRICS ? (process.env.SCAN_METRICS.split(',') as MetricId[]) : ALL_METRICS;
const today = new Date().toISOString().slice(0, 10);
const from = new Date(Date.parse(`${today}T00:00:00Z`) - 729 * 86_400_000).toISOString().slice(0, 10);
const dayAfter = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString();
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

// ---- the same orders twice: the reference's columns and a snapshot part -------------------------
const started = performance.now();
const reference = new ReferenceOrders(Math.ceil(ORDERS * 1.05));
const live = new LiveSnapshot('1');
const storeIds = new Map<string, number>();
const columns = new OrderColumns(ORDERS + 64, live.codes, Number.MAX_SAFE_INTEGER);
const cents = (text: string | undefined): number => Math.round(Number(text ?? '0') * 100);
// The demo generator makes about 20,000 orders a second here: 200,000 of them, then copies of
// them with their customers and order ids told apart, up to N (the same days, ten times
// fifty times as many orders and customers on each at ten million).
const BASE = Math.min(ORDERS, 200_000);
const base: DemoOrder[] = [];
for (const order of generateDemoOrders({ endDate: today, days: DAYS, ordersPerDay: (BASE / DAYS) * 1.1 })) {
  if (base.length === BASE) break;
  base.push(order);
}
for (let made = 0, copy = 0; made < ORDERS; copy++) {
  for (const original of base) {
    if (made++ === ORDERS) break;
    const order =
      copy === 0
        ? original
        : {
            ...original,
            id: `${copy}-${original.id}`,
            ...(original.customer_email ? { customer_email: `${copy}.${original.customer_email}` } : {}),
          };
    reference.add(order);
    let storeId = storeIds.get(order.store);
    if (storeId === undefined) {
      storeIds.set(order.store, (storeId = storeIds.size + 1));
      live.codes.addStore(storeId, order.store);
    }
    const customer = normalizedEmail(order.customer_email);
    columns.pushValues({
      customer,
      seconds: Math.floor(Date.parse(order.created_at) / 1000),
      storeId,
      status: order.status,
      country: order.billing_country ?? 'Unknown',
      items: order.items,
      cents: [
        order.total,
        order.tax_total,
        order.shipping_total,
        order.fee_total,
        order.refund_total,
        order.refund_tax,
        order.refund_shipping,
      ].map(cents),
      key: customer === null ? anonymousKey(storeId, order.id) : null,
    });
  }
}
base.length = 0;
reference.sortByTime();
live.addPart(await columns.part());
const snapshot = live.view();
console.log(
  `${reference.orders.toLocaleString('en')} orders, ${reference.customerCount.toLocaleString('en')} customers made in ${((performance.now() - started) / 1000).toFixed(1)} s; load ${load()}`,
);

// ---- the day buckets as loadDayBuckets makes them (hours, aligned), from Intl instead of SQL -----
function parisDays(): DayBuckets {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone: ZONE,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  });
  const first = Date.parse(`${from}T00:00:00Z`) / 1000 - 2 * 86_400;
  const last = Date.parse(`${today}T00:00:00Z`) / 1000 + 3 * 86_400;
  const lowest = new Date(Date.parse(`${from}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  const highest = dayAfter(today).slice(0, 10);
  const labels: string[] = [];
  const starts: number[] = [];
  let previous = '';
  for (let t = first; t < last; t += 3600) {
    const label = format.format(new Date(t * 1000));
    if (label !== previous && label >= lowest && label <= highest) {
      labels.push(label);
      starts.push(t);
    }
    previous = label;
  }
  const unit = 3600;
  const length = Math.ceil(((starts[starts.length - 1] as number) - (starts[0] as number)) / unit) + 48;
  const index = new Int32Array(length);
  for (let u = 0, k = 0; u < length; u++) {
    while (k + 1 < starts.length && (starts[0] as number) + u * unit >= (starts[k + 1] as number)) k++;
    index[u] = k;
  }
  return { labels, starts: Float64Array.from(starts), index, unit, aligned: true };
}
const buckets = parisDays();
const days = localDays(from, today, ZONE);

const plan = (dimensions: ReportPlan['dimensions']): ReportPlan => ({
  organizationId: '1',
  dimensions,
  metrics: METRICS,
  periodStart: `${from}T00:00:00.000Z`,
  periodEnd: dayAfter(today),
  timezone: ZONE,
  limit: 100_000,
  filters: {},
  granularity: 'day',
  offset: 0,
  settings: {
    excludedStatuses: ['pending', 'failed', 'cancelled', 'checkout-draft'],
    deductions: ['refunds', 'taxes', 'shipping'],
  },
  needsFirstOrders: true,
  grain: 'order',
  readsLines: false,
  sort: [],
});

type Kind = 'totals' | 'by day';
const QUESTIONS: Record<Kind, ReportPlan> = { totals: plan([]), 'by day': plan(['date']) };
const SCANS: Record<Kind, () => ReferenceRow[]> = {
  totals: () => reference.scan(from, today, undefined),
  'by day': () => reference.scan(from, today, days),
};

/** Every figure of the engine's rows equal to the reference's (the date too). */
function check(kind: Kind, build: string, rows: ReportRows | undefined): void {
  const expected = SCANS[kind]();
  const got = rows?.rows ?? [];
  const same =
    got.length === expected.length &&
    expected.every((row, r) =>
      Object.entries(row).every(
        ([id, value]) =>
          (id !== 'date' && !METRICS.includes(id as MetricId)) ||
          (got[r] as Record<string, unknown>)[id] === value,
      ),
    );
  if (!same) throw new Error(`${build} ${kind}: not the reference's answer`);
}

const engines: [string, typeof ExecutePlan][] = [
  ['new', (await import('../src/metrics/columnar/execute.js')).executePlan],
];
if (process.env.SCAN_OLD) {
  const old = pathToFileURL(path.resolve(process.env.SCAN_OLD, 'src/metrics/columnar/execute.js')).href;
  engines.unshift(['old', ((await import(old)) as { executePlan: typeof ExecutePlan }).executePlan]);
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
console.log(`load average before: ${load()}`);
for (const kind of Object.keys(QUESTIONS) as Kind[]) {
  const times = new Map<string, number[]>([
    ['scan', []],
    ...engines.map(([name]) => [name, []] as [string, number[]]),
  ]);
  // The first answer of each build, checked against the reference (the new one's first also
  // builds the part's quarter-hour sums).
  const first: string[] = [];
  for (const [name, execute] of engines) {
    const t = performance.now();
    const rows = await execute(snapshot, QUESTIONS[kind], buckets);
    first.push(`${name} ${(performance.now() - t).toFixed(0)} ms`);
    check(kind, name, rows);
  }
  console.log(`${kind.padEnd(7)} first answer: ${first.join(', ')}`);
  for (let r = 0; r < ROUNDS; r++) {
    let t = performance.now();
    SCANS[kind]();
    times.get('scan')?.push(performance.now() - t);
    for (const [name, execute] of r % 2 ? [...engines].reverse() : engines) {
      t = performance.now();
      await execute(snapshot, QUESTIONS[kind], buckets);
      times.get(name)?.push(performance.now() - t);
    }
  }
  const scan = median(times.get('scan') ?? []);
  const line = [...times].map(([name, values]) => {
    const m = median(values);
    return `${name} ${m.toFixed(0)} ms${name === 'scan' ? '' : ` (${(m / scan).toFixed(2)}×)`}`;
  });
  console.log(`${kind.padEnd(7)} median of ${ROUNDS}: ${line.join(', ')}`);
}
console.log(`load average after: ${load()}`);
