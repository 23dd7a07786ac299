// A report plan over a snapshot, with the same answer as the SQL engine (the reference): same
// period (T1), excluded statuses (S1), net revenue (S2), customer rules (U2–U5), exact sums each
// rounded once (M1), code-point order (T3), totals row (T5), limit (T6), and section 14's filters
// (F1), date buckets (G2) and offset (O1).
//
// Each row is a combination of dimension values; its key is a mixed-radix number whose digits are
// the T3 ranks of the values, first dimension most significant, so rows in key order are in T3
// order. A row's sums live in one slot of a Float64Array: the slot is the key itself when the key
// space is small (one pass), else a dense rank among the keys that occur, found by a first pass
// that notes each order's key.
import { TimeSlices } from '../../limits/time-slice.js';
import type { DimensionId, MetricId } from '../../catalog.js';
import { bucketStart, dayStartMs } from '../../query/dates.js';
import type { ReportPlan } from '../../query/plan.js';
import type { ReportRow, ReportRows } from '../engine.js';
import { DAY_UNITS, type DayBuckets } from './day-buckets.js';
import { centsToAmount, compareCodePoints, divideRoundHalfAwayFromZero } from './exact.js';
import { kept } from './kept.js';
import {
  GROSS,
  ITEMS,
  LAST_CUSTOMER,
  NET,
  NEW_CUSTOMERS,
  ORDERS,
  PRODUCT_DISCOUNTS,
  PRODUCT_GROSS,
  PRODUCT_REFUNDS,
  RETURNING_CUSTOMERS,
  SHIPPING,
  SLOT,
  TAXES,
  UNIQUE,
  UNITS_REFUNDED,
  UNITS_SOLD,
} from './slot-layout.js';
import { aggregateLines, lineValues, lineWeights, type LineWeights } from './line-scan.js';
import { keysToSlots } from './key-slots.js';
import type { Part, Snapshot } from './snapshot.js';
import { sortedOrder } from './sort-rows.js';
import { ranges, runAt, type Rows } from './order-ranges.js';

/** How a plan is executed; a test narrows them to run every path on small data. */
export interface ExecutionPaths {
  /** Key spaces up to this size have a slot per key (one pass), larger ones two passes. */
  readonly directKeys: number;
  /** Key spaces up to this size find their slots through a table, larger ones through a map. */
  readonly tableKeys: number;
  /** Units of the day index, tried in order (DayBuckets). */
  readonly dayUnits: readonly number[];
  /**
   * Orders a pass reads before it looks at its time slice (issue 26, item 6): a part of a million
   * orders, read in one go, held the event loop 150–300 ms. About 5 ms of reading each.
   */
  readonly scanOrders: number;
}

export const EXECUTION_PATHS: ExecutionPaths = {
  directKeys: 1 << 14,
  tableKeys: 1 << 21,
  dayUnits: DAY_UNITS,
  scanOrders: 1 << 15,
};
const CUSTOMER_TYPES = ['anonymous', 'new', 'returning']; // already in T3 order
const ANONYMOUS = 0;
const NEW = 1;
const RETURNING = 2;
const CUSTOMER_METRICS: ReadonlySet<MetricId> = new Set([
  'unique_customers',
  'new_customers',
  'returning_customers',
]);

export interface DimensionKey {
  readonly id: DimensionId;
  /** Values in T3 order: the key digit is an index into it. */
  readonly sorted: readonly string[];
  /** code → digit × stride. */
  readonly weights: Float64Array;
  stride: number;
}

/** Each code's value ranked in T3 order; codes with the same value (days of one G2 bucket) share a digit. */
function dimensionKey(id: DimensionId, values: readonly string[]): DimensionKey {
  const sorted = [...new Set(values)].sort(compareCodePoints);
  const rank = new Map(sorted.map((value, r) => [value, r]));
  return { id, sorted, weights: Float64Array.from(values, (value) => rank.get(value) ?? 0), stride: 1 };
}

function valuesOf(
  id: DimensionId,
  plan: ReportPlan,
  snapshot: Snapshot,
  buckets: DayBuckets | undefined,
): readonly string[] {
  switch (id) {
    case 'date': // G2: each local day's bucket
      return buckets?.labels.map((day) => bucketStart(day, plan.granularity)) ?? [];
    case 'store':
      return snapshot.stores.values;
    case 'country':
      return snapshot.countries.values;
    case 'status':
      return snapshot.statuses.values;
    case 'customer_type':
      return CUSTOMER_TYPES;
    default: // L2: the lines' texts as the SQL engine shows them (line-codes.ts)
      return lineValues(id, snapshot.lineItems);
  }
}

