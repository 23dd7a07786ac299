// PC1: a compared plan into one SQL statement: each period grouped on its own (its own U3 start,
// the same filters), the comparison's `date` buckets moved onto the main period's by their index
// k (each counted from the bucket holding its period's first instant, in the request's zone),
// the two joined by every dimension's value, then T3's order, O1's offset and T6's limit on the
// matched rows, in the database.
import type { MetricId } from '../catalog.js';
import {
  bucketDateSql,
  groupedSelect,
  Params,
  rowOrder,
  type CompiledQuery,
  type Context,
} from './compile.js';
import { GRANULARITIES, type Granularity } from './dates.js';
import { netRevenueSql } from './net-revenue.js';
import type { ComparisonPlan, ReportPlan } from './plan.js';

/** The column of a side's metric in the matched rows. */
export const mainColumn = (id: MetricId): string => `m_${id}`;
export const previousColumn = (id: MetricId): string => `p_${id}`;
/** True when the row's main bucket has a k-th comparison bucket (always, without `date`). */
export const HAS_PREVIOUS = 'has_previous';

const months = (day: string): string => `(extract(year FROM ${day}) * 12 + extract(month FROM ${day}))::int`;

/** The bucket of `day` (counted from `from`) moved to the same index counted from `to`. */
function shift(day: string, from: string, to: string, granularity: Granularity): string {
  return granularity === 'day' || granularity === 'week'
    ? `(${to} + (${day} - ${from}))`
    : `(${to} + make_interval(months => ${months(day)} - ${months(from)}))::date`;
}

export function compileComparedReport(
  plan: ReportPlan & { readonly comparison: ComparisonPlan },
): CompiledQuery {
  const params = new Params();
  if (!GRANULARITIES.includes(plan.granularity)) throw new RangeError(`granularity ${plan.granularity}`);
  const organization = params.bind(plan.organizationId, 'bigint');
  const byDate = plan.dimensions.includes('date');
  const timezone = byDate ? params.bind(plan.timezone, 'text') : '';
  const excluded = params.bind(plan.settings.excludedStatuses, 'text[]');
  const side = (period: { readonly periodStart: string; readonly periodEnd: string }) => {
    const context: Context = {
      start: params.bind(period.periodStart, 'timestamptz'),
      timezone,
      net: netRevenueSql(plan.settings.deductions),
      granularity: plan.granularity,
      dateAsDate: true,
      grain: plan.grain,
    };
    const end = params.bind(period.periodEnd, 'timestamptz');
    return { context, end, lines: groupedSelect(plan, params, { organization, context, end, excluded }) };
  };
  const main = side(plan);
  const previous = side(plan.comparison);
  const g = plan.granularity;
  const last = (s: typeof main) => bucketDateSql(`(${s.end} - interval '1 microsecond')`, s.context);
  // The first and last buckets of each period: those holding its first and last instants.
  const frame = `frame AS (SELECT ${bucketDateSql(main.context.start, main.context)} AS m0, ${last(main)} AS mlast, ${bucketDateSql(previous.context.start, previous.context)} AS c0, ${last(previous)} AS clast)`;
  const others = plan.dimensions.filter((id) => id !== 'date');
  const on = [...(byDate ? ['m."date" = p.main_date'] : []), ...others.map((id) => `m."${id}" = p."${id}"`)];
  const dimensions = [
    ...(byDate ? ['coalesce(m."date", p.main_date) AS "date"'] : []),
    ...others.map((id) => `coalesce(m."${id}", p."${id}") AS "${id}"`),
  ];
  const metrics = plan.metrics.flatMap((id) => [
    `m."${id}" AS ${mainColumn(id)}`,
    `p."${id}" AS ${previousColumn(id)}`,
  ]);
  const joined =
    plan.dimensions.length === 0
      ? 'main m CROSS JOIN prev p' // T5: one totals row each
      : byDate
        ? `main m FULL JOIN (SELECT prev.*, ${shift('prev."date"', 'c0', 'm0', g)} AS main_date FROM prev, frame WHERE ${shift('prev."date"', 'c0', 'm0', g)} <= mlast) p ON ${on.join(' AND ')}`
        : `main m FULL JOIN prev p ON ${on.join(' AND ')}`;
  const has = byDate ? `${shift('x."date"', 'm0', 'c0', g)} <= clast` : 'true';
  const output = [
    ...plan.dimensions.flatMap((id) =>
      id === 'date'
        ? [
            `to_char(x."date", 'YYYY-MM-DD') AS "date"`,
            `CASE WHEN ${has} THEN to_char(${shift('x."date"', 'm0', 'c0', g)}, 'YYYY-MM-DD') END AS "date_previous"`,
          ]
        : [`x."${id}"`],
    ),
    ...plan.metrics.flatMap((id) => [
      `coalesce(x.${mainColumn(id)}, 0) AS ${mainColumn(id)}`,
      `coalesce(x.${previousColumn(id)}, 0) AS ${previousColumn(id)}`,
    ]),
    `${has} AS ${HAS_PREVIOUS}`,
  ];
  const offset = plan.offset > 0 ? ` OFFSET ${params.bind(plan.offset, 'integer')}` : '';
  // L7 (a metric key: the main period's value) then T3, on the matched rows.
  const order =
    plan.dimensions.length === 0
      ? ''
      : ` ORDER BY ${rowOrder(plan, mainColumn)} LIMIT ${params.bind(plan.limit + 1, 'integer')}`;
  const sql = [
    `WITH main AS (\n${main.lines.join('\n')}\n),`,
    `prev AS (\n${previous.lines.join('\n')}\n),`,
    ...(byDate ? [`${frame},`] : []),
    `matched AS (SELECT ${[...dimensions, ...metrics].join(', ')} FROM ${joined})`,
    `SELECT * FROM (SELECT ${output.join(', ')} FROM matched x${byDate ? ', frame' : ''}) AS report${order}${offset}`,
  ].join('\n');
  return { sql, params: params.values };
}
