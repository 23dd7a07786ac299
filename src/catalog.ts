// Dimensions and metrics: ids, French labels and types, in the reference's order (G1).
// The SQL each one compiles to lives in src/query/compile.ts, keyed by these ids (an allow-list).

export interface CatalogEntry {
  readonly id: string;
  readonly label: string;
  readonly type: string;
}

export const DIMENSIONS = [
  { id: 'date', label: 'Date', type: 'date' },
  { id: 'store', label: 'Boutique', type: 'string' },
  { id: 'country', label: 'Pays', type: 'string' },
  { id: 'customer_type', label: 'Type client', type: 'string' },
  { id: 'status', label: 'Statut commande', type: 'string' },
] as const satisfies readonly CatalogEntry[];

export const METRICS = [
  { id: 'orders', label: 'Commandes', type: 'number' },
  { id: 'items_sold', label: 'Produits vendus', type: 'number' },
  { id: 'gross_sales', label: 'CA brut', type: 'currency' },
  { id: 'net_revenue', label: 'CA net', type: 'currency' },
  { id: 'average_order_value', label: 'Panier moyen', type: 'currency' },
  { id: 'taxes', label: 'Taxes', type: 'currency' },
  { id: 'shipping', label: 'Livraison', type: 'currency' },
  { id: 'unique_customers', label: 'Clients uniques', type: 'number' },
  { id: 'new_customers', label: 'Nouveaux clients', type: 'number' },
  { id: 'returning_customers', label: 'Clients récurrents', type: 'number' },
] as const satisfies readonly CatalogEntry[];

export type DimensionId = (typeof DIMENSIONS)[number]['id'];
export type MetricId = (typeof METRICS)[number]['id'];

const dimensionIds: ReadonlySet<string> = new Set(DIMENSIONS.map((d) => d.id));
const metricIds: ReadonlySet<string> = new Set(METRICS.map((m) => m.id));

export const isDimensionId = (id: string): id is DimensionId => dimensionIds.has(id);
export const isMetricId = (id: string): id is MetricId => metricIds.has(id);

export const isCurrencyMetric = (id: MetricId): boolean =>
  METRICS.find((m) => m.id === id)?.type === 'currency';

/** S1 default excluded statuses and S2 default deductions. */
export const DEFAULT_EXCLUDED_STATUSES = ['pending', 'failed', 'cancelled', 'checkout-draft'] as const;
export const DEDUCTIONS = ['refunds', 'taxes', 'shipping', 'fees'] as const;
export type Deduction = (typeof DEDUCTIONS)[number];
export const DEFAULT_DEDUCTIONS: readonly Deduction[] = ['refunds', 'taxes', 'shipping'];

export interface ReportSettings {
  readonly excludedStatuses: readonly string[];
  readonly deductions: readonly Deduction[];
}
