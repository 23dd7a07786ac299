// The web application's Reports → Revenue page: one row per UTC day of the period and a totals
// row, computed by the report engine the API uses (S3: no second money path), so the two agree to
// the cent and the page is as fast as the API: same period (T1), same excluded statuses (S1), net
// revenue by the one definition (S2), sums exact and rounded once (M1).
import type { Deduction, MetricId, ReportSettings } from '../catalog.js';
import { addDays } from '../query/dates.js';
import { MAX_LIMIT, NO_EXTENSIONS } from '../query/parse.js';
import { requirePeriod } from '../query/period.js';
import { planReport } from '../query/plan.js';
import type { ReportEngine, ReportRow } from './engine.js';

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

type Figures = Omit<RevenueDay, 'date'>;
const FIGURES: readonly (keyof Figures)[] = [
  'orders',
  'grossSales',
  'refunds',
  'taxes',
  'shipping',
  'fees',
  'netRevenue',
];

// Every amount has two decimals, so each engine figure is a whole number of cents: differences
// and totals are worked in integer cents, never as binary fractions.
const cents = (amount: unknown): number => Math.round(Number(amount ?? 0) * 100);

/**
 * The per-day revenue table of the organization for the UTC days [from, to] (T1). Refunds and fees
 * are not catalog metrics: each is gross sales minus the net revenue with that one deduction
 * (S2: net = total − refund_total with `refunds` alone, total − fee_total with `fees` alone).
 */
export async function revenueReport(
  engine: ReportEngine,
  organization: { readonly id: string; readonly settings: ReportSettings },
  from: string,
  to: string,
): Promise<RevenueReport> {
  // The API's own rules (P3, P4): a bad day or order is its INVALID_PARAMETER; at most two years.
  const { from: first } = requirePeriod(from, to);
  const byDay = async (metrics: MetricId[], deductions: readonly Deduction[]) => {
    const settings = { excludedStatuses: organization.settings.excludedStatuses, deductions };
    const plan = planReport(
      { dimensions: ['date'], metrics, from: first, to, timezone: 'UTC', limit: MAX_LIMIT, ...NO_EXTENSIONS },
      { id: organization.id, settings },
    );
    const { rows } = await engine.run(plan);
    return new Map(rows.map((row) => [String(row.date), row]));
  };
  const [main, netOfRefunds, netOfFees] = await Promise.all([
    byDay(['orders', 'gross_sales', 'net_revenue', 'taxes', 'shipping'], organization.settings.deductions),
    byDay(['gross_sales', 'net_revenue'], ['refunds']),
    byDay(['gross_sales', 'net_revenue'], ['fees']),
  ]);

  const deducted = (row: ReportRow | undefined): number =>
    row === undefined ? 0 : cents(row.gross_sales) - cents(row.net_revenue);
  const totalCents: Record<keyof Figures, number> = {
    orders: 0,
    grossSales: 0,
    refunds: 0,
    taxes: 0,
    shipping: 0,
    fees: 0,
    netRevenue: 0,
  };
  const days: RevenueDay[] = [];
  for (let day = first; day <= to; day = addDays(day, 1)) {
    const row = main.get(day);
    const dayCents: Record<keyof Figures, number> = {
      orders: Number(row?.orders ?? 0),
      grossSales: cents(row?.gross_sales),
      refunds: deducted(netOfRefunds.get(day)),
      taxes: cents(row?.taxes),
      shipping: cents(row?.shipping),
      fees: deducted(netOfFees.get(day)),
      netRevenue: cents(row?.net_revenue),
    };
    for (const figure of FIGURES) totalCents[figure] += dayCents[figure];
    days.push({ date: day, ...amounts(dayCents) });
  }
  return { from: first, to, days, totals: amounts(totalCents) };
}

function amounts(figures: Record<keyof Figures, number>): Figures {
  return {
    orders: figures.orders,
    grossSales: figures.grossSales / 100,
    refunds: figures.refunds / 100,
    taxes: figures.taxes / 100,
    shipping: figures.shipping / 100,
    fees: figures.fees / 100,
    netRevenue: figures.netRevenue / 100,
  };
}
