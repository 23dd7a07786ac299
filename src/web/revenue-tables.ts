// The Revenue page's tables (issue 30, item 1), on the shared data table: CA net first, then the
// figures by importance; taxes, shipping and fees are optional columns (the picker). Compared
// (PC1): one column per figure, each cell the value, its change below (arrow, sign, colour) and
// the comparison's value beside the change; the comparison's bucket under the row's own label.
import type { TimeSlices } from '../limits/time-slice.js';
import type { Compared, ComparedRevenue, FigureId } from '../metrics/revenue-compare.js';
import { comparedFigures } from '../metrics/revenue-compare.js';
import type { RevenueDay, RevenueReport } from '../metrics/revenue.js';
import type { Granularity } from '../query/dates.js';
import { dataTableHtmlInSlices, type DataColumn, type DataTable } from './data-table.js';
import { formatBucket, formatCount, formatMoney, formatShortPeriod } from './format.js';
import { html, type Html } from './html.js';
import { changeClasses, changeLabel, FIGURE_LABELS } from './revenue-compared.js';

type Figures = Omit<RevenueDay, 'date'>;

/** The figures in the order a shop owner reads them; the last three are picked on demand. */
const COLUMNS: readonly { id: FigureId; optional?: boolean }[] = [
  { id: 'netRevenue' },
  { id: 'orders' },
  { id: 'grossSales' },
  { id: 'refunds' },
  { id: 'taxes', optional: true },
  { id: 'shipping', optional: true },
  { id: 'fees', optional: true },
];

/** The first column's header for each grouping (G2). */
export const BUCKET_HEADERS: Record<Granularity, string> = {
  day: 'Jour',
  week: 'Semaine',
  month: 'Mois',
  quarter: 'Trimestre',
  year: 'Année',
};

const figure = (id: FigureId, value: number, currency: string): string =>
  id === 'orders' ? formatCount(value) : formatMoney(value, currency);

/**
 * The table of one period: one row per bucket and the totals, written in the request's time
 * slices (up to 731 rows: issue 26, item 6).
 */
export function plainTableHtml(report: RevenueReport, currency: string, slices?: TimeSlices): Promise<Html> {
  type Row = Figures & { date?: string };
  const columns: DataColumn<Row>[] = COLUMNS.map(({ id, optional }) => ({
    id,
    label: FIGURE_LABELS[id],
    numeric: true,
    lead: id === 'netRevenue',
    ...(optional ? { optional } : {}),
    cell: (row: Row) => figure(id, row[id], currency),
  }));
  const table: DataTable<Row> = {
    id: 'revenue-table',
    caption: 'Revenus par période',
    rowHeader: {
      label: BUCKET_HEADERS[report.granularity],
      cell: (row) => formatBucket(row.date ?? '', report.granularity),
    },
    columns,
    rows: report.days,
    rowAttributes: (row) => html`data-date="${row.date ?? ''}"`,
    totals: { id: 'revenue-totals', label: 'Total', row: report.totals },
  };
  return dataTableHtmlInSlices(table, slices);
}

interface ComparedRow {
  readonly main: Figures & { date?: string };
  readonly previous: (Figures & { date?: string }) | undefined;
}

/**
 * A compared cell: the value; below, its change and the comparison's value. Compact (up to 731
 * rows of 7 cells): the arrow and sign say the change's direction in its text, the column header
 * and the row's « contre … » say what the second value is; the class only adds the colour.
 */
function comparedCell(id: FigureId, row: ComparedRow, changes: Changes, currency: string): Html {
  const value = figure(id, row.main[id], currency);
  const before = row.previous === undefined ? '—' : figure(id, row.previous[id], currency);
  const change = changes[id].change;
  // Without a change (nothing to compare with) only the comparison's value is shown.
  const shown =
    change === null
      ? ''
      : html`<span class="${changeClasses(change, id === 'refunds')}">${changeLabel(change)}</span> `;
  // prettier-ignore
  return html`<span class="now">${value}</span><small class="then">${shown}<span class="previous">${before}</span></small>`;
}

type Changes = Record<FigureId, Compared>;

/**
 * The compared table: bucket k of the period beside bucket k of the comparison (PC1), written in
 * the request's time slices (up to 731 rows of 7 compared cells: issue 26, item 6).
 */
export function comparedTableHtml(
  report: ComparedRevenue,
  currency: string,
  slices?: TimeSlices,
): Promise<Html> {
  const granularity = report.main.granularity;
  // A row's seven changes, worked out once for its seven cells (not once per cell).
  const changes = new WeakMap<ComparedRow, Changes>();
  const changesOf = (row: ComparedRow): Changes => {
    let found = changes.get(row);
    if (found === undefined) {
      found = comparedFigures(row.main, row.previous);
      changes.set(row, found);
    }
    return found;
  };
  const columns: DataColumn<ComparedRow>[] = COLUMNS.map(({ id, optional }) => ({
    id,
    label: FIGURE_LABELS[id],
    numeric: true,
    lead: id === 'netRevenue',
    ...(optional ? { optional } : {}),
    cell: (row: ComparedRow) => comparedCell(id, row, changesOf(row), currency),
  }));
  const { comparison } = report;
  const table: DataTable<ComparedRow> = {
    id: 'revenue-table',
    caption: 'Revenus par période, comparés',
    variant: 'compared',
    rowHeader: {
      label: BUCKET_HEADERS[granularity],
      cell: (row) => {
        const previous = row.previous?.date ? formatBucket(row.previous.date, granularity) : '—';
        // prettier-ignore
        return html`${formatBucket(row.main.date ?? '', granularity)} <span class="compared-to">contre ${previous}</span>`;
      },
    },
    columns,
    rows: report.buckets,
    rowAttributes: (row) =>
      html`data-date="${row.main.date ?? ''}" data-date-previous="${row.previous?.date ?? ''}"`,
    totals: {
      id: 'revenue-totals',
      label: html`Total
        <span class="compared-to">contre ${formatShortPeriod(comparison.from, comparison.to)}</span>`,
      row: { main: report.main.totals, previous: report.previous.totals },
    },
  };
  return dataTableHtmlInSlices(table, slices);
}
