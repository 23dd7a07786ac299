// Step 3: a plan into one SQL statement. Values are always bound parameters; identifiers and
// expressions come only from the fixed tables below (an allow-list keyed by catalog ids).
// Tenancy is enforced here: every statement filters each table by the plan's organization.
import type { DimensionId, MetricId } from '../catalog.js';
import { GRANULARITIES, type Granularity } from './dates.js';
import { FILTER_DIMENSIONS } from './parse.js';
import { netRevenueSql } from './net-revenue.js';
import type { ReportPlan } from './plan.js';

export interface CompiledQuery {
  readonly sql: string;
  readonly params: readonly unknown[];
}

export class Params {
  readonly values: unknown[] = [];
  bind(value: unknown, type: string): string {
    this.values.push(value);
    return `$${this.values.length}::${type}`;
  }
}

export interface Context {
  start: string;
  timezone: string;
  net: string;
  granularity: Granularity;
  /** PC1: the `date` dimension as an SQL date (bucket arithmetic), not its text. */
  dateAsDate?: boolean;
}

/** G2: the local day's bucket as an SQL date (date_trunc's week starts on Monday, ISO). */
export const bucketDateSql = (instant: string, c: Context): string =>
  c.granularity === 'day'
    ? `(${instant} AT TIME ZONE ${c.timezone})::date`
    : `date_trunc('${c.granularity}', ${instant} AT TIME ZONE ${c.timezone})::date`;

const DIMENSION_SQL: Record<DimensionId, (c: Context) => string> = {
  // G2: date_trunc's week starts on Monday (ISO); the unit is one of GRANULARITIES, never the client's text.
  date: (c) =>
    c.dateAsDate
      ? bucketDateSql('o.created_at', c)
      : c.granularity === 'day'
        ? `to_char(o.created_at AT TIME ZONE ${c.timezone}, 'YYYY-MM-DD')`
        : `to_char(date_trunc('${c.granularity}', o.created_at AT TIME ZONE ${c.timezone}), 'YYYY-MM-DD')`,
  store: () => 's.address',
  country: () => `coalesce(o.billing_country, 'Unknown')`,
  // U3: a property of the customer for the whole period.
  customer_type: (c) =>
    `CASE WHEN o.customer IS NULL THEN 'anonymous' WHEN f.first_order_at < ${c.start} THEN 'returning' ELSE 'new' END`,
  status: () => 'o.status',
};

// M1: exact numeric sums, each rounded once at the end (numeric round() is half away from zero).
const money = (sum: string): string => `round(coalesce(sum(${sum}), 0), 2)`;

const METRIC_SQL: Record<MetricId, (c: Context) => string> = {
  orders: () => 'count(*)',
  items_sold: () => 'coalesce(sum(o.items), 0)',
  gross_sales: () => money('o.total'),
  net_revenue: (c) => money(c.net),
  average_order_value: (c) => `CASE WHEN count(*) = 0 THEN 0 ELSE round(sum(${c.net}) / count(*), 2) END`,
  taxes: () => money('o.tax_total'),
  shipping: () => money('o.shipping_total'),
  // U4: anonymous orders (NULL customer) count no customer; new + returning = unique.
  unique_customers: () => 'count(DISTINCT o.customer)',
  new_customers: (c) =>
    `count(DISTINCT o.customer) FILTER (WHERE NOT coalesce(f.first_order_at < ${c.start}, false))`,
  returning_customers: (c) => `count(DISTINCT o.customer) FILTER (WHERE f.first_order_at < ${c.start})`,
};

export function compileReport(plan: ReportPlan): CompiledQuery {
  const params = new Params();
  const organization = params.bind(plan.organizationId, 'bigint');
  if (!GRANULARITIES.includes(plan.granularity)) throw new RangeError(`granularity ${plan.granularity}`);
  const context: Context = {
    start: params.bind(plan.periodStart, 'timestamptz'),
    timezone: plan.dimensions.includes('date') ? params.bind(plan.timezone, 'text') : '',
    net: netRevenueSql(plan.settings.deductions),
    granularity: plan.granularity,
  };
  const end = params.bind(plan.periodEnd, 'timestamptz');
  const excluded = params.bind(plan.settings.excludedStatuses, 'text[]');
  const grouped = groupedSelect(plan, params, { organization, context, end, excluded });
  // O1: the first `offset` rows are skipped, the totals row (T5) included.
  const offset = plan.offset > 0 ? ` OFFSET ${params.bind(plan.offset, 'integer')}` : '';
  if (plan.dimensions.length === 0) return { sql: grouped.join('\n') + offset, params: params.values }; // T5
  // T3: by code point (the "C" collation), first dimension first; T6: one extra row reveals truncation.
  const order = plan.dimensions.map((id) => `"${id}" COLLATE "C"`).join(', ');
  const limit = params.bind(plan.limit + 1, 'integer');
  return {
    sql: `SELECT * FROM (\n${grouped.join('\n')}\n) AS report ORDER BY ${order} LIMIT ${limit}${offset}`,
    params: params.values,
  };
}

/** What one period's grouped statement reads: bound parameters and its context. */
export interface PeriodSql {
  readonly organization: string;
  readonly context: Context;
  readonly end: string;
  readonly excluded: string;
}

/** One period's rows (T1, S1, F1, U3 from its start), grouped by the plan's dimensions. */
export function groupedSelect(plan: ReportPlan, params: Params, period: PeriodSql): string[] {
  const { organization, context, end, excluded } = period;
  const columns = [
    ...plan.dimensions.map((id) => `${DIMENSION_SQL[id](context)} AS "${id}"`),
    ...plan.metrics.map((id) => `${METRIC_SQL[id](context)} AS "${id}"`),
  ];
  // F1: a row's value, as the dimension shows it, is one of the filter's values.
  const filters = FILTER_DIMENSIONS.flatMap((id) => {
    const values = plan.filters[id];
    return values ? [`  AND ${DIMENSION_SQL[id](context)} = ANY (${params.bind(values, 'text[]')})`] : [];
  });
  const from = ['orders o'];
  if (plan.dimensions.includes('store') || plan.filters.store) {
    from.push('JOIN stores s ON s.organization_id = o.organization_id AND s.id = o.store_id');
  }
  if (plan.needsFirstOrders) {
    from.push(
      `LEFT JOIN customer_first_orders f ON f.organization_id = ${organization} AND f.customer = o.customer`,
    );
  }
  const grouped = [
    `SELECT ${columns.join(', ')}`,
    `FROM ${from.join(' ')}`,
    `WHERE o.organization_id = ${organization} AND o.created_at >= ${context.start} AND o.created_at < ${end}`,
    `  AND o.status <> ALL (${excluded})`, // S1
    ...filters,
  ];
  if (plan.dimensions.length > 0) grouped.push(`GROUP BY ${plan.dimensions.map((_, i) => i + 1).join(', ')}`);
  return grouped;
}
