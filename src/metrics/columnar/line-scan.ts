// Section 15 over a snapshot: a plan that reads order lines (L2–L6), with the SQL engine's answer
// (src/query/compile.ts is the reference). The pass is execute.ts's, over the counted orders (T1,
// S1, F1, U2–U4 from the runs, counted-orders.ts), each counted order followed by its lines; this
// file decides before it what the lines count and where:
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
// Issue 27: when a row is its lines' items' alone to say (line dimensions only, L3's sums only, as
// `product` × the six line metrics), the pass adds each counted line into its item's sums, in one
// loop over the lines of each run of counted orders, and folds the items into their rows after:
// L1 in 21.5–22.1 ms instead of 30.3–31.5 (server time, 1,000,000 orders, 2.5 million lines).
import { dimensionGrain, metricGrain, type DimensionId } from '../../catalog.js';
import type { ReportPlan } from '../../query/plan.js';
import { kept } from './kept.js';
import {
  ORDERS,
  PRODUCT_DISCOUNTS,
  PRODUCT_GROSS,
  PRODUCT_REFUNDS,
  SLOT,
  UNITS_REFUNDED,
  UNITS_SOLD,
} from './slot-layout.js';
import type { LineItems } from './line-codes.js';
import type { Part } from './snapshot.js';
import type { Aggregate, KeyWeights, LineWeights } from './scan-settings.js';

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
export class Slots {
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

  /**
   * The slot's first field's index in sums. Short, the new key's work in a call of its own: the
   * pass's loop inlines it within V8's budget (counted-orders.ts).
   */
  at(key: number): number {
    if (this.direct) return key * SLOT;
    const slot = this.table ? (this.table[key] as number) : (this.map?.get(key) ?? -1);
    return slot < 0 ? this.added(key) : slot * SLOT;
  }

  /** A key seen for the first time: the next slot, the sums grown when full. */
  private added(key: number): number {
    const slot = this.keys.push(key) - 1;
    if (this.table) this.table[key] = slot;
    else this.map?.set(key, slot);
    if ((slot + 1) * SLOT > this.sums.length) {
      const bigger = new Float64Array(this.sums.length * 2);
      bigger.set(this.sums);
      this.sums = bigger;
    }
    return slot * SLOT;
  }

  /** The keys that occur in key (T3) order, and each one's slot. */
  result(weights: KeyWeights): Aggregate {
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

// An item's sums in LinePass.itemSums, at item × ITEM_SLOT + one of these: its counted lines, then
// L3's sums. Eight fields, so that an item's sums lie in one cache line.
const ITEM_LINES = 0;
const ITEM_UNITS_SOLD = 1;
const ITEM_UNITS_REFUNDED = 2;
const ITEM_GROSS = 3;
const ITEM_DISCOUNTS = 4;
const ITEM_REFUNDS = 5;
const ITEM_SLOT = 8;

/** What a pass that reads lines keeps besides the order's settings: its items', its slots, its sums. */
export class LinePass {
  readonly items: ItemSettings;
  readonly slots: Slots;
  readonly sums: LineSums;
  readonly lineGrain: boolean;
  /**
   * The counted lines' sums by item, when a row is the item's alone to say (itemsAlone): the pass
   * adds each line into its item, fold() then each item into its rows.
   */
  readonly itemSums: Float64Array | undefined;

  constructor(
    items: LineItems,
    plan: ReportPlan,
    weights: KeyWeights,
    paths: { readonly directKeys: number; readonly tableKeys: number },
  ) {
    this.items = new ItemSettings(items, plan, weights.line);
    this.slots = new Slots(weights.space, weights.space <= paths.directKeys, paths.tableKeys);
    this.sums = new LineSums(plan);
    this.lineGrain = plan.grain === 'line';
    this.itemSums = itemsAlone(plan) ? new Float64Array(items.count * ITEM_SLOT) : undefined;
  }

  /** Lines [from, to) of the part, all counted, each into its item's sums (itemSums). */
  addLines(part: Part, from: number, to: number): void {
    const sums = this.itemSums as Float64Array;
    const { item, quantity, refundedQuantity, subtotal, discount, refundedAmount } = part.lines;
    for (let l = from; l < to; l++) {
      const at = (item[l] as number) * ITEM_SLOT;
      const refundedUnits = refundedQuantity[l] as number;
      sums[at + ITEM_LINES]! += 1;
      sums[at + ITEM_UNITS_SOLD]! += (quantity[l] as number) - refundedUnits;
      sums[at + ITEM_UNITS_REFUNDED]! += refundedUnits;
      sums[at + ITEM_GROSS]! += subtotal[l] as number;
      sums[at + ITEM_DISCOUNTS]! += discount[l] as number;
      sums[at + ITEM_REFUNDS]! += refundedAmount[l] as number;
    }
  }

  /** The item sums into the rows of each item the line filters keep (L6), once per category (L5). */
  fold(): void {
    const { itemSums } = this;
    if (!itemSums) return;
    const { key, categoryKeys } = this.items;
    for (let t = 0; t < key.length; t++) {
      const own = key[t] as number;
      const from = t * ITEM_SLOT;
      if (own < 0 || itemSums[from + ITEM_LINES] === 0) continue;
      for (const category of categoryKeys?.[t] ?? [0]) {
        const at = this.slots.at(own + category);
        const out = this.slots.sums; // read after at(): the sums may have grown
        // No metric of the plan reads ORDERS (itemsAlone): it counts the row's lines, which only
        // tells that the row occurs (Slots.result).
        out[at + ORDERS]! += itemSums[from + ITEM_LINES] as number;
        out[at + UNITS_SOLD]! += itemSums[from + ITEM_UNITS_SOLD] as number;
        out[at + UNITS_REFUNDED]! += itemSums[from + ITEM_UNITS_REFUNDED] as number;
        out[at + PRODUCT_GROSS]! += itemSums[from + ITEM_GROSS] as number;
        out[at + PRODUCT_DISCOUNTS]! += itemSums[from + ITEM_DISCOUNTS] as number;
        out[at + PRODUCT_REFUNDS]! += itemSums[from + ITEM_REFUNDS] as number;
      }
    }
  }
}

/**
 * Whether a plan's rows are its lines' items' alone, summed by item then folded into rows: at line
 * grain, every dimension a line's (so an order's part of the key is always 0), every metric L3's
 * sums (no order or customer counted once per row, L4, which adding items up would count again).
 */
function itemsAlone(plan: ReportPlan): boolean {
  return (
    plan.grain === 'line' &&
    plan.dimensions.every((id) => dimensionGrain(id) === 'line') &&
    plan.metrics.every((id) => metricGrain(id) === 'line')
  );
}
