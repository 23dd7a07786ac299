// Presentation in one place (STYLE: "Presentation lives in one place"; issue 30, item 2): every
// figure, amount, change, date and status a page, table, total, chart or key figure shows is
// written here, with `Intl` in fr-FR, so that « 2 718 » under a key figure is « 2 718 » in the
// total row too. Tables write days as « 29 oct. 2026 » (the chart's « 29 oct. » with its year):
// a date in words cannot be read as a month by someone used to 10/29. The French CSV writes
// spreadsheet values instead (spreadsheetNumber, spreadsheetDate): no grouping, 29/10/2026.
import type { Granularity } from '../query/dates.js';

const COUNT = new Intl.NumberFormat('fr-FR', { maximumFractionDigits: 0 });
const ONE_DECIMAL = new Intl.NumberFormat('fr-FR', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const DAY = new Intl.DateTimeFormat('fr-FR', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});
const LONG_DAY = new Intl.DateTimeFormat('fr-FR', { dateStyle: 'long', timeZone: 'UTC' });
const DAY_AND_MONTH = new Intl.DateTimeFormat('fr-FR', { day: 'numeric', month: 'long', timeZone: 'UTC' });
const MONTH_YEAR = new Intl.DateTimeFormat('fr-FR', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const MOMENT = new Intl.DateTimeFormat('fr-FR', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A count with French thousands separators: « 2 718 ». */
export const formatCount = (value: number): string => COUNT.format(value === 0 ? 0 : value);

/** « 1 commande », « 3 commandes », « 0 commande » (French: singular below 2). */
export function plural(value: number, one: string, many: string): string {
  return `${formatCount(value)}\u00a0${Math.abs(value) < 2 ? one : many}`;
}

/**
 * Amounts in a currency with a fixed number of decimals (the chart's axis uses 0 for whole
 * steps): « 1 234,56 € »; an unknown code is written after the number (« 12,00 XYZ »).
 */
export function moneyFormatter(currency: string, decimals = 2): (value: number) => string {
  const options = { minimumFractionDigits: decimals, maximumFractionDigits: decimals };
  if (/^[A-Za-z]{3}$/.test(currency)) {
    try {
      const format = new Intl.NumberFormat('fr-FR', { ...options, style: 'currency', currency });
      return (value) => format.format(value === 0 ? 0 : value);
    } catch {
      // An unknown code: the plain number followed by the code, below.
    }
  }
  const format = new Intl.NumberFormat('fr-FR', options);
  return (value) => `${format.format(value === 0 ? 0 : value)}\u00a0${currency}`;
}

const moneyFormats = new Map<string, (value: number) => string>();

/** An amount in the organization's currency: « 1 234,56 € ». Never « -0,00 € ». */
export function formatMoney(value: number, currency: string): string {
  let format = moneyFormats.get(currency);
  if (format === undefined) {
    format = moneyFormatter(currency);
    if (moneyFormats.size < 64) moneyFormats.set(currency, format);
  }
  return format(Math.round(value * 100) === 0 ? 0 : value);
}

/** A PC1 change, sign written: « +12,3 % », « −4,0 % », « 0,0 % »; « — » without one. */
export function formatChange(change: number | null): string {
  if (change === null) return '—';
  const size = ONE_DECIMAL.format(Math.abs(change));
  const sign = change > 0 ? '+' : change < 0 ? '−' : '';
  return `${sign}${size}\u00a0%`;
}

/** A share or rate with one decimal: « 12,5 % ». */
export const formatPercent = (value: number): string => `${ONE_DECIMAL.format(value)}\u00a0%`;

/** A UTC day of the API (AAAA-MM-JJ) as a Date, or undefined when the text is not one. */
export function utcDay(text: string): Date | undefined {
  const match = ISO_DAY.exec(text);
  if (!match) return undefined;
  const date = new Date(`${text}T00:00:00Z`);
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== text ? undefined : date;
}

/** A day in tables: « 29 oct. 2026 »; a text that is not a day is shown as it is. */
export function formatDay(text: string): string {
  const date = utcDay(text);
  return date ? DAY.format(date) : text;
}

/**
 * A day in words, the first of a month as French writes it: « 1er mars » (Intl says « 1 mars »).
 * Sentences only; tables keep Intl's compact « 1 mars 2026 ».
 */
function inWords(format: Intl.DateTimeFormat, date: Date): string {
  const text = format.format(date);
  return date.getUTCDate() === 1 ? text.replace(/^1(?=\s)/u, '1er') : text;
}

/** A day in sentences: « 29 octobre 2026 », « 1er mars 2026 ». */
export function formatLongDay(text: string): string {
  const date = utcDay(text);
  return date ? inWords(LONG_DAY, date) : text;
}

/** A moment (a key's last use, a sync): « 29 oct. 2026, 14:05 UTC »; « — » when never. */
export const formatMoment = (date: Date | null, never = '—'): string =>
  date ? `${MOMENT.format(date)} UTC` : never;

/**
 * A bucket (G2) by its first day, as tables and the chart name it: « 29 oct. 2026 »,
 * « sem. du 26 oct. 2026 », « octobre 2026 », « T4 2026 », « 2026 ».
 */
export function formatBucket(text: string, granularity: Granularity): string {
  const date = utcDay(text);
  if (!date) return text;
  switch (granularity) {
    case 'day':
      return DAY.format(date);
    case 'week':
      return `sem. du ${DAY.format(date)}`;
    case 'month':
      return MONTH_YEAR.format(date);
    case 'quarter':
      return `T${Math.floor(date.getUTCMonth() / 3) + 1} ${date.getUTCFullYear()}`;
    case 'year':
      return String(date.getUTCFullYear());
  }
}

/**
 * A bucket in sentences (the chart's summary): « 5 mars 2026 », « semaine du 2 mars 2026 »,
 * « mars 2026 », « T1 2026 », « 2026 ».
 */
export function formatBucketInWords(text: string, granularity: Granularity): string {
  const date = utcDay(text);
  if (!date) return text;
  if (granularity === 'day') return inWords(LONG_DAY, date);
  if (granularity === 'week') return `semaine du ${inWords(LONG_DAY, date)}`;
  return formatBucket(text, granularity);
}

const AXIS = {
  day: new Intl.DateTimeFormat('fr-FR', { day: 'numeric', month: 'short', timeZone: 'UTC' }),
  dayWithYear: DAY,
  month: new Intl.DateTimeFormat('fr-FR', { month: 'short', year: 'numeric', timeZone: 'UTC' }),
};

/** The chart's axis: « 29 oct. » (with the year when the series spans two), « oct. 2026 ». */
export function formatAxisLabel(text: string, unit: 'day' | 'month', withYear: boolean): string {
  const date = utcDay(text);
  if (!date) return text;
  if (unit === 'month') return AXIS.month.format(date);
  return (withYear ? AXIS.dayWithYear : AXIS.day).format(date);
}

/** A period of days: « du 1er mars au 31 mars 2026 », « du 30 décembre 2025 au 5 janvier 2026 ». */
export function formatPeriod(from: string, to: string): string {
  const start = utcDay(from);
  const end = utcDay(to);
  if (!start || !end) return `du ${from} au ${to}`;
  if (from === to) return `le ${inWords(LONG_DAY, start)}`;
  const sameYear = start.getUTCFullYear() === end.getUTCFullYear();
  const first = inWords(sameYear ? DAY_AND_MONTH : LONG_DAY, start);
  return `du ${first} au ${inWords(LONG_DAY, end)}`;
}

/** A compact period for a table cell: « 30/01 – 29/02/2024 ». */
export function formatShortPeriod(from: string, to: string): string {
  const start = utcDay(from);
  const end = utcDay(to);
  if (!start || !end) return `${from} – ${to}`;
  const sameYear = start.getUTCFullYear() === end.getUTCFullYear();
  const first = sameYear ? spreadsheetDate(from).slice(0, 5) : spreadsheetDate(from);
  return `${first}\u00a0–\u00a0${spreadsheetDate(to)}`;
}

// The usual French words of WooCommerce's and Shopify's order statuses (issue 30, item 3); the
// value itself stays what the API returns and is shown beside them.
const STATUS_LABELS: Readonly<Record<string, string>> = {
  // WooCommerce
  pending: 'En attente de paiement',
  processing: 'En cours',
  'on-hold': 'En attente',
  completed: 'Terminée',
  cancelled: 'Annulée',
  refunded: 'Remboursée',
  failed: 'Échouée',
  'checkout-draft': 'Brouillon de commande',
  trash: 'Corbeille',
  // Shopify (displayFinancialStatus in lower case)
  authorized: 'Autorisée',
  paid: 'Payée',
  partially_paid: 'Partiellement payée',
  partially_refunded: 'Partiellement remboursée',
  voided: 'Annulée avant paiement',
  expired: 'Expirée',
};

/** « Annulée (cancelled) »; a status without a French word is shown as it is. */
export function statusLabel(status: string): string {
  const label = Object.hasOwn(STATUS_LABELS, status) ? STATUS_LABELS[status] : undefined;
  return label === undefined ? status : `${label} (${status})`;
}

/**
 * A number as a French spreadsheet reads it in a `;` CSV: decimal comma, no grouping, minus
 * sign ASCII (`1234,56`, `-3,05`); `decimals` fixed (2 for amounts, 0 for counts).
 */
export function spreadsheetNumber(value: number, decimals: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`Nombre invalide pour le CSV : ${value}`);
  const scale = 10 ** decimals;
  const units = Math.round(Math.abs(value) * scale);
  const sign = value < 0 && units !== 0 ? '-' : '';
  const whole = Math.trunc(units / scale);
  const fraction = decimals > 0 ? `,${String(units % scale).padStart(decimals, '0')}` : '';
  return `${sign}${whole}${fraction}`;
}

/** A day as a French spreadsheet reads a date, and as the pages' date fields show it: « 29/10/2026 ». */
export function spreadsheetDate(text: string): string {
  const match = ISO_DAY.exec(text);
  return match ? `${match[3]}/${match[2]}/${match[1]}` : text;
}

const TYPED_DAY = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$/;

/**
 * A day typed in a page's date field, as the French write it (« 9/3/2026 », « 09.03.2026 »), in
 * the API's AAAA-MM-JJ; any other text is returned trimmed as it is, so that the API's own day
 * (links, bookmarks) passes and anything else is refused by the period's rules (P3).
 */
export function dayFromField(text: string): string {
  const trimmed = text.trim();
  const match = TYPED_DAY.exec(trimmed);
  if (!match) return trimmed;
  const [, day = '', month = '', year = ''] = match;
  return `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
}
