// The Revenue page's comparison (issue 20, PC1): the key figures at the top (the compared table
// is in revenue-tables.ts). A change is shown by colour, by an arrow and a sign, and in words for screen readers:
// colour is never the only sign. A fall is "down" and a rise "up" for every figure; the colour
// says whether that is good news: red for a fall, green for a rise, the other way round for what
// the shop would rather see fall (refunds, discounts: class `cost`).
import type { Compared, FigureId, KeyMetric } from '../metrics/revenue-compare.js';
import { KEY_METRICS } from '../metrics/revenue-compare.js';
import { formatChange, formatCount, formatMoney, formatPercent } from './format.js';
import { html, type Html } from './html.js';

export const KEY_LABELS: Record<KeyMetric, string> = {
  net_revenue: 'CA net',
  gross_sales: 'CA brut',
  orders: 'Commandes',
  average_order_value: 'Panier moyen',
  unique_customers: 'Clients uniques',
  new_customers: 'Nouveaux clients',
};

const MONEY_METRICS: ReadonlySet<KeyMetric> = new Set(['net_revenue', 'gross_sales', 'average_order_value']);

export const FIGURE_LABELS: Record<FigureId, string> = {
  orders: 'Commandes',
  grossSales: 'CA brut',
  refunds: 'Remboursements',
  taxes: 'Taxes',
  shipping: 'Livraison',
  fees: 'Frais',
  netRevenue: 'CA net',
};

export type Direction = 'up' | 'down' | 'same' | 'none';

/** Up when the figure grew, down when it fell (for every figure), none without a change. */
export const direction = (change: number | null): Direction =>
  change === null ? 'none' : change > 0 ? 'up' : change < 0 ? 'down' : 'same';

const ARROWS: Record<Direction, string> = { up: '▲', down: '▼', same: '=', none: '' };

/**
 * The classes of a change's mark: its direction, and `cost` for a figure the shop would rather see
 * fall (refunds, discounts), so that its rise is shown in red and its fall in green.
 */
export const changeClasses = (change: number | null, cost = false): string =>
  cost ? `change ${direction(change)} cost` : `change ${direction(change)}`;

/** The change as shown: « ▲ +12,5 % », « ▼ −3,0 % », « = 0,0 % », « — » without one. */
export function changeLabel(change: number | null): string {
  if (change === null) return '—';
  return `${ARROWS[direction(change)]} ${formatChange(change)}`;
}

/** The same change in words, for screen readers. */
export function changeWords(change: number | null): string {
  const to = direction(change);
  if (change === null) return 'évolution non calculable : la période de comparaison est à zéro ou absente';
  const size = formatPercent(Math.abs(change)).replace('\u00a0', ' ');
  if (to === 'up') return `en hausse de ${size}`;
  if (to === 'down') return `en baisse de ${size}`;
  return 'stable';
}

/** A change: arrow and sign shown, words read, colour from its direction (class up or down). */
export function changeHtml(change: number | null): Html {
  return html`<span class="change ${direction(change)}"
    ><span aria-hidden="true">${changeLabel(change)}</span
    ><span class="visually-hidden">${changeWords(change)}</span></span
  >`;
}

export interface Formats {
  readonly money: (value: number) => string;
  readonly count: (value: number) => string;
}

export function formatsFor(currency: string): Formats {
  return { money: (v) => formatMoney(v, currency), count: formatCount };
}

const formatKey = (metric: KeyMetric, value: number, formats: Formats): string =>
  MONEY_METRICS.has(metric) ? formats.money(value) : formats.count(value);

/** The key figures of the period; with a comparison, each with the previous value and its change. */
export function keyFiguresHtml(
  figures: Record<KeyMetric, number | Compared>,
  formats: Formats,
  comparedTo?: string,
): Html {
  return html`<section class="card" aria-labelledby="key-figures-title">
    <h2 id="key-figures-title" class="visually-hidden">Chiffres clés</h2>
    <dl class="figures" id="key-figures">
      ${KEY_METRICS.map((metric) => {
        const figure = figures[metric];
        const value = typeof figure === 'number' ? figure : figure.value;
        const compared =
          typeof figure === 'number' || comparedTo === undefined
            ? ''
            : html`<dd class="previous">
                  contre ${figure.previous === null ? '—' : formatKey(metric, figure.previous, formats)}
                </dd>
                <dd>${changeHtml(figure.change)}</dd>`;
        return html`<div class="figure" data-metric="${metric}">
          <dt>${KEY_LABELS[metric]}</dt>
          <dd class="value">${formatKey(metric, value, formats)}</dd>
          ${compared}
        </div>`;
      })}
    </dl>
    ${comparedTo === undefined ? '' : html`<p class="muted">Comparé à la période ${comparedTo}.</p>`}
  </section>`;
}
