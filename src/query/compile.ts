// Step 3: a plan into one SQL statement. Values are always bound parameters; identifiers and
// expressions come only from the fixed tables below (an allow-list keyed by catalog ids).
// Tenancy is enforced here: every statement filters each table by the plan's organization.
import {
  atLineGrain,
  dimensionGrain,
  isDimensionId,
  isLineMetric,
  type DimensionId,
  type Grain,
  type LineDimensionId,
  type LineMetricId,
  type MetricId,
} from '../catalog.js';
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
  /** L4: rows made of orders (`o`, with their kept lines summed in `k`) or of lines (`l`). */
  grain: Grain;
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
  ...lineDimensionSql(),
};

/** L2: a missing text value (absent or empty) is the literal `Unknown`, as for `country`. */
const orUnknown = (column: string): string => `coalesce(nullif(${column}, ''), 'Unknown')`;

/** L2, L5: `category` is the unnested `c.category`, one row per category of the line. */
function lineDimensionSql(): Record<LineDimensionId, (c: Context) => string> {
  return {
    product: () => orUnknown('l.product_name'),
    product_id: () => orUnknown('l.product_id'),
    variant: () => orUnknown('l.variant_name'),
    sku: () => orUnknown('l.sku'),
    category: () => 'c.category',
  };
}

/** L5: a line's categories, `Unknown` for a line with none. */
const LINE_CATEGORIES = `CASE WHEN cardinality(l.categories) = 0 THEN ARRAY['Unknown']::text[] ELSE l.categories END`;

/** L3: what each line adds to its row. */
const LINE_VALUES: Record<LineMetricId, string> = {
  units_sold: 'l.quantity - l.refunded_quantity',
  units_refunded: 'l.refunded_quantity',
  product_gross_sales: 'l.subtotal',
  product_discounts: 'l.discount',
  product_refunds: 'l.refunded_amount',
  product_net_sales: 'l.subtotal - l.discount - l.refunded_amount',
};

/** L3 at line grain: each of the row's lines; at order grain: each row order's kept lines, summed in `k`. */
const lineValue = (id: LineMetricId, c: Context): string =>
  c.grain === 'line' ? `(${LINE_VALUES[id]})` : `k."${id}"`;

// M1: exact numeric sums, each rounded once at the end (numeric round() is half away from zero).
const money = (sum: string): string => `round(coalesce(sum(${sum}), 0), 2)`;

/** L4: at line grain an order has one row a line: orders count distinct. */
const orderCount = (c: Context): string =>
  c.grain === 'line' ? 'count(DISTINCT (o.store_id, o.external_id))' : 'count(*)';

const METRIC_SQL: Record<MetricId, (c: Context) => string> = {
  orders: orderCount,
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
  units_sold: (c) => `coalesce(sum(${lineValue('units_sold', c)}), 0)`,
  units_refunded: (c) => `coalesce(sum(${lineValue('units_refunded', c)}), 0)`,
  product_gross_sales: (c) => money(lineValue('product_gross_sales', c)),
  product_discounts: (c) => money(lineValue('product_discounts', c)),
  product_refunds: (c) => money(lineValue('product_refunds', c)),
  product_net_sales: (c) => money(lineValue('product_net_sales', c)),
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
    grain: plan.grain,
  };
  const end = params.bind(plan.periodEnd, 'timestamptz');
  const excluded = params.bind(plan.settings.excludedStatuses, 'text[]');
  const grouped = groupedSelect(plan, params, { organization, context, end, excluded });
  // O1: the first `offset` rows are skipped, the totals row (T5) included.
  const offset = plan.offset > 0 ? ` OFFSET ${params.bind(plan.offset, 'integer')}` : '';
  if (plan.dimensions.length === 0) return { sql: grouped.join('\n') + offset, params: params.values }; // T5
  // T6: one extra row reveals truncation.
  const limit = params.bind(plan.limit + 1, 'integer');
  return {
    sql: `SELECT * FROM (\n${grouped.join('\n')}\n) AS report ORDER BY ${rowOrder(plan)} LIMIT ${limit}${offset}`,
    params: params.values,
  };
}

/**
 * L7 then T3: `sort`'s keys (metrics as numbers, dimensions by code point, the "C" collation), then
 * every dimension in request order for the remaining ties. `metricColumn` names a metric's column
 * (PC1: the main period's).
 */
export function rowOrder(
  plan: ReportPlan,
  metricColumn: (id: MetricId) => string = (id) => `"${id}"`,
): string {
  const dimension = (id: DimensionId) => `"${id}" COLLATE "C"`;
  const keys = plan.sort.map(
    ({ id, descending }) =>
      `${isDimensionId(id) ? dimension(id) : metricColumn(id)}${descending ? ' DESC' : ''}`,
  );
  return [...keys, ...plan.dimensions.map(dimension)].join(', ');
}