export interface KeyWeights {
  readonly dimensions: readonly DimensionKey[];
  /** How many keys there are: the product of the dimensions' sizes. */
  readonly space: number;
  readonly date: Float64Array;
  readonly store: Float64Array;
  readonly country: Float64Array;
  readonly status: Float64Array;
  readonly customerType: Float64Array;
  /** L2: code → weight of each line dimension, by its dictionary's codes (zeros when not requested). */
  readonly line: LineWeights;
}

/** Key weights per dimension (zeros when not requested), or undefined when keys would pass 2^53. */
function keyWeights(
  plan: ReportPlan,
  snapshot: Snapshot,
  buckets: DayBuckets | undefined,
): KeyWeights | undefined {
  const dimensions = plan.dimensions.map((id) => dimensionKey(id, valuesOf(id, plan, snapshot, buckets)));
  let stride = 1;
  for (let d = dimensions.length - 1; d >= 0; d--) {
    const key = dimensions[d] as DimensionKey;
    key.stride = stride;
    for (let c = 0; c < key.weights.length; c++) key.weights[c] = (key.weights[c] as number) * stride;
    stride *= Math.max(1, key.sorted.length);
  }
  if (stride > Number.MAX_SAFE_INTEGER) return undefined;
  const weights = (id: DimensionId, size: number): Float64Array =>
    dimensions.find((k) => k.id === id)?.weights ?? new Float64Array(size);
  return {
    dimensions,
    space: stride,
    date: weights('date', 0),
    store: weights('store', snapshot.stores.values.length),
    country: weights('country', snapshot.countries.values.length),
    status: weights('status', snapshot.statuses.values.length),
    customerType: weights('customer_type', 3),
    line: lineWeights(snapshot.lineItems, weights),
  };
}

/**
 * The report's rows, or undefined when this plan is better left to SQL (a huge key space). The
 * event loop gets a turn between the passes and while the rows are built (issue 26, item 6).
 */
export async function executePlan(
  snapshot: Snapshot,
  plan: ReportPlan,
  buckets: DayBuckets | undefined,
  paths: ExecutionPaths = EXECUTION_PATHS,
): Promise<ReportRows | undefined> {
  const slices = new TimeSlices();
  const sums = await aggregate(snapshot, plan, buckets, paths, slices);
  return sums && shape(plan, sums.weights.dimensions, sums.sums, sums.keys, sums.slots, slices);
}

/** A plan's sums: the keys that occur, in key (T3) order, and each one's slot in `sums`. */
export interface Aggregate {
  readonly weights: KeyWeights;
  readonly sums: Float64Array;
  readonly keys: readonly number[];
  readonly slots: readonly number[];
}

/** The sums of each row of the plan, or undefined when this plan is better left to SQL. */
export async function aggregate(
  snapshot: Snapshot,
  plan: ReportPlan,
  buckets: DayBuckets | undefined,
  paths: ExecutionPaths = EXECUTION_PATHS,
  slices: TimeSlices = new TimeSlices(),
): Promise<Aggregate | undefined> {
  const weights = keyWeights(plan, snapshot, buckets);
  if (!weights || (plan.dimensions.includes('date') && !buckets)) return undefined;
  const scan = new ScanSettings(snapshot, plan, weights, buckets);
  if (plan.readsLines) return aggregateLines(snapshot, plan, weights, scan, paths, slices); // section 15
  // Parts one after the other into the same sums: a customer's orders are all in one part, and
  // customer numbers run on from part to part (U4 tells customers apart by them). Each part read
  // in ranges of orders, the event loop given a turn between two when the slice is over.
  const each = async (
    pass: (part: Part, customers: number, p: number, rows: Rows) => void,
  ): Promise<void> => {
    let customers = 0;
    for (const [p, part] of snapshot.parts.entries()) {
      for (const rows of ranges(part.orderCount, paths.scanOrders)) {
        pass(part, customers, p, rows);
        await slices.pause();
      }
      customers += part.customerCount;
    }
  };
  if (weights.space <= paths.directKeys) {
    const sums = new Float64Array(weights.space * SLOT);
    await each((part, customers, _, rows) => accumulate(part, customers, scan, sums, undefined, rows));
    const keys: number[] = [];
    for (let key = 0; key < weights.space; key++)
      if ((sums[key * SLOT + ORDERS] as number) > 0) keys.push(key);
    return { weights, sums, keys, slots: keys };
  }
  // Two passes: each counted order's key, then its slot among the keys that occur (in key order).
  const keyOfs = snapshot.parts.map((part) => new Float64Array(part.orderCount).fill(-1));
  await each((part, customers, p, rows) => accumulate(part, customers, scan, undefined, keyOfs[p], rows));
  const keys = await keysToSlots(keyOfs, weights.space, paths.tableKeys, slices);
  const sums = new Float64Array(keys.length * SLOT);
  await each((part, customers, p, rows) => accumulate(part, customers, scan, sums, keyOfs[p], rows));
  return { weights, sums, keys, slots: Array.from(keys, (_, slot) => slot) };
}

