// « CSV pour Excel (français) » (issue 30, item 5): the Revenue table as a French spreadsheet opens
// it with a double click — French column names, `;` between cells (the list separator of a French
// Windows), decimal comma without grouping (1234,56), days as 29/10/2026, a UTF-8 byte order mark
// (without it Excel reads « Clients uniques » as Latin-1) and CRLF line ends. The API-shaped CSV
// (V1, src/metrics/revenue-csv.ts) stays as it is, for programs. Same rows, same order, same
// figures: only the way they are written differs (csv-fr.ts, shared with the Produits page).
import type { ComparedReports, FigureId } from '../metrics/revenue-compare.js';
import { comparedFigures, FIGURE_IDS } from '../metrics/revenue-compare.js';
import type { RevenueDay, RevenueReport } from '../metrics/revenue.js';
import type { Granularity } from '../query/dates.js';
import { frenchCsvPieces, guarded } from './csv-fr.js';
import { spreadsheetDate, spreadsheetNumber } from './format.js';
import { FIGURE_LABELS } from './revenue-compared.js';

/** The first column's name: the day, or the first day of a wider bucket (G2). */
const DATE_HEADERS: Record<Granularity, string> = {
  day: 'Jour',
  week: 'Semaine du',
  month: 'Mois du',
  quarter: 'Trimestre du',
  year: 'Année du',
};

const figure = (id: FigureId, value: number): string => spreadsheetNumber(value, id === 'orders' ? 0 : 2);

const figures = (day: Omit<RevenueDay, 'date'>): string[] => FIGURE_IDS.map((id) => figure(id, day[id]));

/** The records of one period: a header, a line per bucket, the total line. */
function* plainRecords(report: RevenueReport): Generator<string[]> {
  yield [DATE_HEADERS[report.granularity], ...FIGURE_IDS.map((id) => FIGURE_LABELS[id])];
  for (const day of report.days) yield [spreadsheetDate(day.date), ...figures(day)];
  yield [guarded('Total'), ...figures(report.totals)];
}

/** The table of one period, piece by piece. */
export const frenchRevenueCsvPieces = (report: RevenueReport): Generator<string> =>
  frenchCsvPieces(plainRecords(report));

/** The table of one period in one piece. */
export const frenchRevenueCsv = (report: RevenueReport): string =>
  [...frenchRevenueCsvPieces(report)].join('');

function comparedRecord(
  label: string,
  previousLabel: string,
  main: Omit<RevenueDay, 'date'>,
  previous: Omit<RevenueDay, 'date'> | undefined,
): string[] {
  const changes = comparedFigures(main, previous);
  return [
    label,
    previousLabel,
    ...figures(main),
    ...(previous === undefined ? FIGURE_IDS.map(() => '') : figures(previous)),
    ...FIGURE_IDS.map((id) => {
      const change = changes[id].change;
      return change === null ? '' : spreadsheetNumber(change, 1);
    }),
  ];
}

/** The compared table's records (PC1): the figures, the comparison's, then each change in percent. */
function* comparedRecords(report: ComparedReports): Generator<string[]> {
  const granularity = report.main.granularity;
  yield [
    DATE_HEADERS[granularity],
    'Comparé à',
    ...FIGURE_IDS.map((id) => FIGURE_LABELS[id]),
    ...FIGURE_IDS.map((id) => `${FIGURE_LABELS[id]} (comparaison)`),
    ...FIGURE_IDS.map((id) => `${FIGURE_LABELS[id]} (évolution %)`),
  ];
  for (const { main, previous } of report.buckets)
    yield comparedRecord(
      spreadsheetDate(main.date),
      previous ? spreadsheetDate(previous.date) : '',
      main,
      previous,
    );
  yield comparedRecord(
    'Total',
    `${spreadsheetDate(report.comparison.from)} - ${spreadsheetDate(report.comparison.to)}`,
    report.main.totals,
    report.previous.totals,
  );
}

/** The compared table, piece by piece. */
export const frenchComparedRevenueCsvPieces = (report: ComparedReports): Generator<string> =>
  frenchCsvPieces(comparedRecords(report));

/** The compared table in one piece. */
export const frenchComparedRevenueCsv = (report: ComparedReports): string =>
  [...frenchComparedRevenueCsvPieces(report)].join('');
