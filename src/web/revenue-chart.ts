// The Revenue page's chart: net revenue and gross sales per day, or per week, month, quarter or
// year (G2: one point per bucket, at its first day), as a self-contained SVG string
// (no script, no external style, no dependency). Accessible: role="img" with a <title> and an
// aria-label that states the period and its totals. Responsive: a viewBox and width="100%".
// Every text written into the document is escaped.
import { escapeHtml } from './html.js';
import { formatAxisLabel, formatBucketInWords, formatPercent, moneyFormatter } from './format.js';
import type { RevenueDay } from '../metrics/revenue.js';
import type { Granularity } from '../query/dates.js';

export interface RevenueChartOptions {
  /** Drawing size in viewBox units (the SVG itself scales to its container's width). */
  width?: number;
  height?: number;
  /** ISO 4217 code of the organization's currency, EUR by default. */
  currency?: string;
  /** What each point is (G2): it names the axis labels, the title and the count. Day by default. */
  granularity?: Granularity;
  /**
   * PC1 on the page: the comparison period's net revenue, value k for bucket k of the main period
   * (as many as the comparison has, up to the main count). Drawn as a second, lighter series
   * beside the main net revenue, in place of gross sales; the summary states both totals.
   */
  previous?: PreviousSeries;
}

export interface PreviousSeries {
  readonly values: readonly number[];
  /** The comparison period's net revenue over all its days. */
  readonly total: number;
  /** The comparison period, as the page states it (« du 1 février au 28 février 2026 »). */
  readonly period: string;
  /** PC1's change of the totals (null against 0), shown with its sign. */
  readonly change: number | null;
}

export const NET_COLOUR = '#1d4ed8'; // blue, solid line
export const GROSS_COLOUR = '#c2410c'; // orange, dashed line: the two differ without colour too
export const PREVIOUS_COLOUR = '#93a8d8'; // lighter blue, dotted: the comparison period (PC1)

const DEFAULT_WIDTH = 800;
const DEFAULT_HEIGHT = 320;
const MARKER_MAX_DAYS = 31; // dots on each point for short series (and the only mark of a single one)
const NICE_MANTISSAS = [1, 2, 2.5, 5];

/** The same escaping as the pages' (the five XML special characters). */
export const escapeXml = escapeHtml;

/** A coordinate with at most two decimals, never "-0". */
function coordinate(value: number): string {
  const rounded = Math.round(value * 100) / 100;
  return String(rounded === 0 ? 0 : rounded);
}

function sizeOption(value: number | undefined, fallback: number, min: number): number {
  return value !== undefined && Number.isFinite(value) ? Math.max(min, Math.min(value, 10_000)) : fallback;
}

export interface YScale {
  min: number;
  max: number;
  ticks: number[];
  /** Decimals of the tick labels: 0 for whole steps, else 2. */
  decimals: number;
}

/**
 * The next "nice" step (1, 2, 2.5 or 5 times a power of ten) at or above `value` (> 0) that is a
 * whole multiple of `unit` (2.5 cents is not a step for money).
 */
function niceStepAtLeast(value: number, unit: number): number {
  let power = 10 ** Math.floor(Math.log10(value));
  for (;;) {
    for (const m of NICE_MANTISSAS) {
      const step = Number((m * power).toPrecision(12));
      const units = step / unit;
      if (step >= value * (1 - 1e-12) && Math.abs(units - Math.round(units)) < 1e-9 * units) return step;
    }
    power *= 10;
  }
}

/**
 * The y axis for values between `low` and `high`: always includes 0, 4 or 5 ticks at a nice step
 * of at least `minStep` (a cent: no tick between cents), the tightest fit of the two, tick values
 * free of binary noise.
 */
