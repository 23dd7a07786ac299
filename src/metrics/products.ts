// The web application's « Produits » page (issue 27, item 5): what was sold, per product, variant,
// SKU or category (SPEC section 15), as the API's own requests, run by the API's report engine
// (S3): the page's figures are those of `GET /api/reports/tabular` with the same parameters.
import type { DimensionId, MetricId, ReportSettings } from '../catalog.js';
import type { Comparison } from '../query/compare.js';
import { NO_EXTENSIONS, type SortKey, type TabularQuery } from '../query/parse.js';
import type { Period } from '../query/period.js';
import { planReport } from '../query/plan.js';
import type { ReportEngine, ReportRows } from './engine.js';

/** The page's groupings and the line dimensions each asks (L2): a variant is named with its product. */
export const PRODUCT_GROUPS = {
  product: ['product'],
  variant: ['product', 'variant'],
  sku: ['sku'],
  category: ['category'],
} as const satisfies Record<string, readonly DimensionId[]>;
export type ProductGroup = keyof typeof PRODUCT_GROUPS;
export const isProductGroup = (text: string): text is ProductGroup => Object.hasOwn(PRODUCT_GROUPS, text);

/**
 * The figures asked, in the order a reader checks them (gross − discounts − refunds = net), then
 * `orders`: at line grain the distinct orders with a line in the row (L4), the one order metric
 * that has a meaning per product.
 */
export const PRODUCT_METRICS = [
  'units_sold',
  'product_gross_sales',
  'product_discounts',
  'product_refunds',
  'product_net_sales',
  'orders',
] as const satisfies readonly MetricId[];
export type ProductMetric = (typeof PRODUCT_METRICS)[number];
export const isProductMetric = (text: string): text is ProductMetric =>
  PRODUCT_METRICS.some((m) => m === text);

/** The page's order: a figure, or `name` (the grouping's dimensions); descending with `-`. */
export interface ProductSort {
  readonly key: ProductMetric | 'name';
  readonly descending: boolean;
}
/** Top products first (L7: `sort=-product_net_sales`). */
export const TOP_SELLERS: ProductSort = { key: 'product_net_sales', descending: true };

/** What the page computes, already checked. */
export interface ProductsChoice extends Period {
  readonly group: ProductGroup;
  readonly sort: ProductSort;
  readonly comparison?: Comparison;
}

/** L7's keys for the page's order. */
const sortKeys = (group: ProductGroup, sort: ProductSort): SortKey[] =>
  sort.key === 'name'
    ? PRODUCT_GROUPS[group].map((id) => ({ id, descending: sort.descending }))
    : [{ id: sort.key, descending: sort.descending }];

/**
 * The API's query for the page's table: `dimensions` of the grouping, PRODUCT_METRICS, the
 * period, `sort` and `compare` (PC1), at most `limit` rows: what `GET /api/reports/tabular`
 * parses from the same parameters.
 */
export function productsQuery(choice: ProductsChoice, limit: number, sort = choice.sort): TabularQuery {
  return {
    dimensions: PRODUCT_GROUPS[choice.group],
    metrics: PRODUCT_METRICS,
    from: choice.from,
    to: choice.to,
    timezone: 'UTC',
    limit,
    ...NO_EXTENSIONS,
    ...(choice.comparison ? { comparison: choice.comparison } : {}),
    sort: sortKeys(choice.group, sort),
  };
}

/**
 * The totals: the same figures without a dimension (order grain, L4): every line of the period's
 * counted orders once, and `orders` every counted order, as the Revenue page counts them. A line
 * of two categories is in two rows of the table but once here (L5).
 */
export const totalsQuery = (choice: ProductsChoice): TabularQuery => ({
  dimensions: [],
  metrics: PRODUCT_METRICS,
  from: choice.from,
  to: choice.to,
  timezone: 'UTC',
  limit: 1,
  ...NO_EXTENSIONS,
  ...(choice.comparison ? { comparison: choice.comparison } : {}),
});

type Organization = { readonly id: string; readonly settings: ReportSettings };

/** A query run as the API runs it (planReport, then the report engine). */
export const runProducts = (
  engine: ReportEngine,
  organization: Organization,
  query: TabularQuery,
): Promise<ReportRows> => engine.run(planReport(query, organization));
