// The Revenue page's report views: the key figures, the chart and the table of one period, or of
// the period compared with another (PC1). Figures from the API's report engine (S3).
import { TimeSlices } from '../limits/time-slice.js';
import type { ReportEngine } from '../metrics/engine.js';
import { revenueReport } from '../metrics/revenue.js';
import { comparedRevenue, keyFigures } from '../metrics/revenue-compare.js';
import type { Comparison } from '../query/compare.js';
import type { Granularity } from '../query/dates.js';
import { formatPeriod } from './format.js';
import type { Html } from './html.js';
import { revenueChartSvg } from './revenue-chart.js';
import { formatsFor, keyFiguresHtml } from './revenue-compared.js';
import { comparedTableHtml, plainTableHtml } from './revenue-tables.js';

/** The period and grouping the page computes (already checked). */
interface Choice {
  readonly from: string;
  readonly to: string;
  readonly granularity: Granularity;
}

/** The choices of the « Regroupement » list. */
export const GROUPINGS: Record<Granularity, { option: string }> = {
  day: { option: 'Jour' },
  week: { option: 'Semaine' },
  month: { option: 'Mois' },
  quarter: { option: 'Trimestre' },
  year: { option: 'Année' },
};

/** « du 1er au 29 février 2024 »: a period in words. */
const periodWords = (period: { from: string; to: string }): string => formatPeriod(period.from, period.to);

type Organization = Parameters<typeof revenueReport>[1] & { readonly currency: string };

/** What the page shows of a report: key figures, chart and table. */
export interface ReportView {
  figures: Html;
  chart: string;
  table: Html;
  /** No counted order and no amount in the period (nor in the comparison's): the empty state. */
  empty: boolean;
}

const nothing = (t: { orders: number; grossSales: number; refunds: number; netRevenue: number }): boolean =>
  t.orders === 0 && t.grossSales === 0 && t.refunds === 0 && t.netRevenue === 0;

export async function plainView(
  engine: ReportEngine,
  org: Organization,
  chosen: Choice,
): Promise<ReportView> {
  const report = await revenueReport(engine, org, chosen.from, chosen.to, chosen.granularity);
  // After the report, not beside it: a page holds no more report slots than before (finding 6).
  const figures = await keyFigures(engine, org, report);
  return {
    figures: keyFiguresHtml(figures, formatsFor(org.currency)),
    chart: revenueChartSvg(report.days, { currency: org.currency, granularity: report.granularity }),
    // Up to 731 rows: written in time slices (issue 26, item 6).
    table: await plainTableHtml(report, org.currency, new TimeSlices()),
    empty: nothing(report.totals),
  };
}

export async function comparedView(
  engine: ReportEngine,
  org: Organization,
  chosen: Choice,
  comparison: Comparison,
): Promise<ReportView> {
  const report = await comparedRevenue(engine, org, chosen, comparison, chosen.granularity);
  const { main, previous } = report;
  const formats = formatsFor(org.currency);
  const net = report.keyFigures.net_revenue;
  const granularity = main.granularity;
  return {
    figures: keyFiguresHtml(report.keyFigures, formats, periodWords(report.comparison)),
    chart: revenueChartSvg(main.days, {
      currency: org.currency,
      granularity,
      previous: {
        // PC1 matches a prefix: the comparison's k-th bucket for each k it has, up to the main count.
        values: report.buckets.flatMap((b) => (b.previous ? [b.previous.netRevenue] : [])),
        total: previous.totals.netRevenue,
        period: periodWords(report.comparison),
        change: net.change,
      },
    }),
    // Up to 731 rows of compared cells, the page's longest work: written in time slices (issue 26,
    // item 6: 0.1–0.2 s of the event loop in one piece before).
    table: await comparedTableHtml(report, org.currency, new TimeSlices()),
    empty: nothing(main.totals) && nothing(previous.totals),
  };
}
