// P3, P4: the period of a report, resolved one way for the API and the Revenue report alike.
import { AppError, invalidParameter } from '../errors.js';
import { addDays, earliestFrom, parseDay, todayUtc } from './dates.js';

export const DEFAULT_PERIOD_DAYS = 30;

export interface Period {
  readonly from: string;
  readonly to: string;
}

export type PeriodProblem =
  | { readonly problem: 'not-a-day'; readonly parameter: 'from' | 'to'; readonly value: string }
  | { readonly problem: 'from-after-to'; readonly from: string; readonly to: string };

/**
 * `to` defaults to today (UTC) and `from` to 30 days before `to` (P3); a `from` more than two
 * years back is moved up to the cap (P4). Returns what is wrong instead when a day is not a real
 * YYYY-MM-DD day, or `from` is after `to`.
 */
export function resolvePeriod(
  fromText: string | undefined,
  toText: string | undefined,
  today: string = todayUtc(),
): Period | PeriodProblem {
  const to = toText === undefined ? today : parseDay(toText);
  if (to === undefined) return { problem: 'not-a-day', parameter: 'to', value: toText ?? '' };
  const from = fromText === undefined ? addDays(to, -DEFAULT_PERIOD_DAYS) : parseDay(fromText);
  if (from === undefined) return { problem: 'not-a-day', parameter: 'from', value: fromText ?? '' };
  if (from > to) return { problem: 'from-after-to', from, to };
  const floor = earliestFrom(to);
  return { from: from < floor ? floor : from, to };
}

export const isPeriodProblem = (result: Period | PeriodProblem): result is PeriodProblem =>
  'problem' in result;

/** The period, or the API's error naming the parameter at fault (E1). */
export function requirePeriod(
  fromText: string | undefined,
  toText: string | undefined,
  today?: string,
): Period {
  const result = resolvePeriod(fromText, toText, today);
  if (!isPeriodProblem(result)) return result;
  if (result.problem === 'not-a-day') {
    throw invalidParameter(result.parameter, result.value, 'format attendu AAAA-MM-JJ, un jour qui existe');
  }
  throw new AppError(
    'INVALID_PARAMETER',
    `Période invalide : from (${result.from}) est postérieur à to (${result.to})`,
  );
}
