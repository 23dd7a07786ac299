// PC1: the second period of a compared report, and the change between two figures. Pure, shared
// by the API (parse → plan → engines) and the Revenue page, so that both compare the same way.
import { AppError, invalidParameter, quoted } from '../errors.js';
import { addDays, daysBetween, daysInMonth, FIRST_DAY, onOrBefore, type Granularity } from './dates.js';
import { isPeriodProblem, resolvePeriod, type Period } from './period.js';

export const COMPARE_MODES = ['previous_period', 'previous_year', 'custom'] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];
export const isCompareMode = (text: string): text is CompareMode => COMPARE_MODES.some((m) => m === text);

/** The comparison period actually used: the `compare` echo of a PC1 answer. */
export interface Comparison extends Period {
  readonly mode: CompareMode;
}

/** The parameters of PC1 as the request gave them (each at most once). */
export interface CompareParameters {
  readonly compare?: string | undefined;
  readonly compare_from?: string | undefined;
  readonly compare_to?: string | undefined;
}

/** Days of [from, to], both counted. */
export const periodDays = (period: Period): number => daysBetween(period.from, period.to) + 1;

/** The same month and day one calendar year earlier; 29 February becomes 28 February (PC1). */
export function yearEarlier(day: string): string {
  const year = Number(day.slice(0, 4)) - 1;
  const month = Number(day.slice(5, 7));
  const date = Math.min(Number(day.slice(8, 10)), daysInMonth(year, month));
  return `${String(year).padStart(4, '0')}-${day.slice(5, 8)}${String(date).padStart(2, '0')}`;
}

/** A comparison period that would start before P3's first day cannot be written: a 400 naming `compare`. */
function beforeFirstDay(mode: CompareMode): never {
  throw invalidParameter(
    'compare',
    mode,
    `la période de comparaison commencerait avant le ${FIRST_DAY} : un from plus tardif, ou compare=custom`,
  );
}

/** PC1: `compare_from`/`compare_to` without `compare=custom`, a 400 naming each one given. */
function refuseStrayBounds(compareFrom: string | undefined, compareTo: string | undefined): void {
  if (compareFrom !== undefined && compareTo !== undefined) {
    throw new AppError(
      'INVALID_PARAMETER',
      `Paramètres compare_from et compare_to invalides : « ${quoted(compareFrom)} », « ${quoted(compareTo)} » (seulement avec compare=custom)`,
    );
  }
  if (compareFrom !== undefined)
    throw invalidParameter('compare_from', compareFrom, 'seulement avec compare=custom');
  if (compareTo !== undefined)
    throw invalidParameter('compare_to', compareTo, 'seulement avec compare=custom');
}

/**
 * PC1: the comparison period for the main period (already resolved by P3 and P4), or undefined
 * without `compare`. `compare_from`/`compare_to` without `compare=custom` are refused, as is any
 * other `compare`; a custom period follows P3's format and order and P4's cap, keeping
 * `compare_to`, each error naming the `compare_*` parameter at fault.
 */
export function resolveComparison(
  parameters: CompareParameters,
  main: Period,
  today?: string,
): Comparison | undefined {
  const { compare, compare_from: compareFrom, compare_to: compareTo } = parameters;
  if (compare === undefined || (compare !== 'custom' && isCompareMode(compare))) {
    refuseStrayBounds(compareFrom, compareTo);
  }
  if (compare === undefined) return undefined;
  if (!isCompareMode(compare))
    throw invalidParameter('compare', compare, `${COMPARE_MODES.join(', ')} attendu`);
  switch (compare) {
    case 'previous_period': {
      if (main.from === FIRST_DAY) beforeFirstDay(compare);
      const to = addDays(main.from, -1);
      const from = addDays(to, -(periodDays(main) - 1));
      if (!onOrBefore(FIRST_DAY, from)) beforeFirstDay(compare);
      return { mode: compare, from, to };
    }
    case 'previous_year':
      if (main.from.startsWith('0001-')) beforeFirstDay(compare);
      return { mode: compare, from: yearEarlier(main.from), to: yearEarlier(main.to) };
    case 'custom': {
      if (compareFrom === undefined) throw invalidParameter('compare_from', '', 'requis avec compare=custom');
      if (compareTo === undefined) throw invalidParameter('compare_to', '', 'requis avec compare=custom');
      const period = resolvePeriod(compareFrom, compareTo, today);
      if (!isPeriodProblem(period)) return { mode: compare, ...period };
      if (period.problem === 'not-a-day') {
        throw invalidParameter(
          `compare_${period.parameter}`,
          period.value,
          'format attendu AAAA-MM-JJ, un jour qui existe',
        );
      }
      throw invalidParameter(
        'compare_from',
        compareFrom,
        `compare_from (${period.from}) est postérieur à compare_to (${period.to})`,
      );
    }
  }
}

