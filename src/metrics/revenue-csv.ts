// The Revenue report's table as a CSV download (RFC 4180: CRLF line ends, a header line).
// Every cell is a date, an integer or an amount written by this file, never text from a store,
// so no cell can start a spreadsheet formula and none needs quoting.
import type { RevenueDay, RevenueReport } from './revenue.js';

export const REVENUE_CSV_HEADER = 'date,orders,gross_sales,refunds,taxes,shipping,fees,net_revenue';

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

function line(label: string, figures: Omit<RevenueDay, 'date'>): string {
  return [
    label,
    csvCount(figures.orders),
    csvAmount(figures.grossSales),
    csvAmount(figures.refunds),
    csvAmount(figures.taxes),
    csvAmount(figures.shipping),
    csvAmount(figures.fees),
    csvAmount(figures.netRevenue),
  ].join(',');
}

/**
 * The table: the header, one line per row in the report's order — a day, or the first day of a
 * wider bucket (G2), as the API's `date` — then the `total` line.
 */
export function revenueCsv(report: RevenueReport): string {
  const lines = [REVENUE_CSV_HEADER];
  for (const day of report.days) {
    if (!DAY.test(day.date)) throw new RangeError(`Date invalide pour le CSV : ${JSON.stringify(day.date)}`);
    lines.push(line(day.date, day));
  }
  lines.push(line('total', report.totals));
  return `${lines.join('\r\n')}\r\n`;
}
