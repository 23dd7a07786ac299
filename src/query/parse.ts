// Step 1 of the pipeline: the raw query string into a checked TabularQuery (SPEC section 6).
import {
  atLineGrain,
  dimensionGrain,
  isDimensionId,
  isMetricId,
  type DimensionId,
  type MetricId,
} from '../catalog.js';
import { AppError, appError, ERROR_KINDS, invalidParameter, quoted } from '../errors.js';
import { resolveComparison, type Comparison } from './compare.js';
import { FIRST_DAY, GRANULARITIES, isGranularity, LAST_DAY, type Granularity } from './dates.js';
import { requirePeriod } from './period.js';

export type RawQuery = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface TabularQuery {
  readonly dimensions: readonly DimensionId[];
  readonly metrics: readonly MetricId[];
  /** First and last UTC day, after the two-year cap (P4). */
  readonly from: string;
  readonly to: string;
  /** As the request gave it (P5). */
  readonly timezone: string;
  readonly limit: number;
  /** F1: per filterable dimension, the values a row must have one of (AND across dimensions). */
  readonly filters: Filters;
  /** G2: the `date` dimension's bucket. */
  readonly granularity: Granularity;
  /** O1: rows skipped, in T3 order, before `limit` applies. */
  readonly offset: number;
  /** PC1: the comparison period, when the request asks for one. */
  readonly comparison?: Comparison;
  /** L7: the row order, when the request gives one (T3 otherwise). */
  readonly sort?: readonly SortKey[];
}

/** L7: one key of `sort`: a requested dimension or metric, ascending or descending. */
export interface SortKey {
  readonly id: DimensionId | MetricId;
  readonly descending: boolean;
}

/** F1 then L6: the dimensions a report can be filtered on, in the order the answer echoes them. */
export const FILTER_DIMENSIONS = [
  'store',
  'country',
  'customer_type',
  'status',
  'product',
  'product_id',
  'variant',
  'sku',
  'category',
] as const satisfies readonly DimensionId[];
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];
export type Filters = Readonly<Partial<Record<FilterDimension, readonly string[]>>>;
export const FILTER_PREFIX = 'filter.';
/** F1: values of one filter at most (the URL's own bound, 16 KiB of headers, comes first). */
export const MAX_FILTER_VALUES = 1_000;

/** Section 14's parameters at their defaults: a request without them answers as sections 6–11 say. */
export const NO_EXTENSIONS = { filters: {}, granularity: 'day', offset: 0 } as const satisfies Pick<
  TabularQuery,
  'filters' | 'granularity' | 'offset'
>;

/** V1: the body's format. */
export const FORMATS = ['json', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

export interface ParseContext {
  /** Today's UTC day, the default `to` (P3). */
  readonly today?: string;
  /** True for an IANA zone name the database knows (P5). */
  readonly isTimeZone: (name: string) => boolean;
  /**
   * The zones whose local day is still in year 0 at 0001-01-01 00:00 UTC, or already in year
   * 10000 at the end of 9999-12-31 UTC (the database's zone rules): with them a `date` value
   * could not be written YYYY-MM-DD (G2, T3). Unknown: no period is refused for it.
   */
  readonly calendarEdges?: {
    readonly beforeYear1: ReadonlySet<string>;
    readonly afterYear9999: ReadonlySet<string>;
  };
}

export const DEFAULT_LIMIT = 10_000;
export const MAX_LIMIT = 100_000;
export const MAX_OFFSET = 10_000_000;

/** P1: comma-separated ids, trimmed, empties dropped, duplicates removed keeping the first. */
export function parseIdList(value: string | readonly string[] | undefined): string[] {
  const parts = (value === undefined ? [] : typeof value === 'string' ? [value] : value).flatMap((v) =>
    v.split(','),
  );
  return [...new Set(parts.map((p) => p.trim()).filter((p) => p !== ''))];
}

function single(raw: RawQuery, name: string): string | undefined {
  const value = raw[name];
  if (value === undefined || typeof value === 'string') return value;
  if (value.length === 1) return value[0];
  throw new AppError(
    'INVALID_PARAMETER',
    `Paramètre ${name} donné plusieurs fois : une seule valeur est attendue`,
  );
}

/** P6, O1: a decimal integer in [min, max] (digits only: no sign, point or exponent), or the default. */
function integerParameter(raw: RawQuery, name: string, fallback: number, min: number, max: number): number {
  const text = single(raw, name);
  if (text === undefined) return fallback;
  // At most one digit more than the maximum has (one leading zero), as P6 has always read it.
  const digits = new RegExp(`^[0-9]{1,${String(max).length + 1}}$`);
  const value = digits.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max))
    throw invalidParameter(name, text, `entier de ${min} à ${max} attendu`);
  return value;
}