/** What one period's grouped statement reads: bound parameters and its context. */
export interface PeriodSql {
  readonly organization: string;
  readonly context: Context;
  readonly end: string;
  readonly excluded: string;
}

/** An order's lines, joined by the order's key within the organization (tenancy). */
const linesOf = (organization: string): string =>
  `l.organization_id = ${organization} AND l.store_id = o.store_id AND l.external_id = o.external_id`;

/**
 * L6: the conditions a line must meet to be kept, one per line filter. `category` keeps a line one
 * of whose categories (or `Unknown` for none) is among the values; with the `category` dimension,
 * only the rows of those categories.
 */
function keptLineConditions(plan: ReportPlan, params: Params, context: Context): string[] {
  const unnested = plan.dimensions.includes('category');
  return FILTER_DIMENSIONS.flatMap((id) => {
    const values = plan.filters[id];
    if (!values || dimensionGrain(id) !== 'line') return [];
    const bound = params.bind(values, 'text[]');
    if (id === 'category' && !unnested)
      return [`(l.categories && ${bound} OR (cardinality(l.categories) = 0 AND 'Unknown' = ANY (${bound})))`];
    return [`${DIMENSION_SQL[id](context)} = ANY (${bound})`];
  });
}

/**
 * L4: at line grain, one row per line (per category of the line with the `category` dimension, L5);
 * at order grain, one row per order with its kept lines' sums in `k`, when lines are read.
 */
function lineSources(plan: ReportPlan, organization: string, kept: readonly string[]): string[] {
  if (plan.grain === 'line') {
    const joins = [`JOIN order_lines l ON ${linesOf(organization)}`];
    if (plan.dimensions.includes('category'))
      joins.push(`CROSS JOIN LATERAL unnest(${LINE_CATEGORIES}) AS c(category)`);
    return joins;
  }
  if (!plan.readsLines) return [];
  const sums = plan.metrics.filter(isLineMetric).map((id) => `, sum(${LINE_VALUES[id]}) AS "${id}"`);
  const where = [linesOf(organization), ...kept].join(' AND ');
  return [
    `CROSS JOIN LATERAL (SELECT count(*) AS kept${sums.join('')} FROM order_lines l WHERE ${where}) AS k`,
  ];
}

/** One period's rows (T1, S1, F1, L6, U3 from its start), grouped by the plan's dimensions. */
export function groupedSelect(plan: ReportPlan, params: Params, period: PeriodSql): string[] {
  const { organization, context, end, excluded } = period;
  if (context.grain !== plan.grain) throw new RangeError(`grain ${context.grain}`);
  const refused =
    plan.grain === 'line' ? plan.metrics.filter((id) => atLineGrain(id).kind === 'refused') : [];
  if (refused.length > 0) throw new RangeError(`at line grain: ${refused.join(', ')}`); // L4, parse refuses them
  const columns = [
    ...plan.dimensions.map((id) => `${DIMENSION_SQL[id](context)} AS "${id}"`),
    ...plan.metrics.map((id) => `${METRIC_SQL[id](context)} AS "${id}"`),
  ];
  // F1: a row's value, as the dimension shows it, is one of the filter's values.
  const filters = FILTER_DIMENSIONS.flatMap((id) => {
    const values = plan.filters[id];
    if (!values || dimensionGrain(id) !== 'order') return [];
    return [`  AND ${DIMENSION_SQL[id](context)} = ANY (${params.bind(values, 'text[]')})`];
  });
  const kept = keptLineConditions(plan, params, context);
  const from = ['orders o', ...lineSources(plan, organization, kept)];
  if (plan.dimensions.includes('store') || plan.filters.store) {
    from.push('JOIN stores s ON s.organization_id = o.organization_id AND s.id = o.store_id');
  }
  if (plan.needsFirstOrders) {
    from.push(
      `LEFT JOIN customer_first_orders f ON f.organization_id = ${organization} AND f.customer = o.customer`,
    );
  }
  // L6: line rows are the kept lines; at order grain, an order is kept when one of its lines is.
  const keptRows =
    plan.grain === 'line'
      ? kept.map((condition) => `  AND ${condition}`)
      : kept.length > 0
        ? ['  AND k.kept > 0']
        : [];
  const grouped = [
    `SELECT ${columns.join(', ')}`,
    `FROM ${from.join(' ')}`,
    `WHERE o.organization_id = ${organization} AND o.created_at >= ${context.start} AND o.created_at < ${end}`,
    `  AND o.status <> ALL (${excluded})`, // S1
    ...filters,
    ...keptRows,
  ];
  if (plan.dimensions.length > 0) grouped.push(`GROUP BY ${plan.dimensions.map((_, i) => i + 1).join(', ')}`);
  return grouped;
}
