// The additive sums of a large part, kept per quarter hour (issue 28, item 2): for each 15-minute
// cell of UTC time, the counted orders (S1) of the part and their items and amounts, summed once.
// A report with no filter (F1) and no dimension but `date` then adds up cells instead of reading
// every order's nine columns: every boundary it compares instants with is on a quarter hour (T1's
// UTC midnights, and the local midnights of the zones whose days start on one), so a cell lies in
// one row or none. The sums are of exact integers (cents, M1) below 2^53 (the snapshot's
// guarantee), hence exact in any order; net revenue (S2) is linear in the amounts, so the cells'
// sums give it exactly. Distinct customers (U4) are not additive: they are counted from each
// customer's first and last counted orders (customer-bounds.ts), or from their runs
// (counted-orders.ts, countCustomers), reading only instants and attributes.
//
// A table is built on first use (a pass over the part, in slices: issue 26, item 6), in the
// background of the report that asked (which scans the orders meanwhile), held as long
// as the part's columns are (a part's columns never change: a delta retires runs and orders with
// flags, on a copy of the part that shares them), and computed with every order of the part,
// retired ones included: a report takes the retired orders out again (addCells).
import type { TimeSlices } from '../../limits/time-slice.js';
import { ranges } from './order-ranges.js';
import { PartTables } from './part-tables.js';
import type { ScanSettings } from './scan-settings.js';
// A row slot's fields (slot-layout.ts) by their namespace here.
import * as field from './slot-layout.js';
import type { Part } from './snapshot.js';

export const CELL_SECONDS = 900;
// A cell's fields, at cell × FIELDS.
export const ORDERS = 0;
export const ITEMS = 1;
export const TOTAL = 2;
export const TAX = 3;
export const SHIPPING = 4;
export const FEE = 5;
export const REFUND = 6;
export const REFUND_TAX = 7;
export const REFUND_SHIPPING = 8;
export const FIELDS = 9;

export interface CellSums {
  /** Epoch seconds / CELL_SECONDS of the first cell: the part's earliest order's. */
  readonly firstCell: number;
  readonly cells: number;
  /** cells × FIELDS sums of the orders counted under the statuses excluded when it was built. */
  readonly sums: Float64Array;
}

/** Each part's tables: one for each set of excluded statuses (S1) recently asked, the last two. */
const tables = new PartTables<CellSums | undefined>(2);

/**
 * The part's table for these excluded statuses if it is built already, else undefined, its build
 * started in the background (issue 28): a report never waits for a table, so the first report on
 * a snapshot is not slower than a scan of its orders, and the next ones add up cells.
 */
export function readyCellSums(
  part: Part,
  excluded: Uint8Array,
  settings: string,
  maxCells: number,
  scanOrders: number,
  slices: TimeSlices,
): CellSums | undefined {
  return tables.ready(part, settings, () => build(part, excluded, maxCells, scanOrders, slices));
}

/**
 * The part's table for these excluded statuses (`excluded`: 1 per attribute whose status S1
 * excludes, `settings`: a key naming that set), or undefined when the part's orders span more
 * than `maxCells` cells (then the scan reads the orders, as before).
 */
export function cellSums(
  part: Part,
  excluded: Uint8Array,
  settings: string,
  maxCells: number,
  scanOrders: number,
  slices: TimeSlices,
): Promise<CellSums | undefined> {
  return tables.of(part, settings, () => build(part, excluded, maxCells, scanOrders, slices));
}

async function build(
  part: Part,
  excluded: Uint8Array,
  maxCells: number,
  scanOrders: number,
  slices: TimeSlices,
): Promise<CellSums | undefined> {
  const { seconds, orderCount } = part;
  if (orderCount === 0) return undefined;
  let [low, high] = [Infinity, -Infinity];
  for (const rows of ranges(orderCount, scanOrders * 4)) {
    for (let i = rows.from; i < rows.to; i++) {
      const t = seconds[i] as number;
      if (t < low) low = t;
      if (t > high) high = t;
    }
    await slices.pause();
  }
  const firstCell = Math.floor(low / CELL_SECONDS);
  const cells = Math.floor(high / CELL_SECONDS) - firstCell + 1;
  if (cells > maxCells) return undefined;
  const sums = new Float64Array(cells * FIELDS);
  const { attribute, items, total, taxTotal, shippingTotal, feeTotal } = part;
  const { refundTotal, refundTax, refundShipping } = part;
  for (const rows of ranges(orderCount, scanOrders)) {
    for (let i = rows.from; i < rows.to; i++) {
      if (excluded[attribute[i] as number] === 1) continue; // S1
      const at = (Math.floor((seconds[i] as number) / CELL_SECONDS) - firstCell) * FIELDS;
      sums[at + ORDERS]! += 1;
      sums[at + ITEMS]! += items[i] as number;
      sums[at + TOTAL]! += total[i] as number;
      sums[at + TAX]! += taxTotal[i] as number;
      sums[at + SHIPPING]! += shippingTotal[i] as number;
      sums[at + FEE]! += feeTotal[i] as number;
      sums[at + REFUND]! += refundTotal[i] as number;
      sums[at + REFUND_TAX]! += refundTax[i] as number;
      sums[at + REFUND_SHIPPING]! += refundShipping[i] as number;
    }
    await slices.pause();
  }
  return { firstCell, cells, sums };
}

