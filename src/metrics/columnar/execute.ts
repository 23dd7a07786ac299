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
import { bucketStart } from '../../query/dates.js';
import type { ReportPlan } from '../../query/plan.js';
import type { ReportRow, ReportRowSequence, ReportRows, RowSequence } from '../engine.js';
import { countCustomers, countOrders, type CountedInto } from './counted-orders.js';
import { DAY_UNITS, type DayBuckets } from './day-buckets.js';
import { centsToAmount, compareCodePoints, divideRoundHalfAwayFromZero } from './exact.js';
// A row slot's fields (slot-layout.ts) by their namespace here, named one by one in the hot walk.
import * as field from './slot-layout.js';
import { LinePass, lineValues, lineWeights } from './line-scan.js';
import { keysToSlots } from './key-slots.js';
import {
  CUSTOMER_TYPES,
  ScanSettings,
  type Aggregate,
  type DimensionKey,
  type KeyWeights,
} from './scan-settings.js';
import type { Part, Snapshot } from './snapshot.js';
import { addCells, CELL_SECONDS, cellSums, readyCellSums, type CellSums } from './cell-sums.js';
import {
  countBoundedCustomers,
  customerBounds,
  CUSTOMERS_PER_SLICE,
  readyCustomerBounds,
  type CustomerBounds,
} from './customer-bounds.js';
import { sortedOrder } from './sort-rows.js';
import { ranges } from './order-ranges.js';

export type { Aggregate } from './scan-settings.js';

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
   * orders, read in one go, held the event loop 150–300 ms. About 1 ms of reading each: ranges of
   * 32,768 orders (5 ms, 30 ms on a loaded machine) overran the 3 ms slices that another
   * organization's request waits behind (issue 29, item 2).
   */
  readonly scanOrders: number;
  /**
   * Issue 28: a part keeps quarter-hour sums (cell-sums.ts) when their cells are at most this
   * many per order of it: at ten million orders over three years, one cell for a hundred orders.
   */
  readonly cellsPerOrder: number;
  /**
   * Whether a report waits for a part's quarter-hour sums being built (the tests, to use them at
   * once), or scans the orders meanwhile (false: a first report is never slower for them).
   */
  readonly waitForCells: boolean;
}

export const EXECUTION_PATHS: ExecutionPaths = {
  directKeys: 1 << 14,
  tableKeys: 1 << 21,
  dayUnits: DAY_UNITS,
  scanOrders: 1 << 13,
  cellsPerOrder: 1 / 8,
  waitForCells: false,
};
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
  const answer = await aggregatedAndShaped(snapshot, plan, buckets, paths, slices);
  if (!answer) return undefined;
  const { count, rowAt, truncated } = answer;
  const rows: ReportRow[] = [];
  for (let k = 0; k < count; k++) {
    if (slices.due()) await slices.next();
    rows.push(rowAt(k));
  }
  return { rows, truncated };
}

/**
 * executePlan's answer, its rows built only as they are read (issue 29, item 2): the API writes
 * an answer a piece of rows at a time, and 100,000 rows built first, kept until written, outlived
 * the young generation, each copied by two collections (a 100,000-row answer: 200–600 ms of
 * minor collections against 3–150 ms built a piece at a time, docs/benchmarks.md).
 */
export async function executePlanOnDemand(
  snapshot: Snapshot,
  plan: ReportPlan,
  buckets: DayBuckets | undefined,
  paths: ExecutionPaths = EXECUTION_PATHS,
): Promise<ReportRowSequence | undefined> {
  const answer = await aggregatedAndShaped(snapshot, plan, buckets, paths, new TimeSlices());
  return answer && { rows: new RowsOnDemand(answer.rowAt, answer.count), truncated: answer.truncated };
}

/** Both executions' common part: the plan's sums, then its rows' order; undefined: left to SQL. */
async function aggregatedAndShaped(
  snapshot: Snapshot,
  plan: ReportPlan,
  buckets: DayBuckets | undefined,
  paths: ExecutionPaths,
  slices: TimeSlices,
): Promise<Awaited<ReturnType<typeof shaped>> | undefined> {
  const sums = await aggregate(snapshot, plan, buckets, paths, slices);
  return sums && shaped(plan, sums, slices);
}

/** Rows built when read, from sums that stay the request's own (none of the snapshot's arrays). */
class RowsOnDemand implements RowSequence {
  constructor(
    private readonly rowAt: (k: number) => ReportRow,
    readonly length: number,
  ) {}

