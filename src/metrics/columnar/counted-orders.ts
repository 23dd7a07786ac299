// The one walk of a report's pass over a part's orders (execute.ts), with or without their lines
// (section 15, line-scan.ts): the customers' runs of orders in the range, each run's customer type
// (U2, U3, F1), each counted order (T1, S1, F1, retired ones skipped) with its row key (date
// bucket G2, store, status, country, customer type); then the order's sums into its row, or its
// key noted for a second pass, and with lines, its kept lines into their rows.
//
// One function with no call per order or line on the common path, on purpose: V8 optimizes it
// once for every kind of pass, monomorphic, with its columns in locals. A callback per kind of
// pass would make the call site polymorphic, a helper as large as the lines' work outgrows V8's
// inlining budget (then called per order), and a value passed to a call that is not inlined
// becomes a heap number (an allocation per order for an instant). The one call is a plan whose rows
// are its lines' items alone (line-scan.ts, itemsAlone): once per run of counted orders that follow
// each other, whose lines lie together, added by a loop of their own (LinePass.addLines).
import { CELL_SECONDS } from './cell-sums.js';
import type { CustomerBounds } from './customer-bounds.js';
import type { LinePass } from './line-scan.js';
import { runAt, type Rows } from './order-ranges.js';
import { ANONYMOUS, NEW, RETURNING, type ScanSettings } from './scan-settings.js';
import {
  GROSS,
  ITEMS,
  LAST_CUSTOMER,
  LAST_ORDER,
  NET,
  NEW_CUSTOMERS,
  ORDERS,
  RETURNING_CUSTOMERS,
  PRODUCT_DISCOUNTS,
  PRODUCT_GROSS,
  PRODUCT_REFUNDS,
  SHIPPING,
  SLOT,
  TAXES,
  UNIQUE,
  UNITS_REFUNDED,
  UNITS_SOLD,
} from './slot-layout.js';
import type { Part } from './snapshot.js';

/**
 * Where the counted orders of a pass go: `sums` by slot (the slot is the key when `keyOf` is
 * undefined, else keyOf[i], -1: not counted); with `sums` undefined, each counted order's key
 * only, into `keyOf`; with `lines`, into the line pass's slots (section 15).
 */
export interface CountedInto {
  readonly sums: Float64Array | undefined;
  readonly keyOf: Float64Array | undefined;
  readonly lines: LinePass | undefined;
  /**
   * Issue 28: the part's additive sums came from its quarter-hour table (cell-sums.ts): only its
   * customers are counted, for U2–U5, into `sums` by slot (the slot is the key), by
   * countCustomers or customer-bounds.ts, never by countOrders.
   */
  readonly customersOnly?: boolean;
}

/**
 * One pass over the orders `rows` of a part: each counted order (T1, S1, F1) into its row;
 * retired runs and orders skipped (issue 19); customers numbered from `customerBase`, orders from
 * `orderBase`. A customer's run, in time order, ends at the period's end.
 */
