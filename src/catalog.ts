// Dimensions and metrics: ids, French labels, types and grains, in the reference's order (G1),
// then section 15's (L2, L3). The SQL each one compiles to lives in src/query/compile.ts, keyed by
// these ids (an allow-list).
//
// Every metric knows its grain (STYLE, L4): the parser, the planner, both engines and the OpenAPI
// document read it here rather than testing ids one by one.

/** L4: `order` entries read orders; `line` entries read order lines. */
export const GRAINS = ['order', 'line'] as const;
export type Grain = (typeof GRAINS)[number];

export interface CatalogEntry {
  readonly id: string;
  readonly label: string;
  readonly type: string;
}

export interface CatalogDimension extends CatalogEntry {
  readonly grain: Grain;
}

/**
 * How an order metric reads at line grain (L4): `distinct` counts distinct orders or customers of
 * the row's lines; `refused` has no single meaning per product (INCOMPATIBLE_METRICS), with the line
 * metric to use instead where there is one. Line metrics are `sum`: summed over the row's lines.
 */
export type AtLineGrain =
  | { readonly kind: 'sum' }
  | { readonly kind: 'distinct' }
  | { readonly kind: 'refused'; readonly replacement?: string };

export interface CatalogMetric extends CatalogEntry {
  readonly grain: Grain;
  readonly atLineGrain: AtLineGrain;
}

const distinct = { kind: 'distinct' } as const;
const refused = (replacement?: string): AtLineGrain =>
  replacement === undefined ? { kind: 'refused' } : { kind: 'refused', replacement };
const sum = { kind: 'sum' } as const;

/** G1: the reference's dimensions, then L2's. */
export const DIMENSIONS = [
  { id: 'date', label: 'Date', type: 'date', grain: 'order' },
  { id: 'store', label: 'Boutique', type: 'string', grain: 'order' },
  { id: 'country', label: 'Pays', type: 'string', grain: 'order' },
  { id: 'customer_type', label: 'Type client', type: 'string', grain: 'order' },
  { id: 'status', label: 'Statut commande', type: 'string', grain: 'order' },
  { id: 'product', label: 'Produit', type: 'string', grain: 'line' },
  { id: 'product_id', label: 'Identifiant produit', type: 'string', grain: 'line' },
  { id: 'variant', label: 'Variante', type: 'string', grain: 'line' },
  { id: 'sku', label: 'SKU', type: 'string', grain: 'line' },
  { id: 'category', label: 'Catégorie', type: 'string', grain: 'line' },
] as const satisfies readonly CatalogDimension[];

/** G1: the reference's metrics, then L3's. */
export const METRICS = [
  { id: 'orders', label: 'Commandes', type: 'number', grain: 'order', atLineGrain: distinct },
  {
    id: 'items_sold',
    label: 'Produits vendus',
    type: 'number',
    grain: 'order',
    atLineGrain: refused('units_sold'),
  },
  {
    id: 'gross_sales',
    label: 'CA brut',
    type: 'currency',
    grain: 'order',
    atLineGrain: refused('product_gross_sales'),
  },
  {
    id: 'net_revenue',
    label: 'CA net',
    type: 'currency',
    grain: 'order',
    atLineGrain: refused('product_net_sales'),
  },
  {
    id: 'average_order_value',
    label: 'Panier moyen',
    type: 'currency',
    grain: 'order',
    atLineGrain: refused(),
  },
  { id: 'taxes', label: 'Taxes', type: 'currency', grain: 'order', atLineGrain: refused() },
  { id: 'shipping', label: 'Livraison', type: 'currency', grain: 'order', atLineGrain: refused() },
  { id: 'unique_customers', label: 'Clients uniques', type: 'number', grain: 'order', atLineGrain: distinct },
  { id: 'new_customers', label: 'Nouveaux clients', type: 'number', grain: 'order', atLineGrain: distinct },
  {
    id: 'returning_customers',
    label: 'Clients récurrents',
    type: 'number',
    grain: 'order',
    atLineGrain: distinct,
  },
  { id: 'units_sold', label: 'Unités vendues', type: 'number', grain: 'line', atLineGrain: sum },
  { id: 'units_refunded', label: 'Unités remboursées', type: 'number', grain: 'line', atLineGrain: sum },
  {
    id: 'product_gross_sales',
    label: 'Ventes brutes produits',
    type: 'currency',
    grain: 'line',
    atLineGrain: sum,
  },
  { id: 'product_discounts', label: 'Remises produits', type: 'currency', grain: 'line', atLineGrain: sum },
  {
    id: 'product_refunds',
    label: 'Remboursements produits',
    type: 'currency',
    grain: 'line',
    atLineGrain: sum,
  },
  {
    id: 'product_net_sales',
    label: 'Ventes nettes produits',
    type: 'currency',
    grain: 'line',
    atLineGrain: sum,
  },
] as const satisfies readonly CatalogMetric[];

