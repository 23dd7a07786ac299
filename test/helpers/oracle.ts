// An independent oracle for GET /api/reports/tabular, written from ../shared/SPEC.md only (it
// imports nothing from src/): raw orders in the import format (section 12), the Report settings
// (S1, S2) and a query in, the response body and the truncation flag out, exactly as the SPEC says
// the API returns them. Money is integer cents in BigInt; instants are exact nanoseconds.
// Section 14 too: F1 filters, G2 granularity, O1 offset, their fields in the body, and the cells
// of a V1 CSV answer (csvCells). Section 15 too: order lines (L1), line dimensions and metrics at
// line and order grain (L2–L4), multi-valued categories (L5), line filters (L6), `sort` (L7).

export const DIMENSION_IDS = ['date', 'store', 'country', 'customer_type', 'status'] as const;
export const METRIC_IDS = [
  'orders',
  'items_sold',
  'gross_sales',
  'net_revenue',
  'average_order_value',
  'taxes',
  'shipping',
  'unique_customers',
  'new_customers',
  'returning_customers',
] as const;
/** L2, L3: section 15's dimensions and metrics (read from order lines). */
export const LINE_DIMENSION_IDS = ['product', 'product_id', 'variant', 'sku', 'category'] as const;
export const LINE_METRIC_IDS = [
  'units_sold',
  'units_refunded',
  'product_gross_sales',
  'product_discounts',
  'product_refunds',
  'product_net_sales',
] as const;
/** L4: the order metrics that mean something at line grain, counted distinct there. */
export const DISTINCT_AT_LINE_GRAIN = [
  'orders',
  'unique_customers',
  'new_customers',
  'returning_customers',
] as const;
export type LineDimensionId = (typeof LINE_DIMENSION_IDS)[number];
export type LineMetricId = (typeof LINE_METRIC_IDS)[number];
export type DimensionId = (typeof DIMENSION_IDS)[number] | LineDimensionId;
export type MetricId = (typeof METRIC_IDS)[number] | LineMetricId;
export type Deduction = 'refunds' | 'taxes' | 'shipping' | 'fees';

/** F1: the dimensions a report can be filtered on, in the order the body lists their filters. */
export const FILTER_DIMENSIONS = ['store', 'country', 'customer_type', 'status'] as const;
/** L6: the line filters, listed after F1's. */
export const ALL_FILTER_DIMENSIONS = [...FILTER_DIMENSIONS, ...LINE_DIMENSION_IDS] as const;
export type FilterDimension = (typeof ALL_FILTER_DIMENSIONS)[number];
export type Filters = Partial<Record<FilterDimension, readonly string[]>>;
/** G2 */
export const GRANULARITIES = ['day', 'week', 'month', 'quarter', 'year'] as const;
export type Granularity = (typeof GRANULARITIES)[number];
/** O1 */
export const MAX_OFFSET = 10_000_000;

/** One line of an order file (section 12), as a JSON object. */
export interface RawOrder {
  store: string;
  id: string;
  created_at: string;
  status: string;
  billing_country?: string | null;
  customer_email?: string | null;
  items: number | string;
  total: string | number;
  tax_total?: string | number;
  shipping_total?: string | number;
  fee_total?: string | number;
  refund_total?: string | number;
  refund_tax?: string | number;
  refund_shipping?: string | number;
  /** L1: the order's lines; absent, none. */
  lines?: RawLine[];
}

/** One order line (L1). */
export interface RawLine {
  line_id: string;
  product_id?: string | null;
  variant_id?: string | null;
  sku?: string | null;
  product_name: string;
  variant_name?: string | null;
  categories?: string[];
  quantity: number;
  subtotal: string | number;
  discount?: string | number;
  refunded_quantity?: number;
  refunded_amount?: string | number;
}

/** L7: one key of `sort`. */
export interface SortKey {
  id: string;
  descending: boolean;
}

export interface ReportSettings {
  /** S1 */
  excludedStatuses: readonly string[];
  /** S2 */
  deductions: readonly Deduction[];
}

export const DEFAULT_SETTINGS: ReportSettings = {
  excludedStatuses: ['pending', 'failed', 'cancelled', 'checkout-draft'],
  deductions: ['refunds', 'taxes', 'shipping'],
};

export interface OracleQuery {
  /** Ids after P1 (see resolveIds), known ids only. */
  dimensions: readonly DimensionId[];
  metrics: readonly MetricId[];
  /** YYYY-MM-DD, before the P4 cap. */
  from: string;
  to: string;
  /** IANA name, echoed as given (P5). */
  timezone: string;
  /** P6, default 10000. */
  limit?: number;
  /** F1: cleaned values per filterable dimension (none: no filter). */
  filters?: Filters;
  /** G2, default day. */
  granularity?: Granularity;
  /** O1, default 0. */
  offset?: number;
  /** PC1: the comparison as the request gave it (custom: with its two days, before P4's cap). */
  compare?: OracleCompare;
  /** L7: the row order's keys before T3's. */
  sort?: SortKey[];
}