export function yScale(low: number, high: number, minStep = 0.01): YScale {
  let min = Math.min(0, low);
  let max = Math.max(0, high);
  if (min === max) max = 100; // all zero: an empty but readable axis
  let best: { lo: number; step: number; intervals: number } | undefined;
  for (const intervals of [4, 3]) {
    let step = niceStepAtLeast(Math.max(minStep, (max - min) / intervals), minStep);
    for (;;) {
      const lo = Math.floor(min / step + 1e-9) * step;
      if (lo + intervals * step >= max - max * 1e-12) break;
      step = niceStepAtLeast(step * 1.000001, minStep);
    }
    const lo = Math.floor(min / step + 1e-9) * step;
    if (!best || intervals * step < best.intervals * best.step) best = { lo, step, intervals };
  }
  const { lo, step, intervals } = best as { lo: number; step: number; intervals: number };
  // Whole steps print whole amounts (5 000 €); cent steps print cents (0,10 €, 2,50 €).
  const decimals = Number.isInteger(step) ? 0 : 2;
  const clean = (v: number): number => {
    const n = Number(v.toPrecision(12));
    return n === 0 ? 0 : n;
  };
  const ticks = Array.from({ length: intervals + 1 }, (_, i) => clean(lo + i * step));
  min = ticks[0] ?? 0;
  max = ticks[ticks.length - 1] ?? 1;
  return { min, max, ticks, decimals };
}

/** The words for a point of each granularity: the title's "par …", the count, one and several. */
const UNITS: Record<Granularity, { per: string; one: string; many: string }> = {
  day: { per: 'jour', one: 'jour', many: 'jours' },
  week: { per: 'semaine', one: 'semaine', many: 'semaines' },
  month: { per: 'mois', one: 'mois', many: 'mois' },
  quarter: { per: 'trimestre', one: 'trimestre', many: 'trimestres' },
  year: { per: 'année', one: 'année', many: 'années' },
};

/**
 * A bucket named in full from its first day: « 5 mars 2026 », « semaine du 2 mars 2026 »,
 * « mars 2026 », « T1 2026 », « 2026 »; a text that is not a day is returned as it is.
 */
export const bucketLabel = (text: string, granularity: Granularity = 'day'): string =>
  formatBucketInWords(text, granularity);

/** The x axis labels: short days (with the year when the series spans two), or bucket names. */
function axisFormatter(days: readonly RevenueDay[], granularity: Granularity): (text: string) => string {
  if (granularity === 'quarter' || granularity === 'year') return (text) => bucketLabel(text, granularity);
  const first = days[0]?.date.slice(0, 4);
  const last = days[days.length - 1]?.date.slice(0, 4);
  const sameYear = first === last;
  return (text) => formatAxisLabel(text, granularity === 'month' ? 'month' : 'day', !sameYear);
}

/** « du 1 mars au 10 mars 2026 », « de mars 2026 à mars 2028 », « en 2026 »… for the summary. */
function periodText(days: readonly RevenueDay[], granularity: Granularity): string {
  if (days.length === 0) return granularity === 'day' ? 'aucun jour' : 'aucune donnée';
  const first = bucketLabel(days[0]?.date ?? '', granularity);
  const last = bucketLabel(days[days.length - 1]?.date ?? '', granularity);
  // French elision: « d’avril 2026 à août 2027 », « de mars 2026 à mars 2028 ».
  const from = (label: string) => (/^[aeiouyàâéèêîôû]/i.test(label) ? `d’${label}` : `de ${label}`);
  if (days.length === 1) {
    if (granularity === 'day') return `le ${first}`;
    if (granularity === 'week') return `la ${first}`;
    return granularity === 'quarter' ? `au ${first}` : `en ${first}`;
  }
  if (granularity === 'day') return `du ${first} au ${last}`;
  if (granularity === 'week')
    return `des ${first.replace('semaine', 'semaines')} au ${last.slice('semaine du '.length)}`;
  if (granularity === 'quarter') return `du ${first} au ${last}`;
  return `${from(first)} à ${last}`;
}

