// Step 2: a checked query and the authenticated organization's settings into a plan that says
// exactly what to compute. Pure, so a plan can be shown without a database (a dry run).
import {
  dimensionGrain,
  metricGrain,
  type DimensionId,
  type Grain,
  type MetricId,
  type ReportSettings,
} from '../catalog.js';
import type { Comparison } from './compare.js';
import { addDays, dayStart, type Granularity } from './dates.js';
import type { Filters, SortKey, TabularQuery } from './parse.js';

export interface ReportPlan {
  /** Tenancy: the compiler filters every statement by this id. */
  readonly organizationId: string;
  readonly dimensions: readonly DimensionId[];
  readonly metrics: readonly MetricId[];
  /** T1: orders with periodStart ≤ created_at < periodEnd, instants in UTC. */
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly timezone: string;
  readonly limit: number;
  /** F1: values each filtered dimension must have (AND across dimensions). */
  readonly filters: Filters;
  /** G2: the `date` dimension's bucket. */
  readonly granularity: Granularity;
  /** O1: rows skipped in T3 order before `limit`. */
  readonly offset: number;
  readonly settings: ReportSettings;
  /** Customer type (U3) needs each customer's first counted order. */
  readonly needsFirstOrders: boolean;
  /**
   * PC1: the comparison period, computed on its own (its own U3 start, the same filters); the
   * engine then answers matched rows (src/metrics/compared-rows.ts).
   */
  readonly comparison?: ComparisonPlan;
  /** L4: `line` when a line dimension is asked: rows are made of lines. */
  readonly grain: Grain;
  /** L3, L6: a line metric or a line filter is asked: the order lines are read. */
  readonly readsLines: boolean;
  /** L7: the row order's keys before T3's (none: T3 alone). */
  readonly sort: readonly SortKey[];
  /**
   * organizations.data_version read after the request arrived (with its key, ApiCaller): the
   * answer holds every change up to it (X1), and the engine need not read it again (issue 29,
   * item 2: a round trip fewer). Undefined: the engine reads it.
   */
  readonly dataVersion?: string;
}

/** PC1: the comparison period as the echo shows it, and its instants as T1 reads them. */
export interface ComparisonPlan extends Comparison {
  readonly periodStart: string;
  readonly periodEnd: string;
}

/** T1's instants of a period of UTC days. */
const instants = (period: { readonly from: string; readonly to: string }) => ({
  periodStart: dayStart(period.from),
  periodEnd: dayStart(addDays(period.to, 1)),
});

const FIRST_ORDER_METRICS: ReadonlySet<MetricId> = new Set(['new_customers', 'returning_customers']);

/** The plan of a query; `dataVersion`: the organization's, read after the request arrived. */
export function planReport(
  query: TabularQuery,
  organization: { readonly id: string; readonly settings: ReportSettings },
  dataVersion?: string,
): ReportPlan {
  return {
    organizationId: organization.id,
    dimensions: query.dimensions,
    metrics: query.metrics,
    ...instants(query),
    timezone: query.timezone,
    limit: query.limit,
    filters: query.filters,
    granularity: query.granularity,
    offset: query.offset,
    settings: organization.settings,
    needsFirstOrders:
      query.dimensions.includes('customer_type') ||
      query.filters.customer_type !== undefined ||
      query.metrics.some((m) => FIRST_ORDER_METRICS.has(m)),
    ...(query.comparison ? { comparison: { ...query.comparison, ...instants(query.comparison) } } : {}),
    grain: query.dimensions.some((id) => dimensionGrain(id) === 'line') ? 'line' : 'order',
    readsLines:
      query.dimensions.some((id) => dimensionGrain(id) === 'line') ||
      query.metrics.some((id) => metricGrain(id) === 'line') ||
      Object.keys(query.filters).some((id) => dimensionGrain(id as DimensionId) === 'line'),
    sort: query.sort ?? [],
    ...(dataVersion === undefined ? {} : { dataVersion }),
  };
}
