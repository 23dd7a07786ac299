// The Revenue report's table as a CSV download (RFC 4180: CRLF line ends, a header line).
// Every cell is a date, an integer or an amount written by this file, never text from a store,
// so no cell can start a spreadsheet formula and none needs quoting.
import type { RevenueDay, RevenueReport } from './revenue.js';
import { comparedFigures, FIGURE_IDS, type ComparedReports } from './revenue-compare.js';

const COLUMNS = ['orders', 'gross_sales', 'refunds', 'taxes', 'shipping', 'fees', 'net_revenue'];
export const REVENUE_CSV_HEADER = `date,${COLUMNS.join(',')}`;
/** PC1's column order: the dates, the figures, each figure's `_previous`, each one's `_change`. */
export const COMPARED_CSV_HEADER = [
  'date,date_previous',
  ...COLUMNS,
  ...COLUMNS.map((c) => `${c}_previous`),
  ...COLUMNS.map((c) => `${c}_change`),
].join(',');

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * An amount with exactly two decimals and a dot (`12.50`, `-3.05`, `0.00`). The report's values
 * are already rounded to the cent, so rounding here only removes binary noise; a non-finite
 * value is a programming error, refused rather than written.
 */
export function csvAmount(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`Montant invalide pour le CSV : ${value}`);
  const cents = Math.round(Math.abs(value) * 100);
  const sign = value < 0 && cents !== 0 ? '-' : '';
  return `${sign}${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

function csvCount(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`Nombre invalide pour le CSV : ${value}`);
  return String(value);
}

function cells(figures: Omit<RevenueDay, 'date'>): string[] {
  return [
    csvCount(figures.orders),
    csvAmount(figures.grossSales),
    csvAmount(figures.refunds),
    csvAmount(figures.taxes),
    csvAmount(figures.shipping),
    csvAmount(figures.fees),
    csvAmount(figures.netRevenue),
  ];
}

const line = (label: string, figures: Omit<RevenueDay, 'date'>): string =>
  [label, ...cells(figures)].join(',');

/**
 * A PC1 change as the API's CSV writes `<metric>_change` (V1: numbers as JSON writes them, `100`,
 * `-21.4`, `0`); null (no previous value, or 0) is an empty cell. Amounts keep their two decimals
 * (csvAmount): the page's CSV wrote them so before PC1, and a request without comparison must not
 * change.
 */
export function csvChange(change: number | null): string {
  if (change === null) return '';
  if (!Number.isFinite(change)) throw new RangeError(`Variation invalide pour le CSV : ${change}`);
  return String(change);
}

const checkedDay = (date: string): string => {
  if (!DAY.test(date)) throw new RangeError(`Date invalide pour le CSV : ${JSON.stringify(date)}`);
  return date;
};

function comparedLine(
  label: string,
  previousLabel: string,
  figures: Omit<RevenueDay, 'date'>,
  previous: Omit<RevenueDay, 'date'> | undefined,
): string {
  const changes = comparedFigures(figures, previous);
  return [
    label,
    previousLabel,
    ...cells(figures),
    ...(previous === undefined ? COLUMNS.map(() => '') : cells(previous)),
    ...FIGURE_IDS.map((id) => csvChange(changes[id].change)),
  ].join(',');
}

/**
 * The compared table (PC1): one line per bucket of the main period with the comparison's k-th
 * bucket beside it (its first day in `date_previous`; empty cells past the comparison's count),
 * then the `total` line of both periods. Line by line, each with its CRLF: the page writes them
 * in time slices (issue 26, item 6).
 */
export function* comparedRevenueCsvLines(report: ComparedReports): Generator<string> {
  yield `${COMPARED_CSV_HEADER}\r\n`;
  for (const { main, previous } of report.buckets) {
    yield `${comparedLine(checkedDay(main.date), previous ? checkedDay(previous.date) : '', main, previous)}\r\n`;
  }
  yield `${comparedLine('total', '', report.main.totals, report.previous.totals)}\r\n`;
}

/** The compared CSV in one piece. */
export const comparedRevenueCsv = (report: ComparedReports): string =>
  [...comparedRevenueCsvLines(report)].join('');

/**
 * The table: the header, one line per row in the report's order — a day, or the first day of a
 * wider bucket (G2), as the API's `date` — then the `total` line. Line by line, each with its CRLF.
 */
export function* revenueCsvLines(report: RevenueReport): Generator<string> {
  yield `${REVENUE_CSV_HEADER}\r\n`;
  for (const day of report.days) yield `${line(checkedDay(day.date), day)}\r\n`;
  yield `${line('total', report.totals)}\r\n`;
}

/** The CSV in one piece. */
export const revenueCsv = (report: RevenueReport): string => [...revenueCsvLines(report)].join('');
