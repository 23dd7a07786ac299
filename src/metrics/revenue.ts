// The web application's Reports → Revenue page: one row per UTC day of the period and a totals
// row, in one SQL statement. Net revenue comes from the API's own definition (S2, S3), so the two
// agree to the cent: same period (T1), same excluded statuses (S1), sums exact and each rounded
// once (M1). The totals are rounded from the exact sums, never added from the rounded days.
import type { ReportSettings } from '../catalog.js';
import type { Queryable } from '../db/database.js';
import { addDays, dayStart } from '../query/dates.js';
import { requirePeriod } from '../query/period.js';
import { netRevenueSql } from '../query/net-revenue.js';

export interface RevenueDay {
  /** The UTC day, YYYY-MM-DD. */
  date: string;
  orders: number;
  /** Sum of `total`. */
  grossSales: number;
  /** Sum of `refund_total` (the whole refunded amount, its tax and shipping parts included). */
  refunds: number;
  /** Sum of `tax_total`. */
  taxes: number;
  /** Sum of `shipping_total`. */
  shipping: number;
  /** Sum of `fee_total`. */
  fees: number;
  /** Sum of net(order) with the organization's deductions (S2). */
  netRevenue: number;
}

export interface RevenueReport {
  /** The period used: `from` is moved up to the two-year cap like the API's (P4). */
  from: string;
  to: string;
  /** Every UTC day of [from, to] in order, zeros for days without counted orders. */
  days: RevenueDay[];
  totals: Omit<RevenueDay, 'date'>;
}

// M1: numeric sums are exact; round(numeric, 2) rounds half away from zero, once.
const money = (sum: string): string => `round(coalesce(${sum}, 0), 2)`;

/**
 * The per-day revenue table of the organization for the UTC days [from, to] (T1). Days are joined
 * to a generated calendar so that every day appears; GROUPING SETS adds the totals row, summed
 * from the exact daily sums. Every value is a bound parameter; only the fixed net revenue
 * expression (from the deduction names) is written into the statement.
 */
export async function revenueReport(
  db: Queryable,
  organization: { readonly id: string; readonly settings: ReportSettings },
  from: string,
  to: string,
): Promise<RevenueReport> {
  // The API's own rules (P3, P4): a bad day or order is its INVALID_PARAMETER; at most two years.
  const { from: first } = requirePeriod(from, to);

  const net = netRevenueSql(organization.settings.deductions, 'o');
  const sql = `
WITH calendar AS (
  SELECT $2::date + g.n AS day FROM generate_series(0, $3::date - $2::date) AS g(n)
), per_day AS (
  SELECT (o.created_at AT TIME ZONE 'UTC')::date AS day,
    count(*) AS orders,
    sum(o.total) AS gross_sales,
    sum(o.refund_total) AS refunds,
    sum(o.tax_total) AS taxes,
    sum(o.shipping_total) AS shipping,
    sum(o.fee_total) AS fees,
    sum(${net}) AS net_revenue
  FROM orders o
  WHERE o.organization_id = $1::bigint
    AND o.created_at >= $4::timestamptz AND o.created_at < $5::timestamptz
    AND o.status <> ALL ($6::text[])
  GROUP BY 1
)
SELECT to_char(c.day, 'YYYY-MM-DD') AS date,
  coalesce(sum(p.orders), 0)::bigint AS orders,
  ${money('sum(p.gross_sales)')} AS gross_sales,
  ${money('sum(p.refunds)')} AS refunds,
  ${money('sum(p.taxes)')} AS taxes,
  ${money('sum(p.shipping)')} AS shipping,
  ${money('sum(p.fees)')} AS fees,
  ${money('sum(p.net_revenue)')} AS net_revenue
FROM calendar c LEFT JOIN per_day p ON p.day = c.day
GROUP BY GROUPING SETS ((c.day), ())
ORDER BY GROUPING(c.day), c.day`;
  const rows = await db.query(sql, [
    organization.id,
    first,
    to,
    dayStart(first),
    dayStart(addDays(to, 1)),
    organization.settings.excludedStatuses,
  ]);

  const days: RevenueDay[] = [];
  let totals: Omit<RevenueDay, 'date'> | undefined;
  for (const row of rows) {
    const figures = {
      orders: Number(row.orders),
      grossSales: Number(row.gross_sales),
      refunds: Number(row.refunds),
      taxes: Number(row.taxes),
      shipping: Number(row.shipping),
      fees: Number(row.fees),
      netRevenue: Number(row.net_revenue),
    };
    if (row.date === null) totals = figures;
    else days.push({ date: String(row.date), ...figures });
  }
  if (totals === undefined) throw new Error('Revenue report: the totals row is missing');
  return { from: first, to, days, totals };
}