/** Indices of the days that get a date label: all when few, else about one per 90 units. */
export function labelIndices(count: number, plotWidth: number): number[] {
  if (count <= 0) return [];
  const wanted = Math.max(2, Math.min(7, Math.floor(plotWidth / 90)));
  if (count <= wanted) return Array.from({ length: count }, (_, i) => i);
  const indices = new Set<number>();
  for (let j = 0; j < wanted; j++) indices.add(Math.round((j * (count - 1)) / (wanted - 1)));
  return [...indices].sort((a, b) => a - b);
}

function checkValue(day: RevenueDay, field: 'netRevenue' | 'grossSales'): number {
  const value = day[field];
  if (!Number.isFinite(value)) {
    throw new RangeError(`Valeur non finie pour ${field} le ${JSON.stringify(day.date)} : ${value}`);
  }
  return value;
}

/** Exact total in cents of values already rounded to the cent (no binary float drift). */
const totalOf = (values: readonly number[]): number =>
  values.reduce((cents, v) => cents + Math.round(v * 100), 0) / 100;

/** The comparison's values, finite, at most one per main bucket (PC1 leaves the others out). */
function checkedPrevious(previous: PreviousSeries, count: number): PreviousSeries {
  const values = previous.values.slice(0, count);
  values.forEach((v, k) => {
    if (!Number.isFinite(v))
      throw new RangeError(`Valeur non finie pour la comparaison, période ${k} : ${v}`);
  });
  return { ...previous, values };
}

/** A PC1 change in words, its sign written out (« en hausse de 12,5 % »), for the summary. */
export function changeText(change: number | null): string {
  if (change === null) return 'variation non calculable';
  const size = formatPercent(Math.abs(change)).replace('\u00a0', ' ');
  if (change > 0) return `en hausse de ${size}`;
  if (change < 0) return `en baisse de ${size}`;
  return 'stable';
}

