// What a report's pass over a snapshot's orders reads, decided once before it (execute.ts): the
// row keys' weights of each dimension's values, and what the plan counts (T1, S1, S2, F1, U2–U5).
// One type for the passes with and without lines (section 15), which share the walk over the
// counted orders (counted-orders.ts).
import type { DimensionId, MetricId } from '../../catalog.js';
import { dayStartMs } from '../../query/dates.js';
import type { ReportPlan } from '../../query/plan.js';
import type { DayBuckets } from './day-buckets.js';
import { kept } from './kept.js';
import type { Snapshot } from './snapshot.js';

export const CUSTOMER_TYPES = ['anonymous', 'new', 'returning']; // already in T3 order
export const ANONYMOUS = 0;
export const NEW = 1;
export const RETURNING = 2;
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

/** Code → key weight of each line dimension (zeros when not requested). */
export interface LineWeights {
  readonly product: Float64Array;
  readonly productId: Float64Array;
  readonly variant: Float64Array;
  readonly sku: Float64Array;
  readonly category: Float64Array;
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

/** A plan's sums: the keys that occur, in key (T3) order, and each one's slot in `sums`. */
export interface Aggregate {
  readonly weights: KeyWeights;
  readonly sums: Float64Array;
  readonly keys: readonly number[];
  readonly slots: readonly number[];
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
