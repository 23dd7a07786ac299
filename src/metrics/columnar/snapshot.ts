// One organization's orders as columns in memory, built from the database (the one source of
// truth) and labelled with the data version it was read at (migration 007).
//
// Layout: the orders of each customer are contiguous ("runs", customers in the order the build
// first saw them), each run in time order, then the anonymous orders. A run lets a report count
// distinct customers per row (U4) in one linear pass, with no customer text kept in memory, and
// its time order puts a customer's first counted order (U2) at or near the run's start.
// An order's store, status and country are one code: the index of that combination among the
// few the organization has, so a report decides filters and row keys with one lookup an order.
// Instants are whole epoch seconds: every boundary a report compares them with (UTC midnights for
// T1, local midnights, first orders) is a whole second, and floor(t) < B ⇔ t < B for a whole B.
import type { Dictionary } from './exact.js';

export interface Snapshot {
  readonly organizationId: string;
  /** organizations.data_version read before the first row: valid while it is still current. */
  readonly version: string;
  readonly orderCount: number;
  /** floor(epoch seconds of created_at), per order. */
  readonly seconds: Float64Array;
  /** Each order's index into `attributes`. */
  readonly attribute: Int32Array;
  readonly attributes: Attributes;
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
  readonly stores: Dictionary;
  readonly statuses: Dictionary;
  readonly countries: Dictionary;
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

/** Memory of one order in a snapshot: the typed columns above plus its share of runStart. */
export const BYTES_PER_ORDER = 8 + 4 * 9 + 4;
