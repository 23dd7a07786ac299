// A report plan over a snapshot, with the same answer as the SQL engine (the reference): same
// period (T1), excluded statuses (S1), net revenue (S2), customer rules (U2–U5), exact sums each
// rounded once (M1), code-point order (T3), totals row (T5), limit (T6), and section 14's filters
// (F1), date buckets (G2) and offset (O1).
//
// Each row is a combination of dimension values; its key is a mixed-radix number whose digits are
// the T3 ranks of the values, first dimension most significant, so rows in key order are in T3
// order. Small key spaces use a dense slot table (rows come out already sorted), large ones a map.
import type { DimensionId, MetricId } from '../../catalog.js';
import { bucketStart } from '../../query/dates.js';
import type { ReportPlan } from '../../query/plan.js';
import type { ReportRow, ReportRows } from '../engine.js';
import type { DayBuckets } from './day-buckets.js';
import { centsToAmount, compareCodePoints, divideRoundHalfAwayFromZero, type Dictionary } from './exact.js';
import { Groups } from './groups.js';
import type { Snapshot } from './snapshot.js';

const DENSE_KEYS = 1 << 21;
const CUSTOMER_TYPES = ['anonymous', 'new', 'returning']; // already in T3 order
const ANONYMOUS = 0;
const NEW = 1;
const RETURNING = 2;
const CUSTOMER_METRICS: ReadonlySet<MetricId> = new Set([
  'unique_customers',
  'new_customers',
  'returning_customers',
]);

interface DimensionKey {
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
  }
}

/** Key weights per dimension (zeros when not requested), or undefined when keys would pass 2^53. */
function keyWeights(plan: ReportPlan, snapshot: Snapshot, buckets: DayBuckets | undefined) {
  const keys = plan.dimensions.map((id) => dimensionKey(id, valuesOf(id, plan, snapshot, buckets)));
  let stride = 1;
  for (let d = keys.length - 1; d >= 0; d--) {
    const key = keys[d] as DimensionKey;
    key.stride = stride;
    for (let c = 0; c < key.weights.length; c++) key.weights[c] = (key.weights[c] as number) * stride;
    stride *= Math.max(1, key.sorted.length);
  }
  if (stride > Number.MAX_SAFE_INTEGER) return undefined;
  const weights = (id: DimensionId, size: number): Float64Array =>
    keys.find((k) => k.id === id)?.weights ?? new Float64Array(size);
  return {
    keys,
    space: stride,
    date: weights('date', 0),
    store: weights('store', snapshot.stores.values.length),
    country: weights('country', snapshot.countries.values.length),
    status: weights('status', snapshot.statuses.values.length),
    customerType: weights('customer_type', 3),
  };
}

