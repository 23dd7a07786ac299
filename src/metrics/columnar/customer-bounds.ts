// Each customer's first and last counted order of a large part (issue 28, item 2), kept per set
// of excluded statuses (S1) beside its quarter-hour sums (cell-sums.ts). A report whose additive
// sums come from the cells still counted its customers (U2–U5) by walking every customer's run:
// at ten million orders, five million runs, about 200 ms a report and nearly all of its time.
// Without `date`, a customer counts in the period's one row when one of their counted orders lies
// in it, and is new when the first one does (U2, U3), so the bounds settle nearly every customer
// with two comparisons:
// - first counted order at or after the period's end, or last one before its start: not counted;
// - first one within the period: counted, new;
// - first before the period and last within it: counted, returning;
// - first before and last after (orders around the period): their run is read, as before.
// The bounds are quarter-hour cells (floor(t / 900)): the period's ends are on quarter hours
// whenever the cells serve a report, so comparing cells compares instants exactly. Built like the
// cells: on first use, in slices, in the background of the report that asked (which walks the runs
// meanwhile), held as long as the part's columns, computed with every run, retired ones included
// (a report skips those, as the walk does).
import type { TimeSlices } from '../../limits/time-slice.js';
import { CELL_SECONDS } from './cell-sums.js';
import { PartTables } from './part-tables.js';
import { NEW, RETURNING, type ScanSettings } from './scan-settings.js';
import { LAST_CUSTOMER, NEW_CUSTOMERS, RETURNING_CUSTOMERS, SLOT, UNIQUE } from './slot-layout.js';
import type { Part } from './snapshot.js';

/** A customer without any counted order: first cell past every period. */
const NONE = 0x7fffffff;
/** Customers a build or a report reads before it looks at its time slice. */
export const CUSTOMERS_PER_SLICE = 1 << 17;

export interface CustomerBounds {
  /** The quarter-hour cell of each customer's first counted order (S1), NONE without one. */
  readonly first: Int32Array;
  /** The cell of each customer's last counted order (0, never read, for NONE). */
  readonly last: Int32Array;
}

/**
 * Each part's bounds: those of the set of excluded statuses last asked (8 bytes a customer, up to
 * a sixth of a part whose customers each have one order: not kept twice, unlike the cells).
 */
const tables = new PartTables<CustomerBounds>(1);

/** The part's bounds for these excluded statuses if built already, else undefined, their build started. */
export function readyCustomerBounds(
  part: Part,
  excluded: Uint8Array,
  settings: string,
  slices: TimeSlices,
): CustomerBounds | undefined {
  return tables.ready(part, settings, () => build(part, excluded, slices));
}

/** The part's bounds for these excluded statuses (`excluded`: 1 per attribute S1 excludes). */
export function customerBounds(
  part: Part,
  excluded: Uint8Array,
  settings: string,
  slices: TimeSlices,
): Promise<CustomerBounds> {
  return tables.of(part, settings, () => build(part, excluded, slices));
}

async function build(part: Part, excluded: Uint8Array, slices: TimeSlices): Promise<CustomerBounds> {
  const { seconds, attribute, runStart, customerCount } = part;
  const first = new Int32Array(customerCount);
  const last = new Int32Array(customerCount);
  for (let c0 = 0; c0 < customerCount; c0 += CUSTOMERS_PER_SLICE) {
    const c1 = Math.min(customerCount, c0 + CUSTOMERS_PER_SLICE);
    for (let c = c0; c < c1; c++) {
      const from = runStart[c] as number;
      const to = runStart[c + 1] as number;
      let i = from;
      while (i < to && excluded[attribute[i] as number] === 1) i++;
      if (i === to) {
        first[c] = NONE;
        continue;
      }
      let j = to - 1;
      while (excluded[attribute[j] as number] === 1) j--;
      first[c] = Math.floor((seconds[i] as number) / CELL_SECONDS);
      last[c] = Math.floor((seconds[j] as number) / CELL_SECONDS);
    }
    await slices.pause();
  }
  return { first, last };
}

/**
 * Customers [c0, c1) of the part into the period's one row (no `date`, no filter: the cells'
 * conditions), as countOrders counts them (U2–U5), retired runs skipped; numbered from
 * `customerBase` as the walk numbers them.
 */
export function countBoundedCustomers(
  part: Part,
  bounds: CustomerBounds,
  c0: number,
  c1: number,
  customerBase: number,
  scan: ScanSettings,
  sums: Float64Array,
): void {
  const { start, end, attributeKey, typeKept, needsFirstOrders } = scan;
  const startCell = start / CELL_SECONDS;
  const endCell = end / CELL_SECONDS;
  const { first, last } = bounds;
  const { seconds, attribute, runStart, retiredRuns } = part;
  for (let c = c0; c < c1; c++) {
    const f = first[c] as number;
    if (f >= endCell) continue; // none counted, or all after the period (NONE too)
    const l = last[c] as number;
    if (l < startCell) continue; // all before the period
    if (retiredRuns !== undefined && retiredRuns[c] === 1) continue;
    const type = needsFirstOrders && f < startCell ? RETURNING : NEW;
    if (typeKept[type] === 0) continue; // F1 on customer_type
    if (f < startCell && l >= endCell) {
      // Orders before and after the period: is one of the counted ones within it?
      let within = false;
      for (let i = runStart[c] as number; i < (runStart[c + 1] as number); i++) {
        const t = seconds[i] as number;
        if (t >= end) break;
        if (t >= start && (attributeKey[attribute[i] as number] as number) >= 0) {
          within = true;
          break;
        }
      }
      if (!within) continue;
    }
    const at = ((scan.typeKey[type] as number) * SLOT) | 0;
    const customer = customerBase + c + 1;
    if (sums[at + LAST_CUSTOMER] === customer) continue;
    sums[at + LAST_CUSTOMER] = customer;
    sums[at + UNIQUE]! += 1;
    sums[at + (type === RETURNING ? RETURNING_CUSTOMERS : NEW_CUSTOMERS)]! += 1;
  }
}
