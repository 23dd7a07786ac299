// The « Produits » page's report views: the chart of the top sellers and the table, of one period
// or compared (PC1), from the API's report engine (S3). The requests run one after the other, so
// a page holds one report slot at a time.
import type { ReportEngine, ReportRow } from '../metrics/engine.js';
import {
  productsQuery,
  runProducts,
  TOP_SELLERS,
  totalsQuery,
  type ProductsChoice,
  type ProductSort,
} from '../metrics/products.js';
import type { ReportSettings } from '../catalog.js';
import { formatMoney, formatPeriod } from './format.js';
import type { Html } from './html.js';
import { productsChartSvg } from './products-chart.js';
import { GROUP_WORDS, productsTableHtml, rowName } from './products-table.js';

/** Rows the page's table shows at most; the CSV has up to the API's default limit. */
export const TABLE_ROWS = 200;
/** Bars of the chart: the top ten by net sales. */
export const CHART_BARS = 10;

type Organization = { readonly id: string; readonly settings: ReportSettings; readonly currency: string };

export interface ProductsView {
  readonly chart: string;
  readonly table: Html;
  readonly rowCount: number;
  /** More rows than TABLE_ROWS (T6). */
  readonly truncated: boolean;
}

const sameSort = (a: ProductSort, b: ProductSort): boolean =>
  a.key === b.key && a.descending === b.descending;

export async function productsView(
  engine: ReportEngine,
  org: Organization,
  choice: ProductsChoice,
  sortedBy: (sort: ProductSort) => string,
): Promise<ProductsView | undefined> {
  const table = await runProducts(engine, org, productsQuery(choice, TABLE_ROWS));
  // No counted line in the period, nor in the comparison's (T4): the page's empty state.
  if (table.rows.length === 0) return undefined;
  // The chart is the top ten by net sales whatever the table's order: the table's first rows when
  // it is sorted so, else its own request (L7: sort=-product_net_sales&limit=10).
  const top = sameSort(choice.sort, TOP_SELLERS)
    ? table.rows.slice(0, CHART_BARS)
    : (await runProducts(engine, org, productsQuery(choice, CHART_BARS, TOP_SELLERS))).rows;
  const totals: ReportRow = (await runProducts(engine, org, totalsQuery(choice))).rows[0] ?? {};
  const money = (value: number) => formatMoney(value, org.currency);
  const { comparison } = choice;
  return {
    chart: productsChartSvg(
      top.map((row) => ({
        label: rowName(choice.group, row),
        value: Number(row.product_net_sales ?? 0),
        ...(comparison
          ? {
              previous: Number(row.product_net_sales_previous ?? 0),
              change: row.product_net_sales_change === null ? null : Number(row.product_net_sales_change),
            }
          : {}),
      })),
      {
        period: formatPeriod(choice.from, choice.to),
        ...(comparison ? { comparedTo: formatPeriod(comparison.from, comparison.to) } : {}),
        per: GROUP_WORDS[choice.group].per,
        money,
      },
    ),
    table: productsTableHtml({
      group: choice.group,
      sort: choice.sort,
      rows: table.rows,
      totals,
      currency: org.currency,
      ...(comparison ? { comparison } : {}),
      sortedBy,
    }),
    rowCount: table.rows.length,
    truncated: table.truncated,
  };
}