export function revenueChartSvg(days: RevenueDay[], options: RevenueChartOptions = {}): string {
  const width = sizeOption(options.width, DEFAULT_WIDTH, 240);
  const height = sizeOption(options.height, DEFAULT_HEIGHT, 160);
  const currency = options.currency ?? 'EUR';
  const granularity = options.granularity ?? 'day';
  const unit = UNITS[granularity];
  const net = days.map((d) => checkValue(d, 'netRevenue'));
  const gross = days.map((d) => checkValue(d, 'grossSales'));
  const previous = options.previous ? checkedPrevious(options.previous, days.length) : undefined;
  const all = [...net, ...(previous ? previous.values : gross)];
  const scale = yScale(
    all.reduce((a, b) => Math.min(a, b), 0),
    all.reduce((a, b) => Math.max(a, b), 0),
  );
  const tickLabel = moneyFormatter(currency, scale.decimals);
  const summaryMoney = moneyFormatter(currency, 2);
  const tickTexts = scale.ticks.map(tickLabel);

  // Layout: y labels on the left (as wide as the longest), legend on top, date labels below.
  const longest = tickTexts.reduce((n, t) => Math.max(n, t.length), 0);
  const left = Math.min(width / 3, 12 + longest * 7);
  const right = 16;
  const top = 36;
  const bottom = 32;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const x = (i: number): number =>
    days.length <= 1 ? left + plotWidth / 2 : left + (i * plotWidth) / (days.length - 1);
  const y = (v: number): number => top + ((scale.max - v) * plotHeight) / (scale.max - scale.min);

  const title = previous
    ? `Chiffre d’affaires net par ${unit.per}, comparé à la période ${previous.period}`
    : `Chiffre d’affaires net et brut par ${unit.per}`;
  const head = `${title}, ${periodText(days, granularity)} (${days.length} ${days.length > 1 ? unit.many : unit.one}) : `;
  const summary = previous
    ? `${head}CA net total ${summaryMoney(totalOf(net))}, contre ${summaryMoney(previous.total)} ` +
      `sur la période de comparaison (${changeText(previous.change)}).`
    : `${head}CA net total ${summaryMoney(totalOf(net))}, CA brut total ${summaryMoney(totalOf(gross))}.`;

  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${coordinate(width)} ${coordinate(height)}" ` +
      `width="100%" preserveAspectRatio="xMidYMid meet" role="img" aria-label="${escapeXml(summary)}" ` +
      `font-family="system-ui, sans-serif" font-size="12">`,
  );
  parts.push(`<title>${escapeXml(summary)}</title>`);

  // Grid and y labels.
  parts.push('<g class="y-axis" aria-hidden="true">');
  scale.ticks.forEach((tick, i) => {
    const ty = coordinate(y(tick));
    const stroke = tick === 0 ? '#6b7280' : '#e5e7eb';
    parts.push(
      `<line x1="${coordinate(left)}" y1="${ty}" x2="${coordinate(left + plotWidth)}" y2="${ty}" stroke="${stroke}" stroke-width="1"/>`,
    );
    parts.push(
      `<text x="${coordinate(left - 6)}" y="${ty}" text-anchor="end" dominant-baseline="middle" fill="#374151">${escapeXml(tickTexts[i] ?? '')}</text>`,
    );
  });
  parts.push('</g>');

  // Date labels.
  const dayLabel = axisFormatter(days, granularity);
  const baseline = coordinate(top + plotHeight + 20);
  parts.push('<g class="x-axis" aria-hidden="true">');
  const indices = labelIndices(days.length, plotWidth);
  for (const i of indices) {
    const anchor =
      days.length === 1 ? 'middle' : i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle';
    parts.push(
      `<text x="${coordinate(x(i))}" y="${baseline}" text-anchor="${anchor}" fill="#374151">${escapeXml(dayLabel(days[i]?.date ?? ''))}</text>`,
    );
  }
  parts.push('</g>');
  if (days.length === 0) {
    parts.push(
      `<text x="${coordinate(left + plotWidth / 2)}" y="${coordinate(top + plotHeight / 2)}" text-anchor="middle" fill="#6b7280">Aucune donnée</text>`,
    );
  }

  // The two series: net and gross, or net and the comparison's net (lighter, dotted, under it).
  const series = [
    previous
      ? {
          id: 'previous',
          label: 'CA net, période de comparaison',
          values: previous.values,
          colour: PREVIOUS_COLOUR,
          dash: ' stroke-dasharray="2 3"',
        }
      : {
          id: 'gross',
          label: 'CA brut',
          values: gross,
          colour: GROSS_COLOUR,
          dash: ' stroke-dasharray="6 4"',
        },
    { id: 'net', label: 'CA net', values: net, colour: NET_COLOUR, dash: '' },
  ];
  for (const s of series) {
    if (s.values.length === 0) continue;
    const points = s.values.map((v, i) => `${coordinate(x(i))},${coordinate(y(v))}`).join(' ');
    parts.push(
      `<polyline class="series-${s.id}" data-series="${s.id}" fill="none" stroke="${s.colour}" stroke-width="2"${s.dash} stroke-linejoin="round" points="${points}" aria-hidden="true"/>`,
    );
    if (s.values.length <= MARKER_MAX_DAYS) {
      parts.push(`<g class="markers-${s.id}" fill="${s.colour}" aria-hidden="true">`);
      s.values.forEach((v, i) =>
        parts.push(`<circle cx="${coordinate(x(i))}" cy="${coordinate(y(v))}" r="3"/>`),
      );
      parts.push('</g>');
    }
  }

  // Legend, top left, in the order the eye meets the lines: net first.
  parts.push(`<g class="legend" transform="translate(${coordinate(left)},14)">`);
  let offset = 0;
  for (const s of [...series].reverse()) {
    parts.push(
      `<line x1="${offset}" y1="0" x2="${offset + 24}" y2="0" stroke="${s.colour}" stroke-width="2"${s.dash}/>`,
      `<text x="${offset + 30}" y="0" dominant-baseline="middle" fill="#111827">${escapeXml(s.label)}</text>`,
    );
    offset += 30 + s.label.length * 7 + 24;
  }
  parts.push('</g>');
  parts.push('</svg>');
  return parts.join('\n');
}
