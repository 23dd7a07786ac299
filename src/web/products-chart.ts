// The « Produits » page's chart (issue 27, item 5): the top products by net sales as horizontal
// bars, a self-contained SVG string (no script, no dependency). Its positions are percentages of
// its width and its text keeps its size, so the bars shrink on a phone and the names stay
// readable. Accessible: role="img" with a <title> and an aria-label that name each product and its
// figure (and, compared, the comparison's); every text written into the document is escaped.
import { escapeHtml, shownControls } from './html.js';
import { formatChange } from './format.js';

export interface ProductBar {
  /** The row's name as the table shows it (« T-shirt — Rouge / M »). */
  readonly label: string;
  readonly value: number;
  /** PC1: the comparison period's value and the change (null against 0). */
  readonly previous?: number;
  readonly change?: number | null;
}

export interface ProductChartOptions {
  /** « du 1er au 31 mars 2026 ». */
  readonly period: string;
  /** PC1: the comparison period in words, when compared. */
  readonly comparedTo?: string;
  /** What a bar is: « produit », « variante », « SKU », « catégorie ». */
  readonly per: string;
  readonly money: (value: number) => string;
}

export const BAR_COLOUR = '#1d4ed8';
export const PREVIOUS_BAR_COLOUR = '#93a8d8';
/** Longer names are cut in the drawing (whole in its text alternative and in the table). */
export const LABEL_MAX = 30;
const ROW = 40;
const COMPARED_ROW = 46;
const TOP = 24;

const cut = (label: string): string =>
  [...label].length > LABEL_MAX ? `${[...label].slice(0, LABEL_MAX - 1).join('')}…` : label;

const percent = (part: number, whole: number): string =>
  whole <= 0 ? '0%' : `${String(Math.round((Math.max(0, part) / whole) * 10_000) / 100)}%`;

/** The text alternative: the period, then each bar's name and figure. */
function summary(bars: readonly ProductBar[], o: ProductChartOptions): string {
  const head = `Meilleures ventes nettes par ${o.per}, ${o.period}`;
  const items = bars.map((b, i) => {
    const compared =
      o.comparedTo === undefined
        ? ''
        : ` (contre ${o.money(b.previous ?? 0)}, ${b.change == null ? 'évolution non calculable' : formatChange(b.change)})`;
    return `${i + 1}. ${b.label} : ${o.money(b.value)}${compared}`;
  });
  const against = o.comparedTo === undefined ? '' : `, comparées à la période ${o.comparedTo}`;
  return `${head}${against} : ${items.join(' ; ')}.`;
}

export function productsChartSvg(given: readonly ProductBar[], o: ProductChartOptions): string {
  // A name's direction controls written out, as the table shows them (html.ts): a U+202E in one
  // product's name would otherwise reverse the figures and names after it in the text alternative.
  const bars = given.map((bar) => ({ ...bar, label: shownControls(bar.label) }));
  const compared = o.comparedTo !== undefined;
  const row = compared ? COMPARED_ROW : ROW;
  const largest = bars.reduce((m, b) => Math.max(m, b.value, compared ? (b.previous ?? 0) : 0), 0);
  const height = TOP + bars.length * row + 4;
  const text = escapeHtml(summary(bars, o));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="100%" height="${height}" role="img" ` +
      `aria-label="${text}" font-family="system-ui, sans-serif" font-size="13" class="bars">`,
    `<title>${text}</title>`,
    '<g class="legend" aria-hidden="true">',
    `<rect x="0" y="4" width="14" height="10" fill="${BAR_COLOUR}"/>`,
    `<text x="20" y="13" fill="#111827">${compared ? 'Période choisie' : 'Ventes nettes'}</text>`,
    compared
      ? `<rect x="50%" y="8" width="14" height="5" fill="${PREVIOUS_BAR_COLOUR}"/>` +
        `<text x="50%" dx="20" y="13" fill="#111827">Comparaison</text>`
      : '',
    '</g>',
  ];
  bars.forEach((bar, i) => {
    const y = TOP + i * row;
    parts.push(
      `<g class="bar" data-value="${bar.value}" aria-hidden="true">`,
      `<text x="0" y="${y + 13}" fill="#111827">${escapeHtml(cut(bar.label))}</text>`,
      `<text x="100%" y="${y + 13}" text-anchor="end" fill="#111827" font-weight="600">${escapeHtml(o.money(bar.value))}</text>`,
      `<rect x="0" y="${y + 19}" width="${percent(bar.value, largest)}" height="12" rx="2" fill="${BAR_COLOUR}"/>`,
      compared
        ? `<rect class="previous" x="0" y="${y + 33}" width="${percent(bar.previous ?? 0, largest)}" height="6" rx="2" fill="${PREVIOUS_BAR_COLOUR}"/>`
        : '',
      '</g>',
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}