/** The report's rows, or undefined when this plan is better left to SQL (a huge key space). */
export function executePlan(
  snapshot: Snapshot,
  plan: ReportPlan,
  buckets: DayBuckets | undefined,
): ReportRows | undefined {
  const weights = keyWeights(plan, snapshot, buckets);
  if (!weights || (plan.dimensions.includes('date') && !buckets)) return undefined;
  const start = Date.parse(plan.periodStart) / 1000;
  const end = Date.parse(plan.periodEnd) / 1000;
  const excluded = new Uint8Array(snapshot.statuses.values.length);
  for (const status of plan.settings.excludedStatuses) {
    const code = snapshot.statuses.find(status);
    if (code !== undefined) excluded[code] = 1;
  }
  // F1: 1 for the codes a row may have; S1's exclusions stay apart, for first orders (U2).
  const storeKept = kept(snapshot.stores, plan.filters.store);
  const countryKept = kept(snapshot.countries, plan.filters.country);
  const statusKept = kept(snapshot.statuses, plan.filters.status);
  for (let code = 0; code < excluded.length; code++) if (excluded[code]) statusKept[code] = 0;
  const typeKept = Uint8Array.from(CUSTOMER_TYPES, (type) =>
    plan.filters.customer_type === undefined || plan.filters.customer_type.includes(type) ? 1 : 0,
  );
  // S2: net = total − refunds − (taxes − refunded taxes) − (shipping − refunded shipping) − fees,
  // each term present with its deduction, a refund deducted once.
  const has = (d: string): number => (plan.settings.deductions.some((x) => x === d) ? 1 : 0);
  const [refunds, taxes, shipping, fees] = [has('refunds'), has('taxes'), has('shipping'), has('fees')];

  const dense = weights.space <= DENSE_KEYS ? new Int32Array(weights.space).fill(-1) : undefined;
  const sparse = dense ? undefined : new Map<number, number>();
  const groups = new Groups(Math.min(weights.space, 1024));
  const slot = (key: number): number => {
    if (dense) {
      const g = dense[key] as number;
      if (g >= 0) return g;
      return (dense[key] = groups.add(key));
    }
    const found = (sparse as Map<number, number>).get(key);
    if (found !== undefined) return found;
    const g = groups.add(key);
    (sparse as Map<number, number>).set(key, g);
    return g;
  };

  const s = snapshot;
  const byDate = buckets !== undefined && plan.dimensions.includes('date');
  const customers = plan.needsFirstOrders || plan.metrics.some((m) => CUSTOMER_METRICS.has(m));
  const { starts, hourIndex } = buckets ?? { starts: new Float64Array(1), hourIndex: new Int32Array(1) };
  const firstStart = starts[0] as number;

  const accumulate = (i: number, type: number, customer: number): void => {
    let key =
      (weights.store[s.store[i] as number] as number) +
      (weights.country[s.country[i] as number] as number) +
      (weights.status[s.status[i] as number] as number) +
      (weights.customerType[type] as number);
    if (byDate) {
      const t = s.seconds[i] as number;
      let k = hourIndex[Math.min(hourIndex.length - 1, Math.floor((t - firstStart) / 3600))] as number;
      while (k + 1 < starts.length && t >= (starts[k + 1] as number)) k++;
      key += weights.date[k] as number;
    }
    const g = slot(key);
    const total = s.total[i] as number;
    const tax = s.taxTotal[i] as number;
    const ship = s.shippingTotal[i] as number;
    groups.orders[g]! += 1;
    groups.items[g]! += s.items[i] as number;
    groups.gross[g]! += total;
    groups.taxes[g]! += tax;
    groups.shipping[g]! += ship;
    groups.net[g]! +=
      total -
      refunds * (s.refundTotal[i] as number) -
      taxes * (tax - refunds * (s.refundTax[i] as number)) -
      shipping * (ship - refunds * (s.refundShipping[i] as number)) -
      fees * (s.feeTotal[i] as number);
    // U4, U5: a customer counts once in each row they have an order in.
    if (customer >= 0 && groups.lastCustomer[g] !== customer) {
      groups.lastCustomer[g] = customer;
      groups.uniqueCustomers[g]! += 1;
      if (type === RETURNING) groups.returningCustomers[g]! += 1;
      else groups.newCustomers[g]! += 1;
    }
  };
  const counted = (i: number): boolean => {
    const t = s.seconds[i] as number;
    return (
      t >= start &&
      t < end && // T1
      statusKept[s.status[i] as number] === 1 && // S1, F1
      storeKept[s.store[i] as number] === 1 &&
      countryKept[s.country[i] as number] === 1
    );
  };

  const runStart = s.runStart;
  for (let c = 0; c < s.customerCount; c++) {
    const from = runStart[c] as number;
    const to = runStart[c + 1] as number;
    let type = NEW;
    if (plan.needsFirstOrders) {
      // U2: the customer's earliest counted order ever, whatever the period; U3 from it.
      let first = Infinity;
      for (let i = from; i < to; i++) {
        const t = s.seconds[i] as number;
        if (t < first && excluded[s.status[i] as number] === 0) first = t;
      }
      type = first < start ? RETURNING : NEW;
    }
    if (typeKept[type] === 0) continue; // F1 on customer_type
    for (let i = from; i < to; i++) if (counted(i)) accumulate(i, type, customers ? c : -1);
  }
  if (typeKept[ANONYMOUS] === 1) {
    for (let i = runStart[s.customerCount] as number; i < s.orderCount; i++) {
      if (counted(i)) accumulate(i, ANONYMOUS, -1);
    }
  }
  return shape(plan, weights.keys, groups, dense);
}