export type DimensionId = (typeof DIMENSIONS)[number]['id'];
export type MetricId = (typeof METRICS)[number]['id'];
export type LineDimensionId = Extract<(typeof DIMENSIONS)[number], { grain: 'line' }>['id'];
export type LineMetricId = Extract<(typeof METRICS)[number], { grain: 'line' }>['id'];

const dimensionById: ReadonlyMap<string, CatalogDimension> = new Map(DIMENSIONS.map((d) => [d.id, d]));
const metricById: ReadonlyMap<string, CatalogMetric> = new Map(METRICS.map((m) => [m.id, m]));

export const isDimensionId = (id: string): id is DimensionId => dimensionById.has(id);
export const isMetricId = (id: string): id is MetricId => metricById.has(id);

export const dimensionGrain = (id: DimensionId): Grain => dimensionById.get(id)?.grain ?? 'order';
export const metricGrain = (id: MetricId): Grain => metricById.get(id)?.grain ?? 'order';
export const isLineDimension = (id: DimensionId): id is LineDimensionId => dimensionGrain(id) === 'line';
export const isLineMetric = (id: MetricId): id is LineMetricId => metricGrain(id) === 'line';
/** L4: how a metric reads when the rows are made of lines. */
export const atLineGrain = (id: MetricId): AtLineGrain => metricById.get(id)?.atLineGrain ?? refused();

export const isCurrencyMetric = (id: MetricId): boolean => metricById.get(id)?.type === 'currency';

/** The entries of one grain, as G1 writes them: `{id, label, type}`. */
const reference = (entries: readonly (CatalogEntry & { readonly grain: Grain })[]): CatalogEntry[] =>
  entries.filter((e) => e.grain === 'order').map(({ id, label, type }) => ({ id, label, type }));

/** The order metrics (L4's order grain), in catalog order: every question a report about orders asks. */
export const ORDER_METRIC_IDS: readonly MetricId[] = METRICS.filter((m) => m.grain === 'order').map(
  (m) => m.id,
);
/** Section 15's line metrics (L3), in catalog order. */
export const LINE_METRIC_IDS: readonly MetricId[] = METRICS.filter((m) => m.grain === 'line').map(
  (m) => m.id,
);

/** G1: the reference's catalog, unchanged by section 15. */
export const REFERENCE_CATALOG = { dimensions: reference(DIMENSIONS), metrics: reference(METRICS) };

/** L9: every entry, the reference's first, each with its grain. */
export const FULL_CATALOG = {
  dimensions: DIMENSIONS.map(({ id, label, type, grain }) => ({ id, label, type, grain })),
  metrics: METRICS.map(({ id, label, type, grain }) => ({ id, label, type, grain })),
};

/** S1 default excluded statuses and S2 default deductions. */
export const DEFAULT_EXCLUDED_STATUSES = ['pending', 'failed', 'cancelled', 'checkout-draft'] as const;
export const DEDUCTIONS = ['refunds', 'taxes', 'shipping', 'fees'] as const;
export type Deduction = (typeof DEDUCTIONS)[number];
export const DEFAULT_DEDUCTIONS: readonly Deduction[] = ['refunds', 'taxes', 'shipping'];

export interface ReportSettings {
  readonly excludedStatuses: readonly string[];
  readonly deductions: readonly Deduction[];
}