export function countOrders(
  s: Part,
  rows: Rows,
  customerBase: number,
  orderBase: number,
  scan: ScanSettings,
  into: CountedInto,
): void {
  const { start, end, attributeKey, attributeExcluded, typeKept, byDate, dateKey, needsFirstOrders } = scan;
  const typeKeys = scan.typeKey;
  const { sumItems, sumGross, sumNet, sumTaxes, sumShipping, countCustomers } = scan;
  const { refunds, taxes, shipping, fees } = scan;
  const { starts, index, unit, aligned } = scan.buckets;
  const firstStart = starts[0] as number;
  const perUnit = 1 / unit;
  const lastUnit = index.length - 1;
  const { sums, keyOf, lines } = into;
  const noteKeys = sums === undefined && lines === undefined;
  const slotted = !noteKeys && keyOf !== undefined;
  const orderSums = sums ?? new Float64Array(0);
  const keys = keyOf ?? new Float64Array(0);
  const { seconds, attribute, items, total, taxTotal, shippingTotal, feeTotal } = s;
  const { refundTotal, refundTax, refundShipping, runStart, customerCount, orderCount } = s;
  const { retiredRuns, retiredOrders } = s;
  // Section 15 (line-scan.ts), read only with `lines`.
  const { lineStart, item, quantity, refundedQuantity, subtotal, discount, refundedAmount } = s.lines;
  const itemKey = lines?.items.key ?? new Float64Array(0);
  const categoryKeys = lines?.items.categoryKeys;
  const filtered = lines?.items.filtered === true;
  const lineGrain = lines?.lineGrain === true;
  const units = lines?.sums.units === true;
  const money = lines?.sums.money === true;
  const slots = lines?.slots;
  const itemSums = lines?.itemSums;
  // With itemSums: the lines of the counted orders met and not yet added, [pendingFrom, pendingTo).
  let [pendingFrom, pendingTo] = [0, 0];
  const direct = slots?.direct === true;
  const directSums = slots?.sums ?? orderSums; // a direct key space's sums never grow

  // c = runs: the anonymous orders, in no particular order. A plan that neither counts customers
  // nor tells them apart (no customer_type, so every order's type key is 0) reads all the orders
  // as one such run, without the customers' runs, skipping the retired ones by their flags.
  const runs = needsFirstOrders || countCustomers ? customerCount : 0;
  for (let c = runAt(runStart, runs, rows.from); c <= runs; c++) {
    const from = runStart[c] as number;
    if (from >= rows.to) break; // the runs after the range
    if (c < runs && retiredRuns?.[c] === 1) continue;
    const to = c < runs ? (runStart[c + 1] as number) : orderCount;
    const anonymous = c === runs;
    let type = anonymous ? ANONYMOUS : NEW;
    if (needsFirstOrders && !anonymous) {
      // U2: the customer's earliest counted order ever, whatever the period and the line filters;
      // U3 from it.
      let first = from;
      while (first < to && attributeExcluded[attribute[first] as number] === 1) first++;
      if (first < to && (seconds[first] as number) < start) type = RETURNING;
    }
    if (typeKept[type] === 0) continue; // F1 on customer_type
    const typeKey = typeKeys[type] as number;
    const customer = countCustomers && !anonymous ? customerBase + c : -1;
    const customerField = type === RETURNING ? RETURNING_CUSTOMERS : NEW_CUSTOMERS;
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
      if (retired && retired[i] === 1) continue;
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
      if (itemSums !== undefined) {
        // Section 15, a row an item's alone (line-scan.ts, itemsAlone): the lines of counted orders
        // that follow each other added in one call (LinePass.addLines), whatever the line filters
        // (L6: LinePass.fold() leaves their items out).
        const lineFrom = lineStart[i] as number;
        if (lineFrom !== pendingTo) {
          if (pendingTo > pendingFrom) lines!.addLines(s, pendingFrom, pendingTo);
          pendingFrom = lineFrom;
        }
        pendingTo = lineStart[i + 1] as number;
        continue;
      }
      let out = orderSums;
      let at = (slot * SLOT) | 0; // an int32 index (slots stay far below 2^31 / SLOT)
      if (slots !== undefined) {
        // Section 15: each kept line (L6) into the row of the order's and its own values (L2),
        // once per category with `category` (L5); at order grain, where lines have no values of
        // their own (own = 0), all into the order's row.
        at = -1;
        const order = orderBase + i + 1; // + 1: a slot's zero means no order yet (L4)
        const lineTo = lineStart[i + 1] as number;
        for (let l = lineStart[i] as number; l < lineTo; l++) {
          const own = itemKey[item[l] as number] as number;
          if (own < 0) continue; // L6
          const categories = categoryKeys?.[item[l] as number];
          const rowCount = categories ? categories.length : 1;
          for (let r = 0; r < rowCount; r++) {
            const key = slot + own + (categories ? (categories[r] as number) : 0);
            // The slot of a small key space inline: no call a line on the common path.
            at = direct ? (key * SLOT) | 0 : slots.at(key);
            out = direct ? directSums : slots.sums; // read after at(): the sums may have grown
            if (units) {
              out[at + UNITS_SOLD]! += (quantity[l] as number) - (refundedQuantity[l] as number);
              out[at + UNITS_REFUNDED]! += refundedQuantity[l] as number;
            }
            if (money) {
              out[at + PRODUCT_GROSS]! += subtotal[l] as number;
              out[at + PRODUCT_DISCOUNTS]! += discount[l] as number;
              out[at + PRODUCT_REFUNDS]! += refundedAmount[l] as number;
            }
            // L4 at line grain: an order once per row, and a customer (U4).
            if (lineGrain && out[at + LAST_ORDER] !== order) {
              out[at + LAST_ORDER] = order;
              out[at + ORDERS]! += 1;
              if (customer >= 0 && out[at + LAST_CUSTOMER] !== customer + 1) {
                out[at + LAST_CUSTOMER] = customer + 1;
                out[at + UNIQUE]! += 1;
                out[at + customerField]! += 1;
              }
            }
          }
        }
        if (lineGrain) continue;
        if (at < 0) {
          if (filtered) continue; // L6: an order counts with a kept line only
          at = slots.at(slot);
          out = slots.sums;
        }
      }
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
        out[at + customerField]! += 1;
      }
    }
  }
  if (pendingTo > pendingFrom) lines!.addLines(s, pendingFrom, pendingTo);
}