/** PC1's parameters. */
export interface OracleCompare {
  mode: 'previous_period' | 'previous_year' | 'custom';
  from?: string;
  to?: string;
}

/** A row's fields; null only in PC1's comparison fields. */
export type Row = Record<string, string | number | null>;

/** T2: the fields of an answer, in order, when no parameter of section 14 is used. */
export const REFERENCE_FIELDS = [
  'dimensions',
  'metrics',
  'from',
  'to',
  'timezone',
  'rows',
  'rowCount',
] as const;

export interface OracleBody {
  dimensions: string[];
  metrics: string[];
  from: string;
  to: string;
  timezone: string;
  /** Section 14: present only when not the default (G2 `day`, no F1 filter, O1 0). */
  granularity?: Granularity;
  filters?: Filters;
  offset?: number;
  /** PC1: the comparison period used. */
  compare?: { mode: string; from: string; to: string };
  rows: Row[];
  rowCount: number;
}

export interface OracleAnswer {
  body: OracleBody;
  /** T6: the header X-Rows-Truncated: true is expected. */
  truncated: boolean;
  /** Rows before the offset and the limit (to choose offsets and limits that truncate). */
  totalRows: number;
}

// ---------------------------------------------------------------------------------------------
// P1: comma-separated ids, blanks trimmed, empty items ignored, duplicates removed (first kept);
// several occurrences of the parameter are joined.

export function resolveIds(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    for (const item of value.split(',')) {
      const id = item.trim();
      if (id !== '' && !out.includes(id)) out.push(id);
    }
  }
  return out;
}

/**
 * A valid request's query string → OracleQuery (P1 ids, P5 default UTC, P6 default 10000, and
 * section 14: F1 filters, G2 granularity, O1 offset). `from` and `to` must be present (their
 * defaults depend on today's date). Throws on a request the API must refuse.
 */