/**
 * Adds the table's cells within the period (T1) into the plan's rows: the slot of the cell's
 * local day (G2) with `date`, else the one row; then takes out the part's retired orders (their
 * runs and anonymous orders, issue 19), which the table holds and the part no longer does.
 */
export function addCells(part: Part, table: CellSums, scan: ScanSettings, out: Float64Array): void {
  const { firstCell, cells, sums } = table;
  const from = Math.max(0, scan.start / CELL_SECONDS - firstCell);
  const to = Math.min(cells, scan.end / CELL_SECONDS - firstCell);
  for (let c = from; c < to; c++) {
    const at = c * FIELDS;
    if (sums[at + ORDERS] === 0) continue;
    add(scan, out, slotOf(scan, (firstCell + c) * CELL_SECONDS), sums, at, 1);
  }
  const { retiredOrders } = part;
  if (!retiredOrders) return;
  for (let i = 0; i < retiredOrders.length; i++) {
    if (retiredOrders[i] !== 1) continue;
    const t = part.seconds[i] as number;
    if (t < scan.start || t >= scan.end || scan.attributeExcluded[part.attribute[i] as number] === 1)
      continue;
    add(scan, out, slotOf(scan, t), orderSums(part, i), 0, -1);
  }
}

/** The row slot of an instant of the period: its local day's with `date` (as counted-orders.ts finds it), else 0. */
function slotOf(scan: ScanSettings, t: number): number {
  if (!scan.byDate) return 0;
  const { starts, index, unit, aligned } = scan.buckets;
  let k = index[Math.min(index.length - 1, ((t - (starts[0] as number) + 0.5) / unit) | 0)] as number;
  if (!aligned) while (k + 1 < starts.length && t >= (starts[k + 1] as number)) k++;
  return scan.dateKey[k] as number;
}

/** One order's fields, as a cell of its own. */
function orderSums(part: Part, i: number): Float64Array {
  const one = new Float64Array(FIELDS);
  one[ORDERS] = 1;
  one[ITEMS] = part.items[i] as number;
  one[TOTAL] = part.total[i] as number;
  one[TAX] = part.taxTotal[i] as number;
  one[SHIPPING] = part.shippingTotal[i] as number;
  one[FEE] = part.feeTotal[i] as number;
  one[REFUND] = part.refundTotal[i] as number;
  one[REFUND_TAX] = part.refundTax[i] as number;
  one[REFUND_SHIPPING] = part.refundShipping[i] as number;
  return one;
}

/** A cell's sums (times `sign`) into a row's slot, net revenue (S2) from its amounts. */
function add(
  scan: ScanSettings,
  out: Float64Array,
  slot: number,
  sums: Float64Array,
  at: number,
  sign: number,
): void {
  const { refunds, taxes, shipping, fees } = scan;
  const base = slot * field.SLOT;
  const total = sums[at + TOTAL] as number;
  const tax = sums[at + TAX] as number;
  const ship = sums[at + SHIPPING] as number;
  out[base + field.ORDERS]! += sign * (sums[at + ORDERS] as number);
  out[base + field.ITEMS]! += sign * (sums[at + ITEMS] as number);
  out[base + field.GROSS]! += sign * total;
  out[base + field.TAXES]! += sign * tax;
  out[base + field.SHIPPING]! += sign * ship;
  // S2, as counted-orders.ts writes it for one order: each term present with its deduction.
  out[base + field.NET]! +=
    sign *
    (total -
      refunds * (sums[at + REFUND] as number) -
      taxes * (tax - refunds * (sums[at + REFUND_TAX] as number)) -
      shipping * (ship - refunds * (sums[at + REFUND_SHIPPING] as number)) -
      fees * (sums[at + FEE] as number));
}