/** What a plan counts and how it keys an order, computed once before the pass over the orders. */
export class ScanSettings {
  readonly start: number;
  readonly end: number;
  /** Per attribute (store, status and country): its part of the key, or -1 when S1 or a filter (F1) leaves its orders out. */
  readonly attributeKey: Float64Array;
  /** Per attribute: 1 when S1 excludes its status, for first orders (U2), whatever the filters. */
  readonly attributeExcluded: Uint8Array;
  readonly typeKept: Uint8Array;
  readonly typeKey: Float64Array;
  readonly byDate: boolean;
  readonly dateKey: Float64Array;
  readonly buckets: DayBuckets;
  readonly sumItems: boolean;
  readonly sumGross: boolean;
  readonly sumNet: boolean;
  readonly sumTaxes: boolean;
  readonly sumShipping: boolean;
  readonly countCustomers: boolean;
  readonly needsFirstOrders: boolean;
  /** S2: 1 for each deduction of the organization's net revenue, else 0. */
  readonly refunds: number;
  readonly taxes: number;
  readonly shipping: number;
  readonly fees: number;

  constructor(s: Snapshot, plan: ReportPlan, weights: KeyWeights, buckets: DayBuckets | undefined) {
    // Not Date.parse: it reads the end of a period ending 9999-12-31 ('10000-01-01T…') as NaN.
    this.start = dayStartMs(plan.periodStart) / 1000;
    this.end = dayStartMs(plan.periodEnd) / 1000;
    const excludedStatus = new Uint8Array(s.statuses.values.length);
    for (const status of plan.settings.excludedStatuses) {
      const code = s.statuses.find(status);
      if (code !== undefined) excludedStatus[code] = 1;
    }
    const storeKept = kept(s.stores, plan.filters.store);
    const countryKept = kept(s.countries, plan.filters.country);
    const statusKept = kept(s.statuses, plan.filters.status);
    const { count, store, status, country } = s.attributes;
    this.attributeKey = new Float64Array(count);
    this.attributeExcluded = new Uint8Array(count);
    for (let a = 0; a < count; a++) {
      const [st, su, co] = [store[a] as number, status[a] as number, country[a] as number];
      this.attributeExcluded[a] = excludedStatus[su] as number;
      const counted =
        excludedStatus[su] === 0 && statusKept[su] === 1 && storeKept[st] === 1 && countryKept[co] === 1;
      this.attributeKey[a] = counted
        ? (weights.store[st] as number) + (weights.status[su] as number) + (weights.country[co] as number)
        : -1;
    }
    this.typeKept = Uint8Array.from(CUSTOMER_TYPES, (type) =>
      plan.filters.customer_type === undefined || plan.filters.customer_type.includes(type) ? 1 : 0,
    );
    this.typeKey = weights.customerType;
    this.byDate = buckets !== undefined && plan.dimensions.includes('date');
    this.dateKey = weights.date;
    this.buckets = buckets ?? {
      labels: [],
      starts: new Float64Array(1),
      index: new Int32Array(1),
      unit: 1,
      aligned: true,
    };

    const asks = (...ids: MetricId[]): boolean => plan.metrics.some((m) => ids.includes(m));
    this.sumItems = asks('items_sold');
    this.sumGross = asks('gross_sales');
    this.sumNet = asks('net_revenue', 'average_order_value');
    this.sumTaxes = asks('taxes');
    this.sumShipping = asks('shipping');
    this.countCustomers = plan.metrics.some((m) => CUSTOMER_METRICS.has(m));
    this.needsFirstOrders = plan.needsFirstOrders;
    const has = (d: string): number => (plan.settings.deductions.some((x) => x === d) ? 1 : 0);
    [this.refunds, this.taxes, this.shipping, this.fees] = [
      has('refunds'),
      has('taxes'),
      has('shipping'),
      has('fees'),
    ];
  }
}