export function queryFromSearch(params: URLSearchParams): OracleQuery {
  const from = params.get('from');
  const to = params.get('to');
  if (from === null || to === null) throw new Error('oracle: from and to are required here');
  const dimensions = resolveIds(params.getAll('dimensions'));
  const metrics = resolveIds(params.getAll('metrics'));
  const filterIds = [...new Set([...params.keys()].filter((k) => k.startsWith('filter.')))].map((k) =>
    k.slice('filter.'.length),
  );
  const allDimensions: readonly string[] = [...DIMENSION_IDS, ...LINE_DIMENSION_IDS];
  const allMetrics: readonly string[] = [...METRIC_IDS, ...LINE_METRIC_IDS];
  const unknown = [
    ...dimensions.filter((d) => !allDimensions.includes(d)),
    ...filterIds.filter((f) => !(ALL_FILTER_DIMENSIONS as readonly string[]).includes(f)),
    ...metrics.filter((m) => !allMetrics.includes(m)),
  ];
  if (unknown.length > 0 || metrics.length === 0) throw new Error(`oracle: not a valid request (${unknown})`);
  // L4: at line grain, only the distinct counts and the line metrics.
  if (
    dimensions.some((d) => (LINE_DIMENSION_IDS as readonly string[]).includes(d)) &&
    metrics.some(
      (m) =>
        !(LINE_METRIC_IDS as readonly string[]).includes(m) &&
        !(DISTINCT_AT_LINE_GRAIN as readonly string[]).includes(m),
    )
  )
    throw new Error('oracle: INCOMPATIBLE_METRICS');
  // L7: requested ids, each once, `-` for descending; no empty key.
  const sortText = params.has('sort') ? params.getAll('sort').join(',') : undefined;
  const sort = sortText?.split(',').map((item) => {
    const key = item.trim();
    const descending = key.startsWith('-');
    const id = (descending ? key.slice(1) : key).trim();
    if (id === '' || ![...dimensions, ...metrics].includes(id))
      throw new Error(`oracle: invalid sort ${sortText}`);
    return { id, descending };
  });
  if (sort && new Set(sort.map((k) => k.id)).size !== sort.length) throw new Error(`oracle: sort key twice`);
  const limit = params.get('limit');

  // F1: P1-style values; the parameter given twice is joined; no value left → 400.
  const filters: Filters = {};
  for (const id of ALL_FILTER_DIMENSIONS) {
    if (!params.has(`filter.${id}`)) continue;
    const values = resolveIds(params.getAll(`filter.${id}`));
    if (values.length === 0) throw new Error(`oracle: filter.${id} has no value`);
    filters[id] = values;
  }
  const granularity = params.get('granularity') ?? 'day';
  if (!(GRANULARITIES as readonly string[]).includes(granularity)) {
    throw new Error(`oracle: invalid granularity ${JSON.stringify(granularity)}`);
  }
  const offsetText = params.get('offset');
  let offset = 0;
  if (offsetText !== null) {
    offset = /^[0-9]+$/.test(offsetText) ? Number(offsetText) : NaN;
    if (!(offset >= 0 && offset <= MAX_OFFSET)) throw new Error(`oracle: invalid offset ${offsetText}`);
  }
  const mode = params.get('compare');
  const compareFrom = params.get('compare_from');
  const compareTo = params.get('compare_to');
  if (mode !== null && !['previous_period', 'previous_year', 'custom'].includes(mode))
    throw new Error(`oracle: invalid compare ${mode}`);
  if ((compareFrom !== null || compareTo !== null) && mode !== 'custom')
    throw new Error('oracle: compare_from/compare_to without compare=custom');
  if (mode === 'custom' && (compareFrom === null || compareTo === null))
    throw new Error('oracle: compare=custom without its two days');
  const compare =
    mode === null
      ? undefined
      : ({
          mode,
          ...(compareFrom !== null ? { from: compareFrom } : {}),
          ...(compareTo !== null ? { to: compareTo } : {}),
        } as OracleCompare);
  return {
    ...(compare ? { compare } : {}),
    dimensions: dimensions as DimensionId[],
    metrics: metrics as MetricId[],
    from,
    to,
    timezone: params.get('timezone') ?? 'UTC',
    limit: limit === null ? undefined : Number(limit),
    ...(Object.keys(filters).length > 0 ? { filters } : {}),
    ...(granularity !== 'day' ? { granularity: granularity as Granularity } : {}),
    ...(offset !== 0 ? { offset } : {}),
    ...(sort ? { sort } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Money: decimal ≥ 0 with at most 2 decimals, as a string or a JSON number → integer cents.

export function parseCents(value: string | number | undefined | null): bigint {
  if (value === undefined || value === null || value === '') return 0n;
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = /^(\d+)(?:\.(\d{0,2}))?$/.exec(text);
  if (!match) throw new Error(`oracle: invalid amount ${JSON.stringify(value)}`);
  const cents = (match[2] ?? '').padEnd(2, '0');
  return BigInt(match[1] ?? '0') * 100n + BigInt(cents);
}

/** M1: cents (exact) to a JSON number with 2 decimals. */
export function centsToNumber(cents: bigint): number {
  const negative = cents < 0n;
  const abs = negative ? -cents : cents;
  const text = `${negative ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
  return Number(text);
}

/** M1: numerator / denominator in cents, rounded once to a cent, half away from zero. */
export function divideRounded(numerator: bigint, denominator: bigint): bigint {
  if (denominator === 0n) return 0n;
  const negative = numerator < 0n !== denominator < 0n;
  const n = numerator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  const q = (2n * n + d) / (2n * d);
  return negative ? -q : q;
}

// ---------------------------------------------------------------------------------------------
// Instants: exact nanoseconds since the epoch, from an ISO 8601 instant with Z or an offset.

const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|([+-])(\d{2}):?(\d{2}))$/;

export function parseInstantNs(text: string): bigint {
  const m = INSTANT.exec(text.trim());
  if (!m) throw new Error(`oracle: invalid created_at ${JSON.stringify(text)}`);
  const [, y, mo, d, h, mi, s, frac, zone, sign, oh, om] = m;
  const wallMs = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? '0'));
  let offsetMinutes = 0;
  if (zone !== 'Z') offsetMinutes = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const utcMs = wallMs - offsetMinutes * 60_000;
  const fractionNs = BigInt(((frac ?? '') + '000000000').slice(0, 9));
  return BigInt(utcMs) * 1_000_000n + fractionNs;
}

/** Midnight UTC of a YYYY-MM-DD day, in nanoseconds. */
export function dayStartNs(day: string): bigint {
  return BigInt(dayToMs(day)) * 1_000_000n;
}

function dayToMs(day: string): number {
  const [y, m, d] = day.split('-').map(Number);
  return Date.UTC(y ?? 0, (m ?? 1) - 1, d ?? 1);
}

function msToDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function addDays(day: string, days: number): string {
  return msToDay(dayToMs(day) + days * 86_400_000);
}

/** P4: the earliest allowed `from` is `to` minus two calendar years plus one day. */
export function earliestFrom(to: string): string {
  const [y, m, d] = to.split('-').map(Number);
  const year = (y ?? 0) - 2;
  const month = m ?? 1;
  // Minus two calendar years: 29 February of a non-leap year becomes the last day of February.
  const lastOfMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const day = Math.min(d ?? 1, lastOfMonth);
  const shifted = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  return addDays(shifted, 1);
}

const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** The day of an instant in an IANA time zone, YYYY-MM-DD (dimension `date`). */
export function dayInZone(instantNs: bigint, timeZone: string): string {
  let format = dayFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hourCycle: 'h23',
    });
    dayFormats.set(timeZone, format);
  }
  // Floor to the millisecond: day boundaries fall on whole seconds, so the day is unchanged.
  let ms = instantNs / 1_000_000n;
  if (instantNs < 0n && instantNs % 1_000_000n !== 0n) ms -= 1n;
  const parts = format.formatToParts(new Date(Number(ms)));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year').padStart(4, '0')}-${get('month')}-${get('day')}`;
}

/** The weekday of a YYYY-MM-DD day: 0 for Monday … 6 for Sunday (ISO 8601). */
export function isoWeekday(day: string): number {
  return (new Date(dayToMs(day)).getUTCDay() + 6) % 7;
}

/**
 * G2: the first day of the bucket a local day falls in: the day itself, the Monday of its ISO
 * week, the first day of its month, of its quarter (January, April, July, October) or of its year.
 */
export function bucketOf(day: string, granularity: Granularity): string {
  const [y, m] = day.split('-') as [string, string, string];
  switch (granularity) {
    case 'day':
      return day;
    case 'week':
      return addDays(day, -isoWeekday(day));
    case 'month':
      return `${y}-${m}-01`;
    case 'quarter':
      return `${y}-${String(Math.floor((Number(m) - 1) / 3) * 3 + 1).padStart(2, '0')}-01`;
    case 'year':
      return `${y}-01-01`;
  }
}

// ---------------------------------------------------------------------------------------------
// Orders

/** Section 1 / README: a store's address loses its trailing slashes. */
export function storeAddress(store: string): string {
  return store.trim().replace(/\/+$/, '');
}

/** U1: trimmed, lower-cased email when usable; undefined for an anonymous order. */
export function customerOf(email: string | null | undefined): string | undefined {
  if (email === undefined || email === null) return undefined;
  const value = email.trim().toLowerCase();
  if (/\s/.test(value)) return undefined;
  const parts = value.split('@');
  if (parts.length !== 2) return undefined;
  const [local, domain] = parts as [string, string];
  if (local === '' || !domain.includes('.')) return undefined;
  return value;
}

/** §5 country: upper-cased; `Unknown` when missing or empty. */
export function countryOf(country: string | null | undefined): string {
  const value = (country ?? '').trim();
  return value === '' ? 'Unknown' : value.toUpperCase();
}

/** A line as L2 and L3 read it: text values with `Unknown` for missing ones, amounts in cents. */
interface Line {
  product: string;
  product_id: string;
  variant: string;
  sku: string;
  /** L5: `Unknown` alone when the line has none. */
  categories: string[];
  units: bigint;
  refundedUnits: bigint;
  gross: bigint;
  discount: bigint;
  refunded: bigint;
}

/** L2: a missing text value (absent or empty) is `Unknown`. */
const textOrUnknown = (value: string | null | undefined): string =>
  value === undefined || value === null || value === '' ? 'Unknown' : value;

function normalizeLine(raw: RawLine): Line {
  return {
    product: textOrUnknown(raw.product_name),
    product_id: textOrUnknown(raw.product_id),
    variant: textOrUnknown(raw.variant_name),
    sku: textOrUnknown(raw.sku),
    categories: raw.categories && raw.categories.length > 0 ? [...raw.categories] : ['Unknown'],
    units: BigInt(raw.quantity),
    refundedUnits: BigInt(raw.refunded_quantity ?? 0),
    gross: parseCents(raw.subtotal),
    discount: parseCents(raw.discount),
    refunded: parseCents(raw.refunded_amount),
  };
}

interface Order {
  key: string;
  lines: Line[];
  store: string;
  status: string;
  country: string;
  customer: string | undefined;
  at: bigint;
  items: bigint;
  total: bigint;
  tax: bigint;
  shipping: bigint;
  fee: bigint;
  refund: bigint;
  refundTax: bigint;
  refundShipping: bigint;
}

function normalize(raw: RawOrder): Order {
  return {
    key: `${storeAddress(raw.store)}\u0000${String(raw.id)}`,
    lines: (raw.lines ?? []).map(normalizeLine),
    store: storeAddress(raw.store),
    status: raw.status,
    country: countryOf(raw.billing_country),
    customer: customerOf(raw.customer_email),
    at: parseInstantNs(raw.created_at),
    items: BigInt(typeof raw.items === 'string' ? raw.items.trim() : raw.items),
    total: parseCents(raw.total),
    tax: parseCents(raw.tax_total),
    shipping: parseCents(raw.shipping_total),
    fee: parseCents(raw.fee_total),
    refund: parseCents(raw.refund_total),
    refundTax: parseCents(raw.refund_tax),
    refundShipping: parseCents(raw.refund_shipping),
  };
}

/** An organization's orders after every import: same (store, id) replaces the earlier one (I2). */
export function currentOrders(lines: readonly RawOrder[]): RawOrder[] {
  const byKey = new Map<string, RawOrder>();
  for (const line of lines) {
    const key = `${storeAddress(line.store)}\u0000${String(line.id)}`;
    byKey.delete(key);
    byKey.set(key, line);
  }
  return [...byKey.values()];
}

/**
 * The normalized current orders of the last few line lists, by their JSON text: a test asks the
 * oracle hundreds of times about the same ~2,000 lines, and normalizing them (BigInt cents,
 * nanosecond instants) cost more CPU than the service answering. Keyed by content, not by the
 * array, so a list changed in place is never answered from a stale copy.
 */
const normalizedByText = new Map<string, readonly Order[]>();
const NORMALIZED_KEPT = 4;

/**
 * Line lists frozen whole by freezeLines(): nothing can change them in place, so their normalized
 * orders are kept by the list itself, without the JSON text per question (which, ~2,000 lines
 * asked about hundreds of times, cost a quarter of the oracle test's CPU).
 */
const frozenLists = new WeakSet<readonly RawOrder[]>();
const normalizedByList = new WeakMap<readonly RawOrder[], readonly Order[]>();

/** Freezes a line list and everything in it (throws on any later change); returns the list. */
export function freezeLines<T extends RawOrder>(lines: T[]): T[] {
  const freeze = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
    Object.freeze(value);
    for (const inner of Object.values(value)) freeze(inner);
  };
  freeze(lines);
  frozenLists.add(lines);
  return lines;
}

function normalizedCurrentOrders(lines: readonly RawOrder[]): readonly Order[] {
  if (frozenLists.has(lines)) {
    let kept = normalizedByList.get(lines);
    if (!kept) normalizedByList.set(lines, (kept = currentOrders(lines).map(normalize)));
    return kept;
  }
  const text = JSON.stringify(lines);
  let orders = normalizedByText.get(text);
  if (!orders) {
    orders = currentOrders(lines).map(normalize);
    if (normalizedByText.size >= NORMALIZED_KEPT) normalizedByText.clear();
    normalizedByText.set(text, orders);
  }
  return orders;
}

/** S2: net(order), deducting a refund once. */
export function netCents(order: Order, deductions: readonly Deduction[]): bigint {
  const refunds = deductions.includes('refunds');
  let net = order.total;
  if (refunds) net -= order.refund;
  if (deductions.includes('taxes')) net -= order.tax - (refunds ? order.refundTax : 0n);
  if (deductions.includes('shipping')) net -= order.shipping - (refunds ? order.refundShipping : 0n);
  if (deductions.includes('fees')) net -= order.fee;
  return net;
}

/** T3: compare strings by Unicode code point. */
export function compareCodePoints(a: string, b: string): number {
  const ca = [...a];
  const cb = [...b];
  const n = Math.min(ca.length, cb.length);
  for (let i = 0; i < n; i++) {
    const x = ca[i]!.codePointAt(0)!;
    const y = cb[i]!.codePointAt(0)!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return ca.length - cb.length;
}

interface Group {
  values: string[];
  /** L4: distinct orders (one row per line at line grain). */
  orderKeys: Set<string>;
  units: bigint;
  refundedUnits: bigint;
  lineGross: bigint;
  lineDiscounts: bigint;
  lineRefunds: bigint;
  items: bigint;
  gross: bigint;
  net: bigint;
  taxes: bigint;
  shipping: bigint;
  customers: Set<string>;
  newCustomers: Set<string>;
  returningCustomers: Set<string>;
}

function emptyGroup(values: string[]): Group {
  return {
    values,
    orderKeys: new Set(),
    units: 0n,
    refundedUnits: 0n,
    lineGross: 0n,
    lineDiscounts: 0n,
    lineRefunds: 0n,
    items: 0n,
    gross: 0n,
    net: 0n,
    taxes: 0n,
    shipping: 0n,
    customers: new Set(),
    newCustomers: new Set(),
    returningCustomers: new Set(),
  };
}

/**
 * The expected answer of GET /api/reports/tabular for an organization whose imported lines are
 * `lines` (in import order, replacements included).
 */
export function oracle(
  lines: readonly RawOrder[],
  settings: ReportSettings,
  query: OracleQuery,
): OracleAnswer {
  const excluded = new Set(settings.excludedStatuses);
  // S1: excluded orders count nowhere.
  const counted = normalizedCurrentOrders(lines).filter((o) => !excluded.has(o.status));

  // U2: first order of each customer, across all stores, whatever the period.
  const firstOrder = new Map<string, bigint>();
  for (const o of counted) {
    if (o.customer === undefined) continue;
    const seen = firstOrder.get(o.customer);
    if (seen === undefined || o.at < seen) firstOrder.set(o.customer, o.at);
  }

  // P4 then T1.
  const to = query.to;
  const cap = earliestFrom(to);
  const from = query.from < cap ? cap : query.from;
  const granularity = query.granularity ?? 'day';
  const filters = query.filters ?? {};
  const groups = periodGroups(counted, firstOrder, settings, query, from, to);
  // T5: no dimension, exactly one row (zeros without orders). T4: otherwise only non-empty groups.
  if (query.dimensions.length === 0 && groups.size === 0) groups.set('[]', emptyGroup([]));
  const comparison = query.compare && comparisonPeriod(query.compare, from, to);
  const allRows = comparison
    ? comparedRows(
        query,
        groups,
        periodGroups(counted, firstOrder, settings, query, comparison.from, comparison.to),
        { from, to },
        comparison,
      )
    : sortedGroups(groups).map((g) => {
        const row: Row = {};
        query.dimensions.forEach((d, i) => (row[d] = g.values[i]!));
        for (const m of query.metrics) row[m] = metricValue(g, m);
        return row;
      });
  // L7: the sort keys first (rows are in T3 order already, and the sort is stable: ties keep it).
  if (query.sort) allRows.sort((a, b) => compareBySort(a, b, query.sort!));
  // O1 then T6: skip `offset` rows (T5's single row too), keep `limit`; truncated when rows remain.
  const limit = query.limit ?? 10_000;
  const offset = query.offset ?? 0;
  const rows = allRows.slice(offset, offset + limit);
  // Section 14's fields only when they differ from their defaults, between timezone and rows.
  const given = ALL_FILTER_DIMENSIONS.filter((d) => filters[d] !== undefined);
  const body: OracleBody = {
    dimensions: [...query.dimensions],
    metrics: [...query.metrics],
    from,
    to,
    timezone: query.timezone,
    // G2: without the date dimension the granularity changes nothing, its echo included.
    ...(granularity !== 'day' && query.dimensions.includes('date') ? { granularity } : {}),
    ...(given.length > 0 ? { filters: Object.fromEntries(given.map((d) => [d, [...filters[d]!]])) } : {}),
    ...(offset !== 0 ? { offset } : {}),
    ...(comparison ? { compare: { mode: query.compare!.mode, ...comparison } } : {}),
    rows,
    rowCount: rows.length,
  };
  return {
    body,
    truncated: allRows.length > offset + limit,
    totalRows: allRows.length,
  };
}

/**
 * V1: the cells a CSV answer holds once parsed (RFC 4180 quoting undone): a header line of the
 * ids, dimensions then metrics, then each row's values as JSON writes them; a text cell that
 * begins with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, numbers never.
 */
export function csvCells(body: OracleBody): string[][] {
  // PC1: the compared row's fields, in its order, null as an empty cell.
  const ids = body.compare
    ? [
        ...body.dimensions.flatMap((d) => (d === 'date' ? [d, 'date_previous'] : [d])),
        ...body.metrics,
        ...body.metrics.map((m) => `${m}_previous`),
        ...body.metrics.map((m) => `${m}_change`),
      ]
    : [...body.dimensions, ...body.metrics];
  const cell = (value: string | number | null): string => {
    if (value === null) return '';
    if (typeof value === 'number') return JSON.stringify(value);
    return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  };
  return [ids, ...body.rows.map((row) => ids.map((id) => cell(row[id] ?? null)))];
}

/**
 * V1: RFC 4180's grammar (section 2 and its ABNF): records of fields separated by commas and ended
 * by CRLF (the last one may lack it); a field holding a comma, a quote, a CR or an LF is enclosed
 * in quotes, a quote inside doubled. Undefined when `text` follows it, else where it does not.
 */
export function rfc4180Violation(text: string): string | undefined {
  let i = 0;
  let record = 1;
  while (i < text.length) {
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) return `record ${record}: a quoted field is not closed`;
        if (text[i] === '"') {
          if (text[i + 1] !== '"') break;
          i++;
        }
        i++;
      }
      i++; // the closing quote
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') return `record ${record}: a quote inside an unquoted field`;
        i++;
      }
    }
    if (i >= text.length) return undefined; // the last record, without its CRLF
    if (text[i] === ',') {
      i++;
      if (i >= text.length) return undefined; // an empty last field
    } else if (text[i] === '\r' && text[i + 1] === '\n') {
      i += 2;
      record++;
    } else {
      const near = JSON.stringify(text.slice(Math.max(0, i - 10), i + 10));
      return `record ${record}, near ${near}: ${JSON.stringify(text[i])} outside quotes where a field must end`;
    }
  }
  return undefined;
}