  slice(start: number, end: number): ReportRow[] {
    const rows: ReportRow[] = [];
    for (let k = Math.max(0, start); k < Math.min(end, this.length); k++) rows.push(this.rowAt(k));
    return rows;
  }
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
  // Parts one after the other into the same sums: a customer's orders are all in one part, and
  // customer numbers run on from part to part (U4 tells customers apart by them), as do order
  // numbers (L4). Each part read in ranges of orders, the event loop given a turn between two
  // when the slice is over.
  const each = async (
    into: (p: number) => CountedInto,
    bounds: readonly (CustomerBounds | undefined)[] = [],
  ): Promise<void> => {
    let [customers, orders] = [0, 0];
    for (const [p, part] of snapshot.parts.entries()) {
      // A part summed by its cells is read for its customers only, when the plan counts them:
      // by their first and last counted orders when these are ready (customer-bounds.ts), else
      // by their runs.
      const counted = into(p);
      const customersInto = counted.customersOnly === true ? counted.sums : undefined;
      const known = bounds[p];
      if (!customersInto) {
        for (const rows of ranges(part.orderCount, paths.scanOrders)) {
          countOrders(part, rows, customers, orders, scan, counted);
          await slices.pause();
        }
      } else if (scan.countCustomers && known && !scan.byDate) {
        for (let c0 = 0; c0 < part.customerCount; c0 += CUSTOMERS_PER_SLICE) {
          countBoundedCustomers(
            part,
            known,
            c0,
            Math.min(part.customerCount, c0 + CUSTOMERS_PER_SLICE),
            customers,
            scan,
            customersInto,
          );
          await slices.pause();
        }
      } else if (scan.countCustomers) {
        for (const rows of ranges(part.orderCount, paths.scanOrders)) {
          countCustomers(part, rows, customers, scan, customersInto, known);
          await slices.pause();
        }
      }
      customers += part.customerCount;
      orders += part.orderCount;
    }
  };
  if (plan.readsLines) {
    // Section 15: one pass, the slots found as the keys are met (line-scan.ts).
    const lines = new LinePass(snapshot.lineItems, plan, weights, paths);
    await each(() => ({ sums: undefined, keyOf: undefined, lines }));
    lines.fold();
    return lines.slots.result(weights);
  }
  if (weights.space <= paths.directKeys) {
    const sums = new Float64Array(weights.space * field.SLOT);
    const tables = await partTables(snapshot, plan, scan, paths, slices);
    for (const [p, table] of tables.entries())
      if (table) addCells(snapshot.parts[p] as Part, table, scan, sums);
    const bounds = partBounds(snapshot, plan, scan, tables, paths, slices);
    await each(
      (p) => ({ sums, keyOf: undefined, lines: undefined, customersOnly: tables[p] !== undefined }),
      await bounds,
    );
    const keys: number[] = [];
    for (let key = 0; key < weights.space; key++)
      if ((sums[key * field.SLOT + field.ORDERS] as number) > 0) keys.push(key);
    return { weights, sums, keys, slots: keys };
  }
  // Two passes: each counted order's key, then its slot among the keys that occur (in key order).
  const keyOfs = snapshot.parts.map((part) => new Float64Array(part.orderCount).fill(-1));
  await each((p) => ({ sums: undefined, keyOf: keyOfs[p], lines: undefined }));
  const keys = await keysToSlots(keyOfs, weights.space, paths.tableKeys, slices);
  const sums = new Float64Array(keys.length * field.SLOT);
  await each((p) => ({ sums, keyOf: keyOfs[p], lines: undefined }));
  return { weights, sums, keys, slots: Array.from(keys, (_, slot) => slot) };
}

/**
 * Issue 28: each part's quarter-hour sums (cell-sums.ts) when the plan can add up cells: no filter
 * (F1), no dimension but `date`, and every boundary on a quarter hour (T1's midnights in UTC, the
 * local days' starts); undefined for a part without (too few orders for its span of time).
 */
async function partTables(
  snapshot: Snapshot,
  plan: ReportPlan,
  scan: ScanSettings,
  paths: ExecutionPaths,
  slices: TimeSlices,
): Promise<(CellSums | undefined)[]> {
  const onQuarterHours = (t: number): boolean => t % CELL_SECONDS === 0;
  const summable =
    !plan.readsLines &&
    Object.keys(plan.filters).length === 0 &&
    plan.dimensions.every((id) => id === 'date') &&
    onQuarterHours(scan.start) &&
    onQuarterHours(scan.end) &&
    (!scan.byDate || scan.buckets.starts.every(onQuarterHours));
  const tables: (CellSums | undefined)[] = [];
  const settings = settingsKey(plan);
  for (const part of snapshot.parts) {
    const maxCells = Math.floor(part.orderCount * paths.cellsPerOrder);
    tables.push(
      summable && maxCells > 0
        ? paths.waitForCells
          ? await cellSums(part, scan.attributeExcluded, settings, maxCells, paths.scanOrders, slices)
          : readyCellSums(part, scan.attributeExcluded, settings, maxCells, paths.scanOrders, slices)
        : undefined,
    );
  }
  return tables;
}

