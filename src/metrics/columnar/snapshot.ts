// One organization's orders as columns in memory, built from the database (the one source of
// truth) and labelled with the data version it was read at (migration 007), then kept current
// by deltas (issue 19, migration 012).
//
// A snapshot is a list of parts (as ClickHouse's MergeTree keeps parts): the first one read by a
// full build, each later one written by a delta, and folded together again by compaction. In a
// part, the orders of each customer are contiguous ("runs", in time order), then the anonymous
// orders. A run lets a report count distinct customers per row (U4) in one linear pass, with no
// customer text kept in the columns, and its time order puts a customer's first counted order
// (U2) at or near the run's start. A customer's current orders are all in one run of one part: a
// delta that touches a customer retires the run it had (a validity flag, as Apache Pinot's
// upserts keep a validity bitmap per segment) and writes all of the customer's orders again in
// its own part, so U2 and U4 never look across parts. An anonymous order is retired on its own.
// An order's store, status and country are one code: the index of that combination among the
// few the organization has (shared by all parts), so a report decides filters and row keys with
// one lookup an order. Instants are whole epoch seconds: every boundary a report compares them
// with (UTC midnights for T1, local midnights, first orders) is a whole second, and
// floor(t) < B ⇔ t < B for a whole B.
import type { Dictionary } from './exact.js';
import type { LineItems } from './line-codes.js';
import { BYTES_PER_LINE, type PartLines } from './line-columns.js';

export interface Part {
  readonly orderCount: number;
  /** floor(epoch seconds of created_at), per order. */
  readonly seconds: Float64Array;
  /** Each order's index into the snapshot's `attributes`. */
  readonly attribute: Int32Array;
  readonly items: Int32Array;
  /** Exact integer cents of each amount column (M1). */
  readonly total: Int32Array;
  readonly taxTotal: Int32Array;
  readonly shippingTotal: Int32Array;
  readonly feeTotal: Int32Array;
  readonly refundTotal: Int32Array;
  readonly refundTax: Int32Array;
  readonly refundShipping: Int32Array;
  /** Orders [runStart[c], runStart[c + 1]) belong to customer c; [runStart[customerCount], orderCount) are anonymous. */
  readonly runStart: Int32Array;
  readonly customerCount: number;
  /** 1 for each run whose customer's orders are elsewhere now (or gone); undefined: none. */
  readonly retiredRuns: Uint8Array | undefined;
  /**
   * 1 for each of the part's orders retired: every order of a retired run, and each anonymous
   * order (from runStart[customerCount]) replaced or deleted; undefined: none. A walk over all the
   * orders that tells no customers apart skips them by it (counted-orders.ts), without the runs.
   */
  readonly retiredOrders: Uint8Array | undefined;
  /** Each run's customer, as a code of the live snapshot's customer dictionary. */
  readonly runCustomer: Int32Array;
  /** Each anonymous order's key (store and external id), as a code of the live snapshot's. */
  readonly anonymousKey: Int32Array;
  /** Section 15: each order's lines, after it in the part's order. */
  readonly lines: PartLines;
  readonly bytes: number;
}

/** What a report reads: the parts and dictionaries at one data version, never changed afterwards. */
export interface Snapshot {
  readonly organizationId: string;
  /** organizations.data_version this snapshot holds every committed change of. */
  readonly version: string;
  readonly parts: readonly Part[];
  readonly attributes: Attributes;
  readonly stores: Dictionary;
  readonly statuses: Dictionary;
  readonly countries: Dictionary;
  /** Section 15: the lines' products, variants, SKUs and categories, combined as items. */
  readonly lineItems: LineItems;
  readonly bytes: number;
}

/** The combinations of store, status and country the orders have: codes in the dictionaries. */
export interface Attributes {
  readonly count: number;
  readonly store: Int32Array;
  readonly status: Int32Array;
  /** coalesce(billing_country, 'Unknown'), as the SQL engine shows it. */
  readonly country: Int32Array;
}

/** Memory of one order in a part: the typed columns above plus its share of runStart. */
/** The orders a snapshot's parts hold, replaced ones included. */
export function heldOrders(parts: readonly Part[]): number {
  let n = 0;
  for (const part of parts) n += part.orderCount;
  return n;
}

export const BYTES_PER_ORDER = 8 + 4 * 9 + 4;
/**
 * Memory of one customer beside the columns: its key in the dictionary (33 bytes packed, its
 * place, length and hash, its table slot), its run and its place in the live snapshot. Issue 29:
 * measured on built snapshots of 2,000, 8,000 and 20,000 orders, each of its own customer: 101, 102
 * and 86 bytes a customer beyond the orders' 52 (the tables grow by halves and doubles); rounded
 * up, so that the estimate before a build (snapshot-size.ts) is not under the snapshot.
 */
export const BYTES_PER_CUSTOMER = 108;

/** A part's columns before any of its orders is retired, and before its memory is counted. */
export type PartColumns = Omit<Part, 'retiredRuns' | 'retiredOrders' | 'bytes'>;

/**
 * A part as a full build, a fold or a saved file makes it: nothing retired yet, and its memory
 * counted one way for all three. `allocated`: the orders its arrays were sized for, when more
 * than it holds (a build's columns are views over larger arrays). The fields are written in one
 * order, so that every part has the same shape for the scan's hot loop.
 */
export function freshPart(c: PartColumns, allocated: number = c.orderCount): Part {
  return {
    orderCount: c.orderCount,
    seconds: c.seconds,
    attribute: c.attribute,
    items: c.items,
    total: c.total,
    taxTotal: c.taxTotal,
    shippingTotal: c.shippingTotal,
    feeTotal: c.feeTotal,
    refundTotal: c.refundTotal,
    refundTax: c.refundTax,
    refundShipping: c.refundShipping,
    runStart: c.runStart,
    customerCount: c.customerCount,
    retiredRuns: undefined,
    retiredOrders: undefined,
    runCustomer: c.runCustomer,
    anonymousKey: c.anonymousKey,
    lines: c.lines,
    bytes:
      allocated * (BYTES_PER_ORDER - 4) +
      c.runStart.length * 8 +
      c.anonymousKey.length * 4 +
      c.lines.lineStart.length * 4 +
      c.lines.count * BYTES_PER_LINE,
  };
}