function metricValue(g: Group, metric: MetricId): number {
  switch (metric) {
    case 'orders':
      return g.orderKeys.size;
    case 'units_sold':
      return Number(g.units - g.refundedUnits);
    case 'units_refunded':
      return Number(g.refundedUnits);
    case 'product_gross_sales':
      return centsToNumber(g.lineGross);
    case 'product_discounts':
      return centsToNumber(g.lineDiscounts);
    case 'product_refunds':
      return centsToNumber(g.lineRefunds);
    case 'product_net_sales':
      return centsToNumber(g.lineGross - g.lineDiscounts - g.lineRefunds);
    case 'items_sold':
      return Number(g.items);
    case 'gross_sales':
      return centsToNumber(g.gross);
    case 'net_revenue':
      return centsToNumber(g.net);
    case 'average_order_value':
      return centsToNumber(divideRounded(g.net, BigInt(g.orderKeys.size)));
    case 'taxes':
      return centsToNumber(g.taxes);
    case 'shipping':
      return centsToNumber(g.shipping);
    case 'unique_customers':
      return g.customers.size;
    case 'new_customers':
      return g.newCustomers.size;
    case 'returning_customers':
      return g.returningCustomers.size;
  }
}

/** L7: metrics (the main period's, as written) as numbers, dimensions as T3; `-` reverses. */
function compareBySort(a: Row, b: Row, keys: readonly SortKey[]): number {
  for (const { id, descending } of keys) {
    const x = a[id];
    const y = b[id];
    const c =
      typeof x === 'number' && typeof y === 'number'
        ? Math.sign(x - y)
        : compareCodePoints(String(x), String(y));
    if (c !== 0) return descending ? -c : c;
  }
  return 0;
}