/**
 * Issue 28: the customers' first and last counted orders (customer-bounds.ts) of each part summed
 * by its cells, for a plan that counts customers: without `date` they count them, with it they
 * pass over the customers without an order in the period. Undefined for the other parts, and for
 * a part whose bounds are not built yet when reports do not wait for them.
 */
async function partBounds(
  snapshot: Snapshot,
  plan: ReportPlan,
  scan: ScanSettings,
  tables: readonly (CellSums | undefined)[],
  paths: ExecutionPaths,
  slices: TimeSlices,
): Promise<(CustomerBounds | undefined)[]> {
  if (!scan.countCustomers) return [];
  const settings = settingsKey(plan);
  const bounds: (CustomerBounds | undefined)[] = [];
  for (const [p, part] of snapshot.parts.entries())
    bounds.push(
      tables[p] === undefined
        ? undefined
        : paths.waitForCells
          ? await customerBounds(part, scan.attributeExcluded, settings, slices)
          : readyCustomerBounds(part, scan.attributeExcluded, settings, slices),
    );
  return bounds;
}

/** S1: the excluded statuses, as the name of the tables they leave counted. */
const settingsKey = (plan: ReportPlan): string => [...plan.settings.excludedStatuses].sort().join('\n');

/**
 * The rows (T2) of the keys that occur, in key order, with their slots: `limit` of them after the
 * first `offset` (T6, O1); one totals row without dimensions (T5), which any offset skips. The
 * order is settled here; `rowAt(k)` builds the k-th row kept.
 */
async function shaped(
  plan: ReportPlan,
  { weights, sums, keys, slots }: Aggregate,
  slices: TimeSlices,
): Promise<{ count: number; rowAt: (k: number) => ReportRow; truncated: boolean }> {
  const dimensions = weights.dimensions;
  if (plan.dimensions.length === 0) {
    // T5, O1: one totals row (zeros when no order counts), skipped by any offset.
    const rowAt = () => row(plan, dimensions, sums, 0, keys.length > 0 ? 0 : -1);
    return { count: plan.offset > 0 ? 0 : 1, rowAt, truncated: false };
  }
  const end = Math.min(keys.length, plan.offset + plan.limit); // O1, T6
  // L7: `sort`'s order, then T3's (the keys' order); none: T3's alone.
  const order = await sortedOrder(plan, dimensions, keys.length, {
    key: (n) => keys[n] as number,
    metric: (n, id) => slotMetric(sums, slots[n] as number, id),
    slices,
  });
  const rowAt = (k: number) => {
    const n = order ? (order[plan.offset + k] as number) : plan.offset + k;
    return row(plan, dimensions, sums, keys[n] as number, slots[n] as number);
  };
  return { count: Math.max(0, end - plan.offset), rowAt, truncated: keys.length > end };
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
  return metricValue(id, (offset) => (slot < 0 ? 0 : (sums[slot * field.SLOT + offset] as number)));
}

function metricValue(id: MetricId, value: (field: number) => number): number {
  switch (id) {
    case 'orders':
      return value(field.ORDERS);
    case 'items_sold':
      return value(field.ITEMS);
    case 'gross_sales':
      return centsToAmount(value(field.GROSS));
    case 'net_revenue':
      return centsToAmount(value(field.NET));
    case 'average_order_value': {
      const orders = value(field.ORDERS);
      return orders === 0 ? 0 : centsToAmount(divideRoundHalfAwayFromZero(value(field.NET), orders));
    }
    case 'taxes':
      return centsToAmount(value(field.TAXES));
    case 'shipping':
      return centsToAmount(value(field.SHIPPING));
    case 'unique_customers':
      return value(field.UNIQUE);
    case 'new_customers':
      return value(field.NEW_CUSTOMERS);
    case 'returning_customers':
      return value(field.RETURNING_CUSTOMERS);
    // L3: sums of exact integers (units) and cents (M1), rounded once.
    case 'units_sold':
      return value(field.UNITS_SOLD);
    case 'units_refunded':
      return value(field.UNITS_REFUNDED);
    case 'product_gross_sales':
      return centsToAmount(value(field.PRODUCT_GROSS));
    case 'product_discounts':
      return centsToAmount(value(field.PRODUCT_DISCOUNTS));
    case 'product_refunds':
      return centsToAmount(value(field.PRODUCT_REFUNDS));
    case 'product_net_sales':
      return centsToAmount(
        value(field.PRODUCT_GROSS) - value(field.PRODUCT_DISCOUNTS) - value(field.PRODUCT_REFUNDS),
      );
  }
}
