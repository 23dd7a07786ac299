// The Revenue page's report views: the key figures, the chart and the table of one period, or of
// the period compared with another (PC1). Figures from the API's report engine (S3).
import type { ReportEngine } from '../metrics/engine.js';
import { revenueReport, type RevenueDay, type RevenueReport } from '../metrics/revenue.js';
import { comparedRevenue, keyFigures } from '../metrics/revenue-compare.js';
import type { Comparison } from '../query/compare.js';
import type { Granularity } from '../query/dates.js';
import { html, type Html } from './html.js';
import { bucketLabel, revenueChartSvg } from './revenue-chart.js';
import { comparedTableHtml, formatsFor, keyFiguresHtml } from './revenue-compared.js';

/** The period and grouping the page computes (already checked). */
interface Choice {
  readonly from: string;
  readonly to: string;
  readonly granularity: Granularity;
}

/** The choices of the « Regroupement » list, and the table's first column header for each. */
export const GROUPINGS: Record<Granularity, { option: string; header: string }> = {
  day: { option: 'Jour', header: 'Jour' },
  week: { option: 'Semaine', header: 'Semaine du' },
  month: { option: 'Mois', header: 'Mois' },
  quarter: { option: 'Trimestre', header: 'Trimestre' },
  year: { option: 'Année', header: 'Année' },
};

/** A row's label: the day itself for days and weeks (« Semaine du »), else the bucket's name. */
const rowLabel = (date: string, granularity: Granularity): string =>
  granularity === 'day' || granularity === 'week' ? date : bucketLabel(date, granularity);

/** « du 1 février 2026 au 28 février 2026 »: a period in words. */
const periodWords = (period: { from: string; to: string }): string =>
  `du ${bucketLabel(period.from)} au ${bucketLabel(period.to)}`;

type Organization = Parameters<typeof revenueReport>[1] & { readonly currency: string };

/** What the page shows of a report: key figures, chart and table. */
export interface ReportView {
  figures: Html;
  chart: string;
  table: Html;
}

/** The table of one period, as before PC1: one row per bucket and the totals. */
function plainTable(report: RevenueReport, currency: string): Html {
  const money = new Intl.NumberFormat('fr-FR', { style: 'currency', currency });
  const row = (label: Html | string, d: Omit<RevenueDay, 'date'>) =>
    html`<th scope="row">${label}</th>
      <td class="num">${d.orders}</td>
      <td class="num">${money.format(d.grossSales)}</td>
      <td class="num">${money.format(d.refunds)}</td>
      <td class="num">${money.format(d.taxes)}</td>
      <td class="num">${money.format(d.shipping)}</td>
      <td class="num">${money.format(d.fees)}</td>
      <td class="num">${money.format(d.netRevenue)}</td>`;
  return html`<table id="revenue-table">
    <thead>
      <tr>
        <th scope="col">${GROUPINGS[report.granularity].header}</th>
        <th class="num" scope="col">Commandes</th>
        <th class="num" scope="col">CA brut</th>
        <th class="num" scope="col">Remboursements</th>
        <th class="num" scope="col">Taxes</th>
        <th class="num" scope="col">Livraison</th>
        <th class="num" scope="col">Frais</th>
        <th class="num" scope="col">CA net</th>
      </tr>
    </thead>
    <tbody>
      ${report.days.map(
        (d) =>
          html`<tr data-date="${d.date}">
            ${row(rowLabel(d.date, report.granularity), d)}
          </tr>`,
      )}
    </tbody>
    <tfoot>
      <tr id="revenue-totals">
        ${row('Total', report.totals)}
      </tr>
    </tfoot>
  </table>`;
}

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
    table: plainTable(report, org.currency),
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
    table: comparedTableHtml(report, formats, GROUPINGS[granularity].header, (date) =>
      rowLabel(date, granularity),
    ),
  };
}