function granularity(raw: RawQuery): Granularity {
  const text = single(raw, 'granularity');
  if (text === undefined) return NO_EXTENSIONS.granularity;
  if (!isGranularity(text))
    throw invalidParameter('granularity', text, `${GRANULARITIES.join(', ')} attendu`);
  return text;
}

const isFilterDimension = (id: string): id is FilterDimension => FILTER_DIMENSIONS.some((d) => d === id);

/** F1: `filter.X` parameters; the X that are not filterable dimensions, in request order. */
function filters(raw: RawQuery): { filters: Filters; unknown: string[] } {
  const found: Partial<Record<FilterDimension, readonly string[]>> = {};
  const unknown: string[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (!name.startsWith(FILTER_PREFIX) || value === undefined) continue;
    const id = name.slice(FILTER_PREFIX.length);
    if (!isFilterDimension(id)) {
      unknown.push(id);
      continue;
    }
    const values = parseIdList(value);
    const withNul = values.find((v) => v.includes('\u0000'));
    // No stored value has one (the import refuses it), and PostgreSQL's text refuses it outright.
    if (withNul !== undefined) throw invalidParameter(name, withNul, 'caractère NUL interdit');
    if (values.length === 0) {
      throw invalidParameter(
        name,
        typeof value === 'string' ? value : value.join(','),
        'au moins une valeur attendue, séparées par des virgules',
      );
    }
    if (values.length > MAX_FILTER_VALUES) {
      throw invalidParameter(name, values.slice(0, 3).join(','), `au plus ${MAX_FILTER_VALUES} valeurs`);
    }
    found[id] = values;
  }
  const ordered: Partial<Record<FilterDimension, readonly string[]>> = {};
  for (const id of FILTER_DIMENSIONS) if (found[id]) ordered[id] = found[id];
  return { filters: ordered, unknown };
}

/** V1: `format`, when the request gives one (the Accept header decides otherwise). */
export function parseFormat(raw: RawQuery): Format | undefined {
  const text = single(raw, 'format');
  if (text === undefined) return undefined;
  if (!FORMATS.some((f) => f === text))
    throw invalidParameter('format', text, `${FORMATS.join(' ou ')} attendu`);
  return text === 'csv' ? 'csv' : 'json';
}

export function parseTabularQuery(raw: RawQuery, context: ParseContext): TabularQuery {
  const dimensionIds = parseIdList(raw.dimensions);
  const metricIds = parseIdList(raw.metrics);
  const filtered = filters(raw);
  const unknownDimensions = [
    ...new Set([...dimensionIds.filter((id) => !isDimensionId(id)), ...filtered.unknown]),
  ];
  const unknownMetrics = metricIds.filter((id) => !isMetricId(id));
  if (unknownDimensions.length > 0 || unknownMetrics.length > 0) {
    throw new AppError('UNKNOWN_IDENTIFIERS', ERROR_KINDS.UNKNOWN_IDENTIFIERS.message(), {
      unknownDimensions,
      unknownMetrics,
    });
  }
  if (metricIds.length === 0) {
    throw appError('MISSING_METRICS');
  }
  const dimensions = dimensionIds.filter(isDimensionId);
  const metrics = metricIds.filter(isMetricId);
  checkGrain(dimensions, metrics); // L4
  const sort = sortKeys(raw, dimensions, metrics); // L7
  const { from, to } = requirePeriod(single(raw, 'from'), single(raw, 'to'), context.today); // P3, P4
  const timezone = single(raw, 'timezone') ?? 'UTC';
  if (!context.isTimeZone(timezone)) {
    throw invalidParameter(
      'timezone',
      timezone,
      'nom de fuseau horaire IANA attendu, par exemple Europe/Paris',
    );
  }
  const bucket = granularity(raw);
  const comparison = resolveComparison(
    {
      compare: single(raw, 'compare'),
      compare_from: single(raw, 'compare_from'),
      compare_to: single(raw, 'compare_to'),
    },
    { from, to },
    context.today,
  ); // PC1
  if (dimensionIds.includes('date')) {
    checkCalendarEdges(from, to, timezone, context);
    if (comparison) checkCalendarEdges(comparison.from, comparison.to, timezone, context);
  }
  return {
    dimensions,
    metrics,
    from,
    to,
    timezone,
    limit: integerParameter(raw, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT),
    filters: filtered.filters,
    // G2: checked always; without the date dimension it changes nothing, not even the echo or the cache entry.
    granularity: dimensionIds.includes('date') ? bucket : NO_EXTENSIONS.granularity,
    offset: integerParameter(raw, 'offset', NO_EXTENSIONS.offset, 0, MAX_OFFSET),
    ...(comparison ? { comparison } : {}),
    ...(sort ? { sort } : {}),
  };
}