/**
 * Issue 28: the pass over a part whose additive sums came from its quarter-hour cells
 * (customersOnly, so no filter, no dimension but `date`, no lines, a slot per key): each customer
 * counted once in each row they have a counted order in (U4, U5), as new or returning (U2, U3),
 * the anonymous orders skipped. countOrders' walk without its sums, lines and noted keys, and with
 * the customers' bounds (customer-bounds.ts) when they are built: at ten million orders (five
 * million customers) this walk is most of a report's time.
 */
export function countCustomers(
  s: Part,
  rows: Rows,
  customerBase: number,
  scan: ScanSettings,
  sums: Float64Array,
  bounds?: CustomerBounds,
): void {
  const { start, end, attributeKey, attributeExcluded, typeKept, byDate, dateKey, needsFirstOrders } = scan;
  // With the customers' first and last counted orders (customer-bounds.ts), a customer without
  // one in the period is passed over, and U2 needs no walk.
  const first = bounds?.first;
  const lastCounted = bounds?.last;
  const startCell = start / CELL_SECONDS;
  const endCell = end / CELL_SECONDS;
  const typeKeys = scan.typeKey;
  const { starts, index, unit, aligned } = scan.buckets;
  const firstStart = starts[0] as number;
  const perUnit = 1 / unit;
  const lastUnit = index.length - 1;
  const { seconds, attribute, runStart, customerCount, retiredRuns } = s;
  const rowsFrom = rows.from;
  const rowsTo = rows.to;
  for (let c = runAt(runStart, customerCount, rowsFrom); c < customerCount; c++) {
    const from = runStart[c] as number;
    if (from >= rowsTo) break; // the runs after the range
    if (retiredRuns !== undefined && retiredRuns[c] === 1) continue;
    const to = runStart[c + 1] as number;
    let i = from > rowsFrom ? from : rowsFrom;
    let type = NEW;
    if (first !== undefined && lastCounted !== undefined) {
      const f = first[c] as number;
      if (f >= endCell || (lastCounted[c] as number) < startCell) continue; // NONE too
      if (needsFirstOrders && f < startCell) type = RETURNING;
    } else if (needsFirstOrders) {
      // U2 on the whole run; the orders before its first counted one are never counted.
      let first = from;
      while (first < to && attributeExcluded[attribute[first] as number] === 1) first++;
      if (first === to) continue;
      if ((seconds[first] as number) < start) type = RETURNING;
      if (first > i) i = first;
    }
    if (typeKept[type] === 0) continue; // F1 on customer_type
    const typeKey = typeKeys[type] as number;
    const customer = customerBase + c + 1; // + 1: a slot's zero means none yet
    const customerField = type === RETURNING ? RETURNING_CUSTOMERS : NEW_CUSTOMERS;
    const last = to < rowsTo ? to : rowsTo;
    for (; i < last; i++) {
      const t = seconds[i] as number;
      if (t >= end) break; // T1, and the run's later orders too
      if (t < start) continue;
      const attributeWeight = attributeKey[attribute[i] as number] as number;
      if (attributeWeight < 0) continue; // S1
      let slot = attributeWeight + typeKey;
      if (byDate) {
        let k = index[Math.min(lastUnit, ((t - firstStart + 0.5) * perUnit) | 0)] as number;
        if (!aligned) while (k + 1 < starts.length && t >= (starts[k + 1] as number)) k++;
        slot += dateKey[k] as number;
      }
      const at = (slot * SLOT) | 0;
      if (sums[at + LAST_CUSTOMER] !== customer) {
        sums[at + LAST_CUSTOMER] = customer;
        sums[at + UNIQUE]! += 1;
        sums[at + customerField]! += 1;
      }
      if (!byDate) break; // every counted order of the run is in the same row
    }
  }
}
