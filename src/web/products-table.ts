// The « Produits » page's table (issue 27, item 5), on the shared data table: one row per product
// (variant, SKU, category) as the API answers it, net sales first; each column header a link that
// sorts by it (L7, on the server, so it works without the script and takes the whole period's
// rows into account, not the ones shown); compared (PC1), each cell its value over its change and
// the comparison's value; a total row.
import type { ReportRow } from '../metrics/engine.js';
import {
  PRODUCT_GROUPS,
  type ProductGroup,
  type ProductMetric,
  type ProductSort,
} from '../metrics/products.js';
import { dataTableHtml, type DataColumn } from './data-table.js';
import { formatCount, formatMoney, formatShortPeriod } from './format.js';
import { html, type Html, type HtmlValue } from './html.js';
import { changeClasses, changeLabel } from './revenue-compared.js';

/** The columns in the order a shop owner reads them: net sales first. */
export const PRODUCT_COLUMNS: readonly { id: ProductMetric; label: string; count?: boolean }[] = [
  { id: 'product_net_sales', label: 'Ventes nettes' },
  { id: 'units_sold', label: 'Unités vendues', count: true },
  { id: 'orders', label: 'Commandes', count: true },
  { id: 'product_gross_sales', label: 'Ventes brutes' },
  { id: 'product_discounts', label: 'Remises' },
  { id: 'product_refunds', label: 'Remboursements' },
];

/** The grouping's words: its list's option, its column header, its rows in a sentence. */
export const GROUP_WORDS: Record<ProductGroup, { option: string; header: string; per: string }> = {
  product: { option: 'Produit', header: 'Produit', per: 'produit' },
  variant: { option: 'Variante', header: 'Produit — variante', per: 'variante' },
  sku: { option: 'SKU', header: 'SKU', per: 'SKU' },
  category: { option: 'Catégorie', header: 'Catégorie', per: 'catégorie' },
};

/** L2's `Unknown` (no value) in words, for the dimensions where it means « none ». */
const NONE: Partial<Record<string, string>> = {
  variant: 'sans variante',
  sku: 'sans SKU',
  category: 'sans catégorie',
};

/** One dimension of a row in words: its value, or « sans variante » for L2's `Unknown`. */
export function dimensionName(id: string, row: ReportRow): string {
  const value = String(row[id] ?? '');
  return value === 'Unknown' ? (NONE[id] ?? value) : value;
}

/** A row's name as the table and the chart show it: « T-shirt — Rouge / M ». */
export function rowName(group: ProductGroup, row: ReportRow): string {
  return PRODUCT_GROUPS[group].map((id) => dimensionName(id, row)).join(' — ');
}

export interface ProductsTableInput {
  readonly group: ProductGroup;
  readonly sort: ProductSort;
  readonly rows: readonly ReportRow[];
  readonly totals: ReportRow;
  readonly currency: string;
  /** PC1: the comparison period, when compared. */
  readonly comparison?: { readonly from: string; readonly to: string };
  /** The address of the page sorted by a key (`-product_net_sales`, `name`…). */
  readonly sortedBy: (sort: ProductSort) => string;
}

const formatted = (column: (typeof PRODUCT_COLUMNS)[number], value: unknown, currency: string): string =>
  column.count ? formatCount(Number(value ?? 0)) : formatMoney(Number(value ?? 0), currency);

/** What the shop would rather see fall: their rise is shown in red (revenue-compared.ts). */
const COSTS: ReadonlySet<string> = new Set(['units_refunded', 'product_discounts', 'product_refunds']);

/** A compared cell: the value; below, its change and the comparison's value (as the Revenue table). */
function comparedCell(column: (typeof PRODUCT_COLUMNS)[number], row: ReportRow, currency: string): Html {
  const change = row[`${column.id}_change`] ?? null;
  const previous = row[`${column.id}_previous`];
  const shown =
    change === null
      ? ''
      : html`<span class="${changeClasses(Number(change), COSTS.has(column.id))}"
          >${changeLabel(Number(change))}</span
        > `;
  const before = previous === null || previous === undefined ? '—' : formatted(column, previous, currency);
  // prettier-ignore
  return html`<span class="now">${formatted(column, row[column.id], currency)}</span><small class="then">${shown}<span class="previous">${before}</span></small>`;
}

/** A header that sorts by its column: descending first for figures, ascending first for names. */
function sortHeading(label: string, key: ProductSort['key'], input: ProductsTableInput): HtmlValue {
  const current = input.sort.key === key ? input.sort : undefined;
  const firstDescending = key !== 'name';
  const next = { key, descending: current ? !current.descending : firstDescending };
  const arrow = current ? (current.descending ? ' ▼' : ' ▲') : '';
  const words = `Trier par ${label.toLowerCase()}, ${next.descending ? 'décroissant' : 'croissant'}`;
  return html`<a class="sort" href="${input.sortedBy(next)}" title="${words}" data-sort="${key}"
    >${label}<span aria-hidden="true">${arrow}</span></a
  >`;
}

const sortedState = (sort: ProductSort, key: ProductSort['key']): 'ascending' | 'descending' | undefined =>
  sort.key === key ? (sort.descending ? 'descending' : 'ascending') : undefined;

export function productsTableHtml(input: ProductsTableInput): Html {
  const { group, sort, currency, comparison } = input;
  const columns: DataColumn<ReportRow>[] = PRODUCT_COLUMNS.map((column) => {
    const sorted = sortedState(sort, column.id);
    return {
      id: column.id,
      label: column.label,
      heading: sortHeading(column.label, column.id, input),
      numeric: true,
      lead: column.id === 'product_net_sales',
      ...(sorted ? { sorted } : {}),
      cell: (row: ReportRow) =>
        comparison ? comparedCell(column, row, currency) : formatted(column, row[column.id], currency),
    };
  });
  const header = GROUP_WORDS[group].header;
  const nameSorted = sortedState(sort, 'name');
  return dataTableHtml<ReportRow>({
    id: 'products-table',
    caption: `Ventes par ${GROUP_WORDS[group].per}${comparison ? ', comparées' : ''}`,
    ...(comparison ? { variant: 'compared' } : {}),
    rowHeader: {
      label: header,
      heading: sortHeading(header, 'name', input),
      ...(nameSorted ? { sorted: nameSorted } : {}),
      cell: (row) => rowName(group, row),
    },
    columns,
    rows: input.rows,
    rowAttributes: (row) =>
      html`data-key="${JSON.stringify(PRODUCT_GROUPS[group].map((id) => String(row[id] ?? '')))}"`,
    totals: {
      id: 'products-totals',
      label: comparison
        ? html`Total
            <span class="compared-to">contre ${formatShortPeriod(comparison.from, comparison.to)}</span>`
        : 'Total',
      row: input.totals,
    },
  });
}
