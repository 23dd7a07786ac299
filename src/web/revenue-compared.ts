// The Revenue page's comparison (issue 20, PC1): the key figures at the top and the compared
// table. A change is shown by colour, by an arrow and a sign, and in words for screen readers:
// colour is never the only sign. A fall is "down" (red) for every figure.
import type { Compared, ComparedRevenue, FigureId, KeyMetric } from '../metrics/revenue-compare.js';
import { comparedFigures, FIGURE_IDS, KEY_METRICS } from '../metrics/revenue-compare.js';
import type { RevenueDay } from '../metrics/revenue.js';
import type { Granularity } from '../query/dates.js';
import { html, type Html } from './html.js';
import { bucketLabel } from './revenue-chart.js';

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

const ONE_DECIMAL = new Intl.NumberFormat('fr-FR', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const ARROWS: Record<Direction, string> = { up: '▲', down: '▼', same: '=', none: '' };

/** The change as shown: « ▲ +12,5 % », « ▼ −3,0 % », « = 0,0 % », « — » without one. */
export function changeLabel(change: number | null): string {
  const to = direction(change);
  if (change === null) return '—';
  const sign = to === 'up' ? '+' : to === 'down' ? '−' : '';
  return `${ARROWS[to]} ${sign}${ONE_DECIMAL.format(Math.abs(change))}\u00a0%`;
}

/** The same change in words, for screen readers. */
export function changeWords(change: number | null): string {
  const to = direction(change);
  if (change === null) return 'évolution non calculable : la période de comparaison est à zéro ou absente';
  const size = `${ONE_DECIMAL.format(Math.abs(change))} %`;
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
  const money = new Intl.NumberFormat('fr-FR', { style: 'currency', currency });
  const count = new Intl.NumberFormat('fr-FR', { maximumFractionDigits: 0 });
  return { money: (v) => money.format(v), count: (v) => count.format(v) };
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

const figureText = (id: FigureId, value: number, formats: Formats): string =>
  id === 'orders' ? String(value) : formats.money(value);

/** One compared row's cells: each figure, then its comparison value, then its change. */
function comparedCells(
  value: Omit<RevenueDay, 'date'>,
  previous: Omit<RevenueDay, 'date'> | undefined,
  formats: Formats,
): Html[] {
  const changes = comparedFigures(value, previous);
  // Compact (up to 731 rows of 21 cells): the change's arrow and sign say its direction in the
  // cell's text, the column header says what it is; the class only adds the colour.
  return FIGURE_IDS.map((id) => {
    const change = changes[id].change;
    const before = previous === undefined ? '—' : figureText(id, previous[id], formats);
    return html`<td class="num">${figureText(id, value[id], formats)}</td>
      <td class="num previous">${before}</td>
      <td class="num change ${direction(change)}">${changeLabel(change)}</td>`;
  });
}

/** The compared table: bucket k of the period, bucket k of the comparison (its first day), figures. */
export function comparedTableHtml(
  report: ComparedRevenue,
  formats: Formats,
  header: string,
  label: (date: string) => string,
): Html {
  const granularity: Granularity = report.main.granularity;
  const previousLabel = (date: string) =>
    granularity === 'day' || granularity === 'week' ? date : bucketLabel(date, granularity);
  return html`<table id="revenue-table" class="compared">
    <thead>
      <tr>
        <th scope="col">${header}</th>
        <th scope="col">Comparé à</th>
        ${FIGURE_IDS.map(
          (id) =>
            html`<th class="num" scope="col">${FIGURE_LABELS[id]}</th>
              <th class="num" scope="col">${FIGURE_LABELS[id]}, comparaison</th>
              <th class="num" scope="col">${FIGURE_LABELS[id]}, évolution</th>`,
        )}
      </tr>
    </thead>
    <tbody>
      ${report.buckets.map(
        ({ main, previous }) =>
          html`<tr data-date="${main.date}" data-date-previous="${previous?.date ?? ''}">
            <th scope="row">${label(main.date)}</th>
            <td>${previous === undefined ? '—' : previousLabel(previous.date)}</td>
            ${comparedCells(main, previous, formats)}
          </tr>`,
      )}
    </tbody>
    <tfoot>
      <tr id="revenue-totals">
        <th scope="row">Total</th>
        <td>${report.comparison.from} – ${report.comparison.to}</td>
        ${comparedCells(report.main.totals, report.previous.totals, formats)}
      </tr>
    </tfoot>
  </table>`;
}
