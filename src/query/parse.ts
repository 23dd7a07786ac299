// Step 1 of the pipeline: the raw query string into a checked TabularQuery (SPEC section 6).
import { isDimensionId, isMetricId, type DimensionId, type MetricId } from '../catalog.js';
import { AppError, appError, ERROR_KINDS, invalidParameter } from '../errors.js';
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
}

export interface ParseContext {
  /** Today's UTC day, the default `to` (P3). */
  readonly today?: string;
  /** True for an IANA zone name the database knows (P5). */
  readonly isTimeZone: (name: string) => boolean;
}

export const DEFAULT_LIMIT = 10_000;
export const MAX_LIMIT = 100_000;

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

function limit(raw: RawQuery): number {
  const text = single(raw, 'limit');
  if (text === undefined) return DEFAULT_LIMIT;
  const value = /^[0-9]{1,7}$/.test(text) ? Number(text) : NaN;
  if (!(value >= 1 && value <= MAX_LIMIT)) {
    throw invalidParameter('limit', text, `entier de 1 à ${MAX_LIMIT} attendu`);
  }
  return value;
}

export function parseTabularQuery(raw: RawQuery, context: ParseContext): TabularQuery {
  const dimensionIds = parseIdList(raw.dimensions);
  const metricIds = parseIdList(raw.metrics);
  const unknownDimensions = dimensionIds.filter((id) => !isDimensionId(id));
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
  const { from, to } = requirePeriod(single(raw, 'from'), single(raw, 'to'), context.today); // P3, P4
  const timezone = single(raw, 'timezone') ?? 'UTC';
  if (!context.isTimeZone(timezone)) {
    throw invalidParameter(
      'timezone',
      timezone,
      'nom de fuseau horaire IANA attendu, par exemple Europe/Paris',
    );
  }
  return {
    dimensions: dimensionIds.filter(isDimensionId),
    metrics: metricIds.filter(isMetricId),
    from,
    to,
    timezone,
    limit: limit(raw),
  };
}