/** 1 for each code of the dictionary a filter keeps (all of them without a filter). */
function kept(dictionary: Dictionary, values: readonly string[] | undefined): Uint8Array {
  const mask = new Uint8Array(dictionary.values.length).fill(values === undefined ? 1 : 0);
  for (const value of values ?? []) {
    const code = dictionary.find(value);
    if (code !== undefined) mask[code] = 1;
  }
  return mask;
}

/**
 * Groups in T3 order into rows (T2): `limit` of them after the first `offset` (T6, O1); one totals
 * row without dimensions (T5), which any offset skips.
 */
function shape(
  plan: ReportPlan,
  keys: readonly DimensionKey[],
  groups: Groups,
  dense: Int32Array | undefined,
): ReportRows {
  if (plan.dimensions.length === 0) {
    // T5, O1: one totals row, skipped by any offset.
    const rows = plan.offset > 0 ? [] : [row(plan, keys, groups, groups.count > 0 ? 0 : -1)];
    return { rows, truncated: false };
  }
  let order: ArrayLike<number>;
  if (dense) {
    const sorted = new Int32Array(groups.count);
    let n = 0;
    for (let key = 0; key < dense.length && n < groups.count; key++) {
      const g = dense[key] as number;
      if (g >= 0) sorted[n++] = g;
    }
    order = sorted;
  } else {
    const byKey = Int32Array.from({ length: groups.count }, (_, g) => g);
    byKey.sort((a, b) => (groups.keys[a] as number) - (groups.keys[b] as number));
    order = byKey;
  }
  const end = Math.min(order.length, plan.offset + plan.limit); // O1, T6
  const truncated = order.length > end;
  const rows: ReportRow[] = [];
  for (let n = plan.offset; n < end; n++) rows.push(row(plan, keys, groups, order[n] as number));
  return { rows, truncated };
}

function row(plan: ReportPlan, keys: readonly DimensionKey[], groups: Groups, g: number): ReportRow {
  const out: ReportRow = {};
  const key = g < 0 ? 0 : (groups.keys[g] as number);
  for (const dimension of keys) {
    const digit = Math.floor(key / dimension.stride) % dimension.sorted.length;
    out[dimension.id] = dimension.sorted[digit] as string;
  }
  const value = (array: Float64Array): number => (g < 0 ? 0 : (array[g] as number));
  for (const id of plan.metrics) out[id] = metricValue(id, groups, value);
  return out;
}

function metricValue(id: MetricId, groups: Groups, value: (array: Float64Array) => number): number {
  switch (id) {
    case 'orders':
      return value(groups.orders);
    case 'items_sold':
      return value(groups.items);
    case 'gross_sales':
      return centsToAmount(value(groups.gross));
    case 'net_revenue':
      return centsToAmount(value(groups.net));
    case 'average_order_value': {
      const orders = value(groups.orders);
      return orders === 0 ? 0 : centsToAmount(divideRoundHalfAwayFromZero(value(groups.net), orders));
    }
    case 'taxes':
      return centsToAmount(value(groups.taxes));
    case 'shipping':
      return centsToAmount(value(groups.shipping));
    case 'unique_customers':
      return value(groups.uniqueCustomers);
    case 'new_customers':
      return value(groups.newCustomers);
    case 'returning_customers':
      return value(groups.returningCustomers);
  }
}