/** A JSON number as written (M2: `35.1`, `40`, `1e+21`) as an exact decimal: digits × 10^exponent. */
function decimal(value: number): { digits: bigint; exponent: number } {
  const [mantissa = '0', power = '0'] = String(value).toLowerCase().split('e');
  const [whole = '0', fraction = ''] = mantissa.split('.');
  return { digits: BigInt(`${whole}${fraction}`), exponent: Number(power) - fraction.length };
}

/**
 * PC1: `<metric>_change` = (value − previous) / previous × 100 from the two values as written in
 * the row, in exact decimal arithmetic, rounded half away from zero to one decimal; null when
 * previous is 0 or null (35.10 against 40.00 is −12.25, so −12.3).
 */
export function percentChange(value: number, previous: number | null): number | null {
  if (previous === null || previous === 0) return null;
  // Money and counts are whole hundredths: exact in doubles, 40× faster than BigInt (a compared
  // answer of 100,000 rows and ten metrics asks a million of these).
  const v = exactCents(value);
  const p = exactCents(previous);
  return v === undefined || p === undefined
    ? percentChangeOfDecimals(value, previous)
    : tenthsOfCents(v, p) / 10;
}

/** Whole hundredths beyond which (V − P) × 2,000 + P may leave the doubles' exact integers. */
const MAX_CENTS = 2e12;

/** `value` × 100 when `value` is the double of a decimal with at most two decimals, small enough. */
function exactCents(value: number): number | undefined {
  const cents = Math.round(value * 100);
  return Math.abs(cents) <= MAX_CENTS && cents / 100 === value ? cents : undefined;
}

/** (V − P) × 1000 / P rounded half away from zero, on integers whose every step stays exact. */
function tenthsOfCents(v: number, p: number): number {
  const numerator = (v - p) * 1000;
  const a = Math.abs(numerator);
  const b = Math.abs(p);
  // floor((2a + b) / 2b): the division's rounding corrected on exact products.
  let tenths = Math.floor((2 * a + b) / (2 * b));
  if (tenths * 2 * b > 2 * a + b) tenths--;
  else if ((tenths + 1) * 2 * b <= 2 * a + b) tenths++;
  const negative = numerator < 0 !== p < 0;
  return negative && tenths !== 0 ? -tenths : tenths;
}

/** PC1 on the two values as written, in BigInt: for what `exactCents` cannot hold. */
export function percentChangeOfDecimals(value: number, previous: number): number | null {
  if (previous === 0) return null;
  const v = decimal(value);
  const p = decimal(previous);
  const exponent = Math.min(v.exponent, p.exponent);
  const scaledV = v.digits * 10n ** BigInt(v.exponent - exponent);
  const scaledP = p.digits * 10n ** BigInt(p.exponent - exponent);
  // Tenths of a percent: (V − P) × 1000 / P, rounded half away from zero.
  const numerator = (scaledV - scaledP) * 1000n;
  const negative = numerator < 0n !== scaledP < 0n;
  const a = numerator < 0n ? -numerator : numerator;
  const b = scaledP < 0n ? -scaledP : scaledP;
  const tenths = (2n * a + b) / (2n * b);
  const result = Number(tenths) / 10;
  return negative && result !== 0 ? -result : result;
}

/** Months of a bucket's first day from year 0: month buckets one apart differ by one. */
const monthNumber = (day: string): number => Number(day.slice(0, 4)) * 12 + Number(day.slice(5, 7)) - 1;
const MONTHS: Readonly<Record<'month' | 'quarter' | 'year', number>> = { month: 1, quarter: 3, year: 12 };

/** PC1: k, the index of the G2 bucket starting on `start` counted from the bucket starting on `first`. */
export function bucketIndex(first: string, start: string, granularity: Granularity): number {
  switch (granularity) {
    case 'day':
      return daysBetween(first, start);
    case 'week':
      return daysBetween(first, start) / 7;
    default:
      return (monthNumber(start) - monthNumber(first)) / MONTHS[granularity];
  }
}

/** PC1: the first day of the k-th G2 bucket after the one starting on `first`. */
export function bucketAt(first: string, k: number, granularity: Granularity): string {
  if (granularity === 'day') return addDays(first, k);
  if (granularity === 'week') return addDays(first, 7 * k);
  const month = monthNumber(first) + k * MONTHS[granularity];
  const year = Math.floor(month / 12);
  return `${String(year).padStart(4, '0')}-${String((month % 12) + 1).padStart(2, '0')}-01`;
}

/** PC1: the row fields after a dimension (`date_previous` after `date`) and after the metrics. */
export const previousOf = (id: string): string => `${id}_previous`;
export const changeOf = (id: string): string => `${id}_change`;

/**
 * PC1: a compared row's columns, as the JSON row's keys and the CSV header: the dimensions with
 * `date_previous` right after `date`, the metrics, then `<metric>_previous`, then `<metric>_change`.
 */
export function comparedColumns(dimensions: readonly string[], metrics: readonly string[]): string[] {
  return [
    ...dimensions.flatMap((id) => (id === 'date' ? [id, previousOf(id)] : [id])),
    ...metrics,
    ...metrics.map(previousOf),
    ...metrics.map(changeOf),
  ];
}