/** T3: groups by their values, first dimension first, by code point. */
function sortedGroups(groups: Map<string, Group>): Group[] {
  return [...groups.values()].sort((a, b) => compareValues(a.values, b.values));
}

function compareValues(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareCodePoints(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

/** The groups of the counted orders of [from, to] (T1; U3 relative to `from`; F1; G2). */
function periodGroups(
  counted: readonly Order[],
  firstOrder: ReadonlyMap<string, bigint>,
  settings: ReportSettings,
  query: OracleQuery,
  from: string,
  to: string,
): Map<string, Group> {
  const start = dayStartNs(from);
  const end = dayStartNs(addDays(to, 1));
  const granularity = query.granularity ?? 'day';
  const filters = query.filters ?? {};
  const groups = new Map<string, Group>();
  for (const o of counted) {
    if (o.at < start || o.at >= end) continue;
    let type: 'anonymous' | 'new' | 'returning' = 'anonymous';
    if (o.customer !== undefined) {
      // U2 looks at every counted order: filters never change a customer's first order.
      const first = firstOrder.get(o.customer)!;
      type = first >= start ? 'new' : 'returning';
    }
    // F1: every filter given must hold (AND), on the value the row would show.
    const shown: Record<(typeof FILTER_DIMENSIONS)[number], string> = {
      store: o.store,
      country: o.country,
      customer_type: type,
      status: o.status,
    };
    if (FILTER_DIMENSIONS.some((d) => filters[d] !== undefined && !filters[d].includes(shown[d]))) continue;
    // L6: the lines that match every line filter; with one, an order without a kept line is out.
    const lineFilters = LINE_DIMENSION_IDS.filter((d) => filters[d] !== undefined);
    const kept = o.lines.filter((line) =>
      lineFilters.every((d) =>
        d === 'category'
          ? line.categories.some((c) => filters.category!.includes(c))
          : filters[d]!.includes(line[d]),
      ),
    );
    if (lineFilters.length > 0 && kept.length === 0) continue;
    const orderValue = (d: (typeof DIMENSION_IDS)[number]): string => {
      switch (d) {
        case 'date':
          return bucketOf(dayInZone(o.at, query.timezone), granularity);
        case 'store':
          return o.store;
        case 'country':
          return o.country;
        case 'customer_type':
          return type;
        case 'status':
          return o.status;
      }
    };
    const groupOf = (values: string[]): Group => {
      const key = JSON.stringify(values);
      let group = groups.get(key);
      if (!group) {
        group = emptyGroup(values);
        groups.set(key, group);
      }
      return group;
    };
    const isLine = (d: DimensionId): d is LineDimensionId =>
      (LINE_DIMENSION_IDS as readonly string[]).includes(d);
    if (!query.dimensions.some(isLine)) {
      // Order grain: one row per order, line metrics over its kept lines.
      const group = groupOf(query.dimensions.map((d) => orderValue(d as (typeof DIMENSION_IDS)[number])));
      addOrder(group, o, type, settings);
      for (const line of kept) addLine(group, line);
      continue;
    }
    // L4 line grain: one row per kept line; L5: per category of the line with the category
    // dimension (only the filtered ones when category is filtered too), once each.
    for (const line of kept) {
      const categories = query.dimensions.includes('category')
        ? [...new Set(line.categories)].filter((c) => !filters.category || filters.category.includes(c))
        : [''];
      for (const category of categories) {
        const values = query.dimensions.map((d) =>
          !isLine(d) ? orderValue(d) : d === 'category' ? category : line[d],
        );
        const group = groupOf(values);
        addOrder(group, o, type, settings);
        addLine(group, line);
      }
    }
  }
  return groups;
}

/** An order into a row, once however many of its lines the row holds (L4's distinct counts). */
function addOrder(group: Group, o: Order, type: string, settings: ReportSettings): void {
  if (group.orderKeys.has(o.key)) return;
  group.orderKeys.add(o.key);
  group.items += o.items;
  group.gross += o.total;
  group.net += netCents(o, settings.deductions);
  group.taxes += o.tax;
  group.shipping += o.shipping;
  if (o.customer !== undefined) {
    group.customers.add(o.customer);
    if (type === 'new') group.newCustomers.add(o.customer);
    if (type === 'returning') group.returningCustomers.add(o.customer);
  }
}

/** L3: a line's amounts into a row. */
function addLine(group: Group, line: Line): void {
  group.units += line.units;
  group.refundedUnits += line.refundedUnits;
  group.lineGross += line.gross;
  group.lineDiscounts += line.discount;
  group.lineRefunds += line.refunded;
}

// ---------------------------------------------------------------------------------------------
// PC1: period comparisons.

/** Days of [from, to], both counted. */
function daysOf(from: string, to: string): number {
  return Math.round((dayToMs(to) - dayToMs(from)) / 86_400_000) + 1;
}

/** One calendar year earlier; 29 February becomes 28 February (the year before a leap year is not one). */
function oneYearEarlier(day: string): string {
  const [y, m, d] = day.split('-') as [string, string, string];
  const year = String(Number(y) - 1).padStart(4, '0');
  return `${year}-${m}-${m === '02' && d === '29' ? '28' : d}`;
}

/** PC1: the comparison period, after P4's cap on the main one (and on a custom one, keeping its to). */
export function comparisonPeriod(
  compare: OracleCompare,
  from: string,
  to: string,
): { from: string; to: string } {
  switch (compare.mode) {
    case 'previous_period': {
      const end = addDays(from, -1);
      return { from: addDays(end, -(daysOf(from, to) - 1)), to: end };
    }
    case 'previous_year':
      return { from: oneYearEarlier(from), to: oneYearEarlier(to) };
    case 'custom': {
      const cap = earliestFrom(compare.to!);
      return { from: compare.from! < cap ? cap : compare.from!, to: compare.to! };
    }
  }
}

/**
 * The first day of each G2 bucket of a period, in order: from the bucket holding its first instant
 * (`from` 00:00 UTC) to the one holding its last, in the zone, listed day by day.
 */
function periodBuckets(from: string, to: string, timeZone: string, granularity: Granularity): string[] {
  const first = dayInZone(dayStartNs(from), timeZone);
  const last = dayInZone(dayStartNs(addDays(to, 1)) - 1n, timeZone);
  const buckets: string[] = [];
  for (let day = first; day <= last; day = addDays(day, 1)) {
    const bucket = bucketOf(day, granularity);
    if (buckets[buckets.length - 1] !== bucket) buckets.push(bucket);
  }
  return buckets;
}

/**
 * PC1: `<metric>_change` from the two values as written: (value − previous) / previous × 100 in
 * hundredths (every value is a whole number of cents), rounded half away from zero to a tenth.
 */
export function changeOf(value: number, previous: number | null): number | null {
  if (previous === null || previous === 0) return null;
  const v = parseSignedCents(value);
  const p = parseSignedCents(previous);
  const tenths = divideRounded((v - p) * 1000n, p);
  const negative = tenths < 0n;
  const abs = negative ? -tenths : tenths;
  return Number(`${negative ? '-' : ''}${abs / 10n}.${abs % 10n}`);
}

function parseSignedCents(value: number): bigint {
  return value < 0 ? -parseCents(-value) : parseCents(value);
}

/**
 * PC1: the matched rows: the comparison's k-th bucket on the main period's k-th, the other
 * dimensions by value, a row for every combination with an order in either period, in T3 order
 * of the main period's values.
 */
function comparedRows(
  query: OracleQuery,
  main: Map<string, Group>,
  previous: Map<string, Group>,
  mainPeriod: { from: string; to: string },
  comparison: { from: string; to: string },
): Row[] {
  const granularity = query.granularity ?? 'day';
  const dateAt = query.dimensions.indexOf('date');
  const mainBuckets = periodBuckets(mainPeriod.from, mainPeriod.to, query.timezone, granularity);
  const previousBuckets = periodBuckets(comparison.from, comparison.to, query.timezone, granularity);
  const rows = new Map<string, { values: string[]; main?: Group; previous?: Group }>();
  for (const g of main.values()) rows.set(JSON.stringify(g.values), { values: g.values, main: g });
  for (const g of previous.values()) {
    const values = [...g.values];
    if (dateAt >= 0) {
      const k = previousBuckets.indexOf(values[dateAt]!);
      if (k < 0) throw new Error(`oracle: ${values[dateAt]} is not a bucket of the comparison`);
      if (k >= mainBuckets.length) continue; // past the main period's buckets
      values[dateAt] = mainBuckets[k]!;
    }
    const key = JSON.stringify(values);
    const row = rows.get(key) ?? { values };
    row.previous = g;
    rows.set(key, row);
  }
  if (query.dimensions.length === 0 && rows.size === 0) rows.set('[]', { values: [] });
  return [...rows.values()]
    .sort((a, b) => compareValues(a.values, b.values))
    .map(({ values, main: m, previous: p }) => {
      const row: Row = {};
      let hasPrevious = true;
      query.dimensions.forEach((d, i) => {
        row[d] = values[i]!;
        if (d === 'date') {
          const k = mainBuckets.indexOf(values[i]!);
          hasPrevious = k < previousBuckets.length;
          row.date_previous = hasPrevious ? previousBuckets[k]! : null;
        }
      });
      const current = (metric: MetricId) => metricValue(m ?? emptyGroup([]), metric);
      const before = (metric: MetricId) => (hasPrevious ? metricValue(p ?? emptyGroup([]), metric) : null);
      for (const metric of query.metrics) row[metric] = current(metric);
      for (const metric of query.metrics) row[`${metric}_previous`] = before(metric);
      for (const metric of query.metrics) row[`${metric}_change`] = changeOf(current(metric), before(metric));
      return row;
    });
}