/** A range of a part's orders, [from, to). */
/**
 * One pass over the orders `rows` of a part: each counted order (T1, S1, F1) into the sums of its
 * row's slot; retired runs and orders skipped (issue 19); customers numbered from `customerBase`.
 * Its slot is its key when slotOf is undefined, else slotOf[i] (-1: not counted); with sums
 * undefined, the pass only notes each counted order's key in keyOf. A customer's run, in time
 * order, ends at the period's end. One function with no call per order, on purpose: an instant
 * passed to a call that is not inlined becomes a heap number, an allocation per order.
 */
function accumulate(
  s: Part,
  customerBase: number,
  scan: ScanSettings,
  sums: Float64Array | undefined,
  keyOf: Float64Array | undefined,
  rows: Rows,
): void {
  const { start, end, attributeKey, attributeExcluded, typeKept, byDate, dateKey, needsFirstOrders } = scan;
  const typeKeys = scan.typeKey;
  const { sumItems, sumGross, sumNet, sumTaxes, sumShipping, countCustomers } = scan;
  const { refunds, taxes, shipping, fees } = scan;
  const { starts, index, unit, aligned } = scan.buckets;
  const firstStart = starts[0] as number;
  const perUnit = 1 / unit;
  const lastUnit = index.length - 1;
  const noteKeys = sums === undefined;
  const slotted = !noteKeys && keyOf !== undefined;
  const out = sums ?? new Float64Array(0);
  const keys = keyOf ?? new Float64Array(0);
  const { seconds, attribute, items, total, taxTotal, shippingTotal, feeTotal } = s;
  const { refundTotal, refundTax, refundShipping, runStart, customerCount, orderCount } = s;
  const { retiredRuns, retiredOrders } = s;
  const anonymousFrom = runStart[customerCount] as number;

  // c = runs: the anonymous orders, in no particular order. A plan that neither counts customers
  // nor tells them apart (no customer_type, so every order's type key is 0) reads all the orders
  // as one such run, without the customers' runs, unless some runs are retired.
  const runs = needsFirstOrders || countCustomers || retiredRuns ? customerCount : 0;
  for (let c = runAt(runStart, runs, rows.from); c <= runs; c++) {
    const from = runStart[c] as number;
    if (from >= rows.to) break; // the runs after the range
    if (c < runs && retiredRuns?.[c] === 1) continue;
    const to = c < runs ? (runStart[c + 1] as number) : orderCount;
    const anonymous = c === runs;
    let type = anonymous ? ANONYMOUS : NEW;
    if (needsFirstOrders && !anonymous) {
      // U2: the customer's earliest counted order ever, whatever the period; U3 from it.
      let first = from;
      while (first < to && attributeExcluded[attribute[first] as number] === 1) first++;
      if (first < to && (seconds[first] as number) < start) type = RETURNING;
    }
    if (typeKept[type] === 0) continue; // F1 on customer_type
    const typeKey = typeKeys[type] as number;
    const customer = countCustomers && !anonymous ? customerBase + c : -1;
    const retired = anonymous ? retiredOrders : undefined;
    // The run's orders within the range (U2 above looked at the whole run).
    const last = Math.min(to, rows.to);
    for (let i = Math.max(from, rows.from); i < last; i++) {
      const t = seconds[i] as number;
      if (t >= end) {
        if (anonymous) continue;
        break; // T1, and the run's later orders too
      }
      if (t < start) continue;
      if (retired && i >= anonymousFrom && retired[i - anonymousFrom] === 1) continue;
      let slot: number;
      if (slotted) {
        slot = keys[i] as number;
        if (slot < 0) continue;
      } else {
        const attributeWeight = attributeKey[attribute[i] as number] as number;
        if (attributeWeight < 0) continue; // S1, F1
        slot = attributeWeight + typeKey;
        if (byDate) {
          // (t − first + ½) / unit is never whole: the product by the rounded 1 / unit floors the same.
          let k = index[Math.min(lastUnit, ((t - firstStart + 0.5) * perUnit) | 0)] as number;
          if (!aligned) while (k + 1 < starts.length && t >= (starts[k + 1] as number)) k++;
          slot += dateKey[k] as number;
        }
        if (noteKeys) {
          keys[i] = slot;
          continue;
        }
      }
      const at = (slot * SLOT) | 0; // an int32 index (slots stay far below 2^31 / SLOT)
      out[at + ORDERS]! += 1;
      if (sumItems) out[at + ITEMS]! += items[i] as number;
      if (sumGross) out[at + GROSS]! += total[i] as number;
      if (sumTaxes) out[at + TAXES]! += taxTotal[i] as number;
      if (sumShipping) out[at + SHIPPING]! += shippingTotal[i] as number;
      if (sumNet) {
        // S2: net = total − refunds − (taxes − refunded taxes) − (shipping − refunded shipping)
        // − fees, each term present with its deduction, a refund deducted once.
        out[at + NET]! +=
          (total[i] as number) -
          refunds * (refundTotal[i] as number) -
          taxes * ((taxTotal[i] as number) - refunds * (refundTax[i] as number)) -
          shipping * ((shippingTotal[i] as number) - refunds * (refundShipping[i] as number)) -
          fees * (feeTotal[i] as number);
      }
      // U4, U5: a customer counts once in each row they have an order in (customer + 1: the
      // slot's zero means none yet).
      if (customer >= 0 && out[at + LAST_CUSTOMER] !== customer + 1) {
        out[at + LAST_CUSTOMER] = customer + 1;
        out[at + UNIQUE]! += 1;
        out[at + (type === RETURNING ? RETURNING_CUSTOMERS : NEW_CUSTOMERS)]! += 1;
      }
    }
  }
}

