// Section 15 over a snapshot: a plan that reads order lines (L2–L6), with the SQL engine's answer
// (src/query/compile.ts is the reference). One pass over the orders as execute.ts's (T1, S1, F1,
// U2–U4 from the runs), each counted order followed by its lines:
// - at order grain (L4), the order counts whole in its row, with its kept lines' sums (L3); with a
//   line filter (L6), only when one of its lines is kept ("the orders that contain it");
// - at line grain, each kept line counts in the row of its order's and its own values, once per
//   category of the line with `category` (L5: only the filtered ones when `category` is filtered
//   too); `orders` counts an order once per row (its lines lie together) and customers once per
//   row (their orders lie together in their run, U4).
// Row keys are execute.ts's mixed-radix numbers with the line dimensions' digits; a line's
// product, product id, variant, SKU and categories are one item code (line-codes.ts), so its
// filters and key part are one lookup. A row's slot is its key in a small key space, else given
// in order of first sight through a table or a map (one pass; the keys sorted afterwards).
import type { DimensionId } from '../../catalog.js';
import type { TimeSlices } from '../../limits/time-slice.js';
import type { ReportPlan } from '../../query/plan.js';
import { kept } from './kept.js';
import {
  GROSS,
  ITEMS,
  LAST_CUSTOMER,
  LAST_ORDER,
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
import type { DayBuckets } from './day-buckets.js';
import type { LineItems } from './line-codes.js';
import { ranges, runAt, type Rows } from './order-ranges.js';
import type { Part, Snapshot } from './snapshot.js';

const ANONYMOUS = 0;
const NEW = 1;
const RETURNING = 2;

/** What the pass reads of execute.ts's ScanSettings: the plan's period, filters and sums, per order. */
export interface OrderScan {
  readonly start: number;
  readonly end: number;
  readonly attributeKey: Float64Array;
  readonly attributeExcluded: Uint8Array;
  readonly typeKept: Uint8Array;
  readonly typeKey: Float64Array;
  readonly byDate: boolean;
  readonly dateKey: Float64Array;
  readonly buckets: Pick<DayBuckets, 'starts' | 'index' | 'unit' | 'aligned'>;
  readonly sumItems: boolean;
  readonly sumGross: boolean;
  readonly sumNet: boolean;
  readonly sumTaxes: boolean;
  readonly sumShipping: boolean;
  readonly countCustomers: boolean;
  readonly needsFirstOrders: boolean;
  readonly refunds: number;
  readonly taxes: number;
  readonly shipping: number;
  readonly fees: number;
}

/** The row keys' space and the line dimensions' weights (of execute.ts's KeyWeights). */
export interface LineKeys {
  readonly space: number;
  readonly line: LineWeights;
}

/** execute.ts's Aggregate: the keys that occur in key (T3) order, each one's slot in `sums`. */
export interface LineAggregate<W> {
  readonly weights: W;
  readonly sums: Float64Array;
  readonly keys: readonly number[];
  readonly slots: readonly number[];
}

/** Code → key weight of each line dimension (zeros when not requested). */
export interface LineWeights {
  readonly product: Float64Array;
  readonly productId: Float64Array;
  readonly variant: Float64Array;
  readonly sku: Float64Array;
  readonly category: Float64Array;
}

/** L2: the values of a line dimension, by code. */
export function lineValues(id: DimensionId, items: LineItems): readonly string[] {
  switch (id) {
    case 'product':
      return items.products.values;
    case 'product_id':
      return items.productIds.values;
    case 'variant':
      return items.variants.values;
    case 'sku':
      return items.skus.values;
    case 'category':
      return items.categories.values;
    default:
      throw new RangeError(`dimension ${id} is not a line dimension`);
  }
}

export function lineWeights(
  items: LineItems,
  weights: (id: DimensionId, size: number) => Float64Array,
): LineWeights {
  return {
    product: weights('product', items.products.values.length),
    productId: weights('product_id', items.productIds.values.length),
    variant: weights('variant', items.variants.values.length),
    sku: weights('sku', items.skus.values.length),
    category: weights('category', items.categories.values.length),
  };
}

/** What each item (a line's texts) brings: kept by the line filters or not (L6), its key part. */
class ItemSettings {
  /** Per item: its line dimensions' part of the key (L2), or -1 when a line filter leaves it out (L6). */
  readonly key: Float64Array;
  /** With `category` as a dimension: per item, the key parts of the categories it counts in (L5). */
  readonly categoryKeys: readonly Float64Array[] | undefined;
  /** Some line filter is asked: an order counts at order grain only with a kept line. */
  readonly filtered: boolean;

  constructor(items: LineItems, plan: ReportPlan, weights: LineWeights) {
    const { filters } = plan;
    const productKept = kept(items.products, filters.product);
    const productIdKept = kept(items.productIds, filters.product_id);
    const variantKept = kept(items.variants, filters.variant);
    const skuKept = kept(items.skus, filters.sku);
    const categoryKept = kept(items.categories, filters.category);
    this.filtered = ['product', 'product_id', 'variant', 'sku', 'category'].some(
      (id) => filters[id as 'product'] !== undefined,
    );
    const byCategory = plan.grain === 'line' && plan.dimensions.includes('category');
    // Per set of categories: the key parts of its kept categories (none: the set is filtered out).
    const setKeys = items.setCategories.map((categories) =>
      Float64Array.from(
        Array.from(categories).filter((c) => categoryKept[c] === 1),
        (c) => weights.category[c] as number,
      ),
    );
    this.key = new Float64Array(items.count);
    const categoryKeys: Float64Array[] = [];
    for (let t = 0; t < items.count; t++) {
      const [p, i, v, s] = [items.product[t], items.productId[t], items.variant[t], items.sku[t]] as number[];
      const keys = setKeys[items.categorySet[t] as number] as Float64Array;
      categoryKeys.push(keys);
      const counted =
        productKept[p as number] === 1 &&
        productIdKept[i as number] === 1 &&
        variantKept[v as number] === 1 &&
        skuKept[s as number] === 1 &&
        keys.length > 0;
      this.key[t] = counted
        ? (weights.product[p as number] as number) +
          (weights.productId[i as number] as number) +
          (weights.variant[v as number] as number) +
          (weights.sku[s as number] as number)
        : -1;
    }
    this.categoryKeys = byCategory ? categoryKeys : undefined;
  }
}

/**
 * Slots of the keys that occur: the key itself in a small key space, else a slot in order of first
 * sight, found through a table of the key space or a map; sums grow with them.
 */
class Slots {
  sums: Float64Array;
  private readonly table: Int32Array | undefined;
  private readonly map: Map<number, number> | undefined;
  readonly keys: number[] = [];

  constructor(
    private readonly space: number,
    readonly direct: boolean,
    tableKeys: number,
  ) {
    this.sums = new Float64Array((direct ? space : 64) * SLOT);
    this.table = !direct && space <= tableKeys ? new Int32Array(space).fill(-1) : undefined;
    this.map = !direct && !this.table ? new Map() : undefined;
  }

  /** The slot's first field's index in sums. */
  at(key: number): number {
    if (this.direct) return key * SLOT;
    let slot = this.table ? (this.table[key] as number) : (this.map?.get(key) ?? -1);
    if (slot < 0) {
      slot = this.keys.push(key) - 1;
      if (this.table) this.table[key] = slot;
      else this.map?.set(key, slot);
      if ((slot + 1) * SLOT > this.sums.length) {
        const bigger = new Float64Array(this.sums.length * 2);
        bigger.set(this.sums);
        this.sums = bigger;
      }
    }
    return slot * SLOT;
  }

  /** The keys that occur in key (T3) order, and each one's slot. */
  result<W>(weights: W): LineAggregate<W> {
    if (this.direct) {
      const keys: number[] = [];
      for (let key = 0; key < this.space; key++)
        if ((this.sums[key * SLOT + ORDERS] as number) > 0) keys.push(key);
      return { weights, sums: this.sums, keys, slots: keys };
    }
    const slots = this.keys
      .map((_, slot) => slot)
      .sort((a, b) => (this.keys[a] as number) - (this.keys[b] as number));
    return { weights, sums: this.sums, keys: slots.map((slot) => this.keys[slot] as number), slots };
  }
}

/** The sums of each row of a plan that reads lines (execute.ts's aggregate, section 15). */
export async function aggregateLines<W extends LineKeys>(
  snapshot: Snapshot,
  plan: ReportPlan,
  weights: W,
  scan: OrderScan,
  paths: { readonly directKeys: number; readonly tableKeys: number; readonly scanOrders: number },
  slices: TimeSlices,
): Promise<LineAggregate<W>> {
  const items = new ItemSettings(snapshot.lineItems, plan, weights.line);
  const slots = new Slots(weights.space, weights.space <= paths.directKeys, paths.tableKeys);
  const sumLines = new LineSums(plan);
  let customers = 0;
  let orders = 0;
  for (const part of snapshot.parts) {
    // In ranges of orders, as execute.ts's pass: a part of a million orders is not one stretch.
    for (const rows of ranges(part.orderCount, paths.scanOrders)) {
      accumulateLines(part, rows, customers, orders, scan, items, sumLines, plan.grain === 'line', slots);
      await slices.pause();
    }
    customers += part.customerCount;
    orders += part.orderCount;
  }
  return slots.result(weights);
}

/** Which line sums a plan asks for. */
class LineSums {
  readonly units: boolean;
  readonly money: boolean;
  constructor(plan: ReportPlan) {
    const asks = (...ids: string[]): boolean => plan.metrics.some((m) => ids.includes(m));
    this.units = asks('units_sold', 'units_refunded');
    this.money = asks('product_gross_sales', 'product_discounts', 'product_refunds', 'product_net_sales');
  }
}

/**
 * One pass over a part, execute.ts's accumulate with each counted order's lines: at order grain the
 * order into its row with its kept lines' sums, at line grain each kept line into its own row.
 */
function accumulateLines(
  s: Part,
  rows: Rows,
  customerBase: number,
  orderBase: number,
  scan: OrderScan,
  items: ItemSettings,
  sumLines: LineSums,
  lineGrain: boolean,
  slots: Slots,
): void {
  const { start, end, attributeKey, attributeExcluded, typeKept, byDate, dateKey, needsFirstOrders } = scan;
  const { sumItems, sumGross, sumNet, sumTaxes, sumShipping, countCustomers } = scan;
  const { refunds, taxes, shipping, fees } = scan;
  const { starts, index, unit, aligned } = scan.buckets;
  const firstStart = starts[0] as number;
  const perUnit = 1 / unit;
  const lastUnit = index.length - 1;
  const { seconds, attribute, runStart, customerCount, orderCount, retiredRuns, retiredOrders } = s;
  const { lineStart, item, quantity, refundedQuantity, subtotal, discount, refundedAmount } = s.lines;
  const itemKey = items.key;
  const categoryKeys = items.categoryKeys;
  const filtered = items.filtered;
  const { units, money } = sumLines;
  const direct = slots.direct;
  const directSums = slots.sums; // a direct key space's sums never grow
  const anonymousFrom = runStart[customerCount] as number;
  const runs = needsFirstOrders || countCustomers || retiredRuns ? customerCount : 0;
  for (let c = runAt(runStart, runs, rows.from); c <= runs; c++) {
    const from = runStart[c] as number;
    if (from >= rows.to) break; // the runs after the range
    if (c < runs && retiredRuns?.[c] === 1) continue;
    const to = c < runs ? (runStart[c + 1] as number) : orderCount;
    const anonymous = c === runs;
    let type = anonymous ? ANONYMOUS : NEW;
    if (needsFirstOrders && !anonymous) {
      // U2: the customer's earliest counted order ever, whatever the period and the line filters.
      let first = from;
      while (first < to && attributeExcluded[attribute[first] as number] === 1) first++;
      if (first < to && (seconds[first] as number) < start) type = RETURNING;
    }
    if (typeKept[type] === 0) continue; // F1 on customer_type
    const typeKey = scan.typeKey[type] as number;
    const customer = countCustomers && !anonymous ? customerBase + c : -1;
    const retired = anonymous ? retiredOrders : undefined;
    // The run's orders within the range (U2 above looked at the whole run).
    const last = Math.min(to, rows.to);
    for (let i = Math.max(from, rows.from); i < last; i++) {
      const t = seconds[i] as number;
      if (t >= end) {
        if (anonymous) continue;
        break; // T1
      }
      if (t < start) continue;
      if (retired && i >= anonymousFrom && retired[i - anonymousFrom] === 1) continue;
      const attributeWeight = attributeKey[attribute[i] as number] as number;
      if (attributeWeight < 0) continue; // S1, F1
      let orderKey = attributeWeight + typeKey;
      if (byDate) {
        let k = index[Math.min(lastUnit, ((t - firstStart + 0.5) * perUnit) | 0)] as number;
        if (!aligned) while (k + 1 < starts.length && t >= (starts[k + 1] as number)) k++;
        orderKey += dateKey[k] as number;
      }
      const lineFrom = lineStart[i] as number;
      const lineTo = lineStart[i + 1] as number;
      const order = orderBase + i + 1; // + 1: a slot's zero means none yet
      if (lineGrain) {
        for (let l = lineFrom; l < lineTo; l++) {
          const own = itemKey[item[l] as number] as number;
          if (own < 0) continue; // L6
          const keys = categoryKeys?.[item[l] as number];
          const rowCount = keys ? keys.length : 1;
          for (let r = 0; r < rowCount; r++) {
            const key = orderKey + own + (keys ? (keys[r] as number) : 0);
            // The slot of a small key space inline: no call a line on the common path.
            const at = direct ? (key * SLOT) | 0 : slots.at(key);
            const out = direct ? directSums : slots.sums;
            if (units) {
              out[at + UNITS_SOLD]! += (quantity[l] as number) - (refundedQuantity[l] as number);
              out[at + UNITS_REFUNDED]! += refundedQuantity[l] as number;
            }
            if (money) {
              out[at + PRODUCT_GROSS]! += subtotal[l] as number;
              out[at + PRODUCT_DISCOUNTS]! += discount[l] as number;
              out[at + PRODUCT_REFUNDS]! += refundedAmount[l] as number;
            }
            // L4: an order once per row, a customer once per row (U4).
            if (out[at + LAST_ORDER] !== order) {
              out[at + LAST_ORDER] = order;
              out[at + ORDERS]! += 1;
              if (customer >= 0 && out[at + LAST_CUSTOMER] !== customer + 1) {
                out[at + LAST_CUSTOMER] = customer + 1;
                out[at + UNIQUE]! += 1;
                out[at + (type === RETURNING ? RETURNING_CUSTOMERS : NEW_CUSTOMERS)]! += 1;
              }
            }
          }
        }
        continue;
      }
      // Order grain: the order's kept lines first (L6: none kept, the order is left out).
      let keptLines = 0;
      let at = -1;
      for (let l = lineFrom; l < lineTo; l++) {
        if ((itemKey[item[l] as number] as number) < 0) continue;
        keptLines++;
        if (at < 0) at = slots.at(orderKey);
        addLine(
          slots.sums,
          at,
          l,
          units,
          money,
          quantity,
          refundedQuantity,
          subtotal,
          discount,
          refundedAmount,
        );
      }
      if (filtered && keptLines === 0) continue;
      if (at < 0) at = slots.at(orderKey);
      const out = slots.sums;
      out[at + ORDERS]! += 1;
      if (sumItems) out[at + ITEMS]! += s.items[i] as number;
      if (sumGross) out[at + GROSS]! += s.total[i] as number;
      if (sumTaxes) out[at + TAXES]! += s.taxTotal[i] as number;
      if (sumShipping) out[at + SHIPPING]! += s.shippingTotal[i] as number;
      if (sumNet) {
        // S2, as execute.ts's accumulate.
        out[at + NET]! +=
          (s.total[i] as number) -
          refunds * (s.refundTotal[i] as number) -
          taxes * ((s.taxTotal[i] as number) - refunds * (s.refundTax[i] as number)) -
          shipping * ((s.shippingTotal[i] as number) - refunds * (s.refundShipping[i] as number)) -
          fees * (s.feeTotal[i] as number);
      }
      if (customer >= 0 && out[at + LAST_CUSTOMER] !== customer + 1) {
        out[at + LAST_CUSTOMER] = customer + 1;
        out[at + UNIQUE]! += 1;
        out[at + (type === RETURNING ? RETURNING_CUSTOMERS : NEW_CUSTOMERS)]! += 1;
      }
    }
  }
}

/** L3: one line's quantities and cents into the slot at `at`. */
function addLine(
  out: Float64Array,
  at: number,
  l: number,
  units: boolean,
  money: boolean,
  quantity: Int32Array,
  refundedQuantity: Int32Array,
  subtotal: Int32Array,
  discount: Int32Array,
  refundedAmount: Int32Array,
): void {
  if (units) {
    out[at + UNITS_SOLD]! += (quantity[l] as number) - (refundedQuantity[l] as number);
    out[at + UNITS_REFUNDED]! += refundedQuantity[l] as number;
  }
  if (money) {
    out[at + PRODUCT_GROSS]! += subtotal[l] as number;
    out[at + PRODUCT_DISCOUNTS]! += discount[l] as number;
    out[at + PRODUCT_REFUNDS]! += refundedAmount[l] as number;
  }
}
