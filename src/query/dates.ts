// Calendar days as 'YYYY-MM-DD' strings, computed in UTC (T1, P3, P4).

const DAY_MS = 86_400_000;
const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A day as this file may compute it: the day after 9999-12-31 has five digits ('10000-01-01'). */
const COMPUTED_DAY = /^(\d{4,5})-(\d{2})-(\d{2})$/;

/** The first and last days of P3 (four-digit years): no period reaches past them. */
export const FIRST_DAY = '0001-01-01';
export const LAST_DAY = '9999-12-31';

/** The day, or undefined when the text is not exactly YYYY-MM-DD of a real calendar day (P3). */
export function parseDay(text: string): string | undefined {
  const match = ISO_DAY.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  return text;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** Days in a month (1–12) of the proleptic Gregorian calendar: arithmetic, no Date (per import line). */
export function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : (MONTH_DAYS[month - 1] ?? 0);
}

/** The day's midnight UTC; setUTCFullYear, unlike Date.UTC, keeps years 0–99 as they are. */
function toDate(day: string): Date {
  const match = COMPUTED_DAY.exec(day);
  if (!match) throw new RangeError(`not a day: ${JSON.stringify(day)}`);
  const date = new Date(0);
  date.setUTCFullYear(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return date;
}

function fromDate(date: Date): string {
  const full = date.getUTCFullYear();
  // Never '00-1' for a year before 0 (no period reaches one: P3's days start in year 1).
  const year = full < 0 ? `-${String(-full).padStart(4, '0')}` : String(full).padStart(4, '0');
  return `${year}-${String(date.getUTCMonth() + 1).padStart(2, '0')}-${String(date.getUTCDate()).padStart(2, '0')}`;
}

export function addDays(day: string, days: number): string {
  return fromDate(new Date(toDate(day).getTime() + days * DAY_MS));
}

/** Days from `from` to `to` (negative when `to` comes first). */
export function daysBetween(from: string, to: string): number {
  return Math.round((toDate(to).getTime() - toDate(from).getTime()) / DAY_MS);
}

/** The signed year of a day this file may compute: '-0001-12-30' (before year 1) is -1. */
const yearOf = (day: string): number => Number(day.slice(0, day.length - 6));

/**
 * Whether day `a` is on or before day `b`. Past 9999-12-31 a day has a five-digit year
 * ('10000-01-01'), which sorts before '9999-12-31' as text, and before 0001-01-01 a negative one
 * ('-0001-12-30', longer than '0001-01-01'): compare the years as numbers, then month and day.
 */
export function onOrBefore(a: string, b: string): boolean {
  const [yearA, yearB] = [yearOf(a), yearOf(b)];
  return yearA !== yearB ? yearA < yearB : a.slice(-5) <= b.slice(-5);
}

export function todayUtc(now: Date = new Date()): string {
  return fromDate(now);
}

/** P4: the earliest `from` allowed for `to` — two calendar years back, plus one day. */
export function earliestFrom(to: string): string {
  const year = Number(to.slice(0, 4)) - 2;
  const month = Number(to.slice(5, 7));
  const day = Math.min(Number(to.slice(8, 10)), daysInMonth(year, month));
  if (year < 1) return '0001-01-01';
  const twoYearsBack = `${String(year).padStart(4, '0')}-${to.slice(5, 7)}-${String(day).padStart(2, '0')}`;
  return addDays(twoYearsBack, 1);
}

/** The instant a UTC day starts, as an ISO string PostgreSQL reads unambiguously. */
export function dayStart(day: string): string {
  return `${day}T00:00:00Z`;
}

/**
 * Epoch milliseconds of an instant dayStart() wrote. Date.parse refuses the five-digit year of
 * the day after 9999-12-31 (the end of a period whose `to` is 9999-12-31) and answers NaN.
 */
export function dayStartMs(instant: string): number {
  const at = instant.indexOf('T');
  return toDate(instant.slice(0, at)).getTime() + Date.parse(`1970-01-01${instant.slice(at)}`);
}

/** The UTC day of an instant dayStart() wrote, whatever the number of digits of its year. */
export const dayOf = (instant: string): string => instant.slice(0, instant.indexOf('T'));

/** G2: the `date` dimension's buckets. */
export const GRANULARITIES = ['day', 'week', 'month', 'quarter', 'year'] as const;
export type Granularity = (typeof GRANULARITIES)[number];
export const isGranularity = (text: string): text is Granularity => GRANULARITIES.some((g) => g === text);

/**
 * G2: the first day of the bucket a local day falls in — itself, the Monday of its ISO week, the
 * first of its month, quarter or year — as PostgreSQL's date_trunc gives it.
 */
export function bucketStart(day: string, granularity: Granularity): string {
  switch (granularity) {
    case 'day':
      return day;
    case 'week': {
      const weekday = toDate(day).getUTCDay(); // 0 = Sunday
      return addDays(day, -((weekday + 6) % 7));
    }
    case 'month':
      return `${day.slice(0, 8)}01`;
    case 'quarter': {
      const month = Math.floor((Number(day.slice(5, 7)) - 1) / 3) * 3 + 1;
      return `${day.slice(0, 5)}${String(month).padStart(2, '0')}-01`;
    }
    case 'year':
      return `${day.slice(0, 5)}01-01`;
  }
}

/** G2: the first day of the bucket after the one starting on `start`. */
export function nextBucketStart(start: string, granularity: Granularity): string {
  const months = { month: 1, quarter: 3, year: 12 } as const;
  if (granularity === 'day') return addDays(start, 1);
  if (granularity === 'week') return addDays(start, 7);
  const date = toDate(start);
  date.setUTCMonth(date.getUTCMonth() + months[granularity], 1);
  return fromDate(date);
}
