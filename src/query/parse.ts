// Step 1 of the pipeline: the raw query string into a checked TabularQuery (SPEC section 6).
import { isDimensionId, isMetricId, type DimensionId, type MetricId } from '../catalog.js';
import { AppError, invalidParameter } from '../errors.js';
import { addDays, earliestFrom, parseDay, todayUtc } from './dates.js';

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
const DEFAULT_PERIOD_DAYS = 30;

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

function day(raw: RawQuery, name: 'from' | 'to'): string | undefined {
  const text = single(raw, name);
  if (text === undefined) return undefined;
  const parsed = parseDay(text);
  if (parsed === undefined)
    throw invalidParameter(name, text, 'format attendu AAAA-MM-JJ, un jour qui existe');
  return parsed;
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
    throw new AppError('UNKNOWN_IDENTIFIERS', 'Dimensions ou métriques inconnues', {
      unknownDimensions,
      unknownMetrics,
    });
  }
  if (metricIds.length === 0) {
    throw new AppError(
      'MISSING_METRICS',
      'Paramètre metrics manquant : au moins une métrique est requise (par exemple metrics=orders,net_revenue)',
    );
  }
  const to = day(raw, 'to') ?? context.today ?? todayUtc();
  const requestedFrom = day(raw, 'from') ?? addDays(to, -DEFAULT_PERIOD_DAYS);
  if (requestedFrom > to) {
    throw new AppError(
      'INVALID_PARAMETER',
      `Période invalide : from (${requestedFrom}) est postérieur à to (${to})`,
    );
  }
  const floor = earliestFrom(to);
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
    from: requestedFrom < floor ? floor : requestedFrom, // P4
    to,
    timezone,
    limit: limit(raw),
  };
}