/**
 * The rows (T2) of the keys that occur, in key order, with their slots: `limit` of them after the
 * first `offset` (T6, O1); one totals row without dimensions (T5), which any offset skips.
 */
async function shape(
  plan: ReportPlan,
  dimensions: readonly DimensionKey[],
  sums: Float64Array,
  keys: readonly number[],
  slots: readonly number[],
  slices: TimeSlices,
): Promise<ReportRows> {
  if (plan.dimensions.length === 0) {
    // T5, O1: one totals row (zeros when no order counts), skipped by any offset.
    const rows = plan.offset > 0 ? [] : [row(plan, dimensions, sums, 0, keys.length > 0 ? 0 : -1)];
    return { rows, truncated: false };
  }
  const end = Math.min(keys.length, plan.offset + plan.limit); // O1, T6
  const rows: ReportRow[] = [];
  // L7: `sort`'s order, then T3's (the keys' order); none: T3's alone.
  const order = await sortedOrder(plan, dimensions, keys.length, {
    key: (n) => keys[n] as number,
    metric: (n, id) => slotMetric(sums, slots[n] as number, id),
    slices,
  });
  for (let k = plan.offset; k < end; k++) {
    if (slices.due()) await slices.next();
    const n = order ? (order[k] as number) : k;
    rows.push(row(plan, dimensions, sums, keys[n] as number, slots[n] as number));
  }
  return { rows, truncated: keys.length > end };
}

/** A row of the key's dimension values and its slot's metrics (slot -1: zeros). */
function row(
  plan: ReportPlan,
  dimensions: readonly DimensionKey[],
  sums: Float64Array,
  key: number,
  slot: number,
): ReportRow {
  const out: ReportRow = {};
  for (const dimension of dimensions) {
    const digit = Math.floor(key / dimension.stride) % dimension.sorted.length;
    out[dimension.id] = dimension.sorted[digit] as string;
  }
  for (const id of plan.metrics) out[id] = slotMetric(sums, slot, id);
  return out;
}

/** A metric of the slot's row (slot -1: no order, zeros). */
export function slotMetric(sums: Float64Array, slot: number, id: MetricId): number {
  return metricValue(id, (field) => (slot < 0 ? 0 : (sums[slot * SLOT + field] as number)));
}

function metricValue(id: MetricId, value: (field: number) => number): number {
  switch (id) {
    case 'orders':
      return value(ORDERS);
    case 'items_sold':
      return value(ITEMS);
    case 'gross_sales':
      return centsToAmount(value(GROSS));
    case 'net_revenue':
      return centsToAmount(value(NET));
    case 'average_order_value': {
      const orders = value(ORDERS);
      return orders === 0 ? 0 : centsToAmount(divideRoundHalfAwayFromZero(value(NET), orders));
    }
    case 'taxes':
      return centsToAmount(value(TAXES));
    case 'shipping':
      return centsToAmount(value(SHIPPING));
    case 'unique_customers':
      return value(UNIQUE);
    case 'new_customers':
      return value(NEW_CUSTOMERS);
    case 'returning_customers':
      return value(RETURNING_CUSTOMERS);
    // L3: sums of exact integers (units) and cents (M1), rounded once.
    case 'units_sold':
      return value(UNITS_SOLD);
    case 'units_refunded':
      return value(UNITS_REFUNDED);
    case 'product_gross_sales':
      return centsToAmount(value(PRODUCT_GROSS));
    case 'product_discounts':
      return centsToAmount(value(PRODUCT_DISCOUNTS));
    case 'product_refunds':
      return centsToAmount(value(PRODUCT_REFUNDS));
    case 'product_net_sales':
      return centsToAmount(value(PRODUCT_GROSS) - value(PRODUCT_DISCOUNTS) - value(PRODUCT_REFUNDS));
  }
}
