// The web application's Reports → Revenue page: one row per UTC day, week, month, quarter or year
// of the period (G2, as the API's `granularity`) and a totals row, computed by the report engine
// the API uses (S3: no second money path), so the two agree to the cent and the page is as fast
// as the API: same period (T1), same excluded statuses (S1), net revenue by the one definition
// (S2), sums exact and rounded once (M1).
import type { Deduction, MetricId, ReportSettings } from '../catalog.js';
import { bucketStart, nextBucketStart, onOrBefore, type Granularity } from '../query/dates.js';
import { MAX_LIMIT, NO_EXTENSIONS } from '../query/parse.js';
import { requirePeriod } from '../query/period.js';
import { planReport } from '../query/plan.js';
import type { ReportEngine, ReportRow } from './engine.js';

/** One row of the report: a UTC day, or with a wider granularity one bucket (G2). */
export interface RevenueDay {
  /**
   * The bucket's first UTC day, YYYY-MM-DD: the day itself, the Monday of its ISO week, the first
   * of its month, quarter or year — the API's `date` value for the same granularity (G2).
   */
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
  granularity: Granularity;
  /**
   * Every bucket that meets [from, to], in order, zeros for buckets without counted orders. The
   * period is not widened (G2): the first and last buckets may be partial, holding only the orders
   * of their days inside the period, and the first one's `date` may precede `from`.
   */
  days: RevenueDay[];
  totals: Omit<RevenueDay, 'date'>;
}

/** Days in two years plus one, the most P4 allows (every other granularity has fewer buckets). */
const MAX_BUCKETS = 2 * 366 + 1;

/** A row's figures, without its date; their order is the table's and the CSV's. */
export type Figures = Omit<RevenueDay, 'date'>;
export const FIGURES: readonly (keyof Figures)[] = [
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
 * The revenue table of the organization for the UTC days [from, to] (T1), per day or per wider
 * bucket (G2), the buckets worked out by the report engine exactly as for the API. Refunds and fees
 * are not catalog metrics: each is gross sales minus the net revenue with that one deduction
 * (S2: net = total − refund_total with `refunds` alone, total − fee_total with `fees` alone).
 */
export async function revenueReport(
  engine: ReportEngine,
  organization: { readonly id: string; readonly settings: ReportSettings },
  from: string,
  to: string,
  granularity: Granularity = 'day',
): Promise<RevenueReport> {
  // The API's own rules (P3, P4): a bad day or order is its INVALID_PARAMETER; at most two years.
  const { from: first } = requirePeriod(from, to);
  const byBucket = async (metrics: MetricId[], deductions: readonly Deduction[]) => {
    const settings = { excludedStatuses: organization.settings.excludedStatuses, deductions };
    const plan = planReport(
      {
        dimensions: ['date'],
        metrics,
        from: first,
        to,
        timezone: 'UTC',
        limit: MAX_LIMIT,
        ...NO_EXTENSIONS,
        granularity,
      },
      { id: organization.id, settings },
    );
    const { rows } = await engine.run(plan);
    return new Map(rows.map((row) => [String(row.date), row]));
  };
  const [main, netOfRefunds, netOfFees] = await Promise.all([
    byBucket(['orders', 'gross_sales', 'net_revenue', 'taxes', 'shipping'], organization.settings.deductions),
    byBucket(['gross_sales', 'net_revenue'], ['refunds']),
    byBucket(['gross_sales', 'net_revenue'], ['fees']),
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
  for (
    let start = bucketStart(first, granularity);
    onOrBefore(start, to);
    start = nextBucketStart(start, granularity)
  ) {
    const row = main.get(start);
    const bucketCents: Record<keyof Figures, number> = {
      orders: Number(row?.orders ?? 0),
      grossSales: cents(row?.gross_sales),
      refunds: deducted(netOfRefunds.get(start)),
      taxes: cents(row?.taxes),
      shipping: cents(row?.shipping),
      fees: deducted(netOfFees.get(start)),
      netRevenue: cents(row?.net_revenue),
    };
    for (const figure of FIGURES) totalCents[figure] += bucketCents[figure];
    days.push({ date: start, ...amounts(bucketCents) });
    // P4 caps a period at 731 days: a longer loop is a fault in the date arithmetic (issue 18),
    // which must fail this request, never loop on until the heap is exhausted.
    if (days.length > MAX_BUCKETS)
      throw new RangeError(`more than ${MAX_BUCKETS} buckets from ${first} to ${to}`);
  }
  return { from: first, to, granularity, days, totals: amounts(totalCents) };
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