/**
 * L4: at line grain (a line dimension is asked), the order metrics the catalog refuses there are a
 * 400 naming each, with its line replacement, in request order.
 */
function checkGrain(dimensions: readonly DimensionId[], metrics: readonly MetricId[]): void {
  if (!dimensions.some((id) => dimensionGrain(id) === 'line')) return;
  const refused = metrics.flatMap((id) => {
    const reading = atLineGrain(id);
    if (reading.kind !== 'refused') return [];
    return [reading.replacement === undefined ? { id } : { id, replacement: reading.replacement }];
  });
  if (refused.length === 0) return;
  const error = appError('INCOMPATIBLE_METRICS', refused);
  throw new AppError(error.code, error.message, { incompatibleMetrics: refused.map((m) => m.id) });
}

/** L7: `sort`'s keys, each a requested id once, `-` for descending; undefined without `sort`. */
function sortKeys(
  raw: RawQuery,
  dimensions: readonly DimensionId[],
  metrics: readonly MetricId[],
): SortKey[] | undefined {
  const value = raw.sort;
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value : value.join(',');
  const requested: readonly string[] = [...dimensions, ...metrics];
  const keys: SortKey[] = [];
  for (const item of text.split(',')) {
    const key = item.trim();
    const descending = key.startsWith('-');
    const id = descending ? key.slice(1) : key;
    if (id.trim() === '')
      throw invalidParameter('sort', text, 'clé vide : des identifiants séparés par des virgules');
    // `- orders` is no key of the OpenAPI document's (D1): refused here in French, not by the schema.
    if (id !== id.trim()) throw invalidParameter('sort', text, 'pas d’espace entre « - » et l’identifiant');
    const known = requested.find((r): r is DimensionId | MetricId => r === id);
    if (known === undefined)
      throw invalidParameter(
        'sort',
        text,
        `${quoted(id, 40)} n’est ni une dimension ni une métrique demandée`,
      );
    if (keys.some((k) => k.id === known)) throw invalidParameter('sort', text, `${known} donné deux fois`);
    keys.push({ id: known, descending });
  }
  return keys;
}

/**
 * Issue 18: a period that starts on 0001-01-01 or ends on 9999-12-31 in a zone where that edge's
 * local day is outside years 1–9999 would give `date` values PostgreSQL writes wrongly (year 1 BC
 * as '0001-12-31') or with five digits ('10000-01-01', sorted first): a 400 naming the zone and
 * what to change, rather than a wrong or misordered answer.
 */
function checkCalendarEdges(from: string, to: string, timezone: string, context: ParseContext): void {
  const edges = context.calendarEdges;
  if (from === FIRST_DAY && edges?.beforeYear1.has(timezone)) {
    throw invalidParameter(
      'timezone',
      timezone,
      `avec la dimension date et from = ${FIRST_DAY}, ce fuseau placerait des commandes en l’an 0 : from au plus tôt 0001-01-02, ou un fuseau à l’est de UTC`,
    );
  }
  if (to === LAST_DAY && edges?.afterYear9999.has(timezone)) {
    throw invalidParameter(
      'timezone',
      timezone,
      `avec la dimension date et to = ${LAST_DAY}, ce fuseau placerait des commandes en l’an 10000 : to au plus tard 9999-12-30, ou un fuseau à l’ouest de UTC`,
    );
  }
}

/** L9: `GET /api/reports/catalog?scope=all` lists section 15's entries too; without `scope`, G1. */
export const CATALOG_SCOPES = ['all'] as const;
export type CatalogScope = 'reference' | (typeof CATALOG_SCOPES)[number];

export function parseCatalogScope(raw: RawQuery): CatalogScope {
  const text = single(raw, 'scope');
  if (text === undefined) return 'reference';
  if (text !== 'all') throw invalidParameter('scope', text, 'all attendu, ou pas de paramètre scope');
  return text;
}
