// « CSV pour Excel (français) » of the Produits page (issue 27, item 5): the page's table as a French
// spreadsheet opens it (csv-fr.ts: `;`, BOM, CRLF, the formula guard), the columns in the table's
// order and words, one column a dimension of the grouping (a variant's product and variant apart,
// to filter on), amounts with a decimal comma and two decimals, counts whole, the total last. Same
// rows, same order, same figures as the API's CSV of the same query: only the writing differs.
import type { ReportRow } from '../metrics/engine.js';
import { PRODUCT_GROUPS, type ProductGroup } from '../metrics/products.js';
import { frenchCsvPieces, guarded } from './csv-fr.js';
import { spreadsheetNumber } from './format.js';
import { dimensionName, PRODUCT_COLUMNS } from './products-table.js';

/** Each line dimension's column name (L2). */
const DIMENSION_HEADERS: Record<string, string> = {
  product: 'Produit',
  variant: 'Variante',
  sku: 'SKU',
  category: 'Catégorie',
};

export interface ProductsSheet {
  readonly group: ProductGroup;
  readonly rows: readonly ReportRow[];
  /** The totals query's one row (L4: each order once). */
  readonly totals: ReportRow;
  /** PC1: compared, each figure is followed by the comparison's and the change in percent. */
  readonly compared: boolean;
}

type Column = (typeof PRODUCT_COLUMNS)[number];

/** A figure as the spreadsheet reads it; a missing one (no previous value, no change) empty. */
function cell(value: unknown, decimals: number): string {
  return value === null || value === undefined ? '' : spreadsheetNumber(Number(value), decimals);
}

function figures(row: ReportRow, compared: boolean): string[] {
  const decimals = (column: Column) => (column.count ? 0 : 2);
  const now = PRODUCT_COLUMNS.map((c) => cell(row[c.id] ?? 0, decimals(c)));
  if (!compared) return now;
  return [
    ...now,
    ...PRODUCT_COLUMNS.map((c) => cell(row[`${c.id}_previous`], decimals(c))),
    ...PRODUCT_COLUMNS.map((c) => cell(row[`${c.id}_change`], 1)),
  ];
}

function* records(sheet: ProductsSheet): Generator<string[]> {
  const dimensions = PRODUCT_GROUPS[sheet.group];
  const labels = PRODUCT_COLUMNS.map((c) => c.label);
  yield [
    ...dimensions.map((id) => DIMENSION_HEADERS[id] ?? id),
    ...labels,
    ...(sheet.compared
      ? [...labels.map((l) => `${l} (comparaison)`), ...labels.map((l) => `${l} (évolution %)`)]
      : []),
  ];
  for (const row of sheet.rows)
    yield [...dimensions.map((id) => guarded(dimensionName(id, row))), ...figures(row, sheet.compared)];
  yield ['Total', ...dimensions.slice(1).map(() => ''), ...figures(sheet.totals, sheet.compared)];
}

/** The sheet piece by piece, for the page to join in time slices (issue 26, item 6). */
export const frenchProductsCsvPieces = (sheet: ProductsSheet): Generator<string> =>
  frenchCsvPieces(records(sheet));
