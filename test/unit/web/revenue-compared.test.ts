// PC1 on the Revenue page, the display: a change shown by colour class, arrow, sign and words
// (colour never alone, a fall always "down"); the key figures; the chart's comparison series,
// matched bucket by bucket and described in its text alternative.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RevenueDay } from '../../../src/metrics/revenue.js';
import { KEY_METRICS, compared } from '../../../src/metrics/revenue-compare.js';
import { addDays } from '../../../src/query/dates.js';
import { NET_COLOUR, PREVIOUS_COLOUR, revenueChartSvg } from '../../../src/web/revenue-chart.js';
import {
  changeClasses,
  changeLabel,
  changeWords,
  direction,
  formatsFor,
  keyFiguresHtml,
} from '../../../src/web/revenue-compared.js';

const plain = (text: string): string => text.replace(/[\u202f\u00a0]/g, ' ');

test('a change: arrow, sign and one decimal on screen, words for screen readers', () => {
  assert.deepEqual(
    [12.5, -3, 0, null, 1234.5].map((c) => [direction(c), plain(changeLabel(c)), plain(changeWords(c))]),
    [
      ['up', '▲ +12,5 %', 'en hausse de 12,5 %'],
      ['down', '▼ −3,0 %', 'en baisse de 3,0 %'],
      ['same', '= 0,0 %', 'stable'],
      ['none', '—', 'évolution non calculable : la période de comparaison est à zéro ou absente'],
      ['up', '▲ +1 234,5 %', 'en hausse de 1 234,5 %'],
    ],
  );
});

test('key figures: money and counts in French, each with the previous value and its change', () => {
  const figures = Object.fromEntries(KEY_METRICS.map((m) => [m, compared(10, 8)])) as Record<
    (typeof KEY_METRICS)[number],
    ReturnType<typeof compared>
  >;
  figures.net_revenue = compared(1234.5, 1500);
  figures.new_customers = compared(3, 0);
  const page = plain(keyFiguresHtml(figures, formatsFor('EUR'), 'du 1 février 2026 au 28 février 2026').text);
  for (const metric of KEY_METRICS) assert.match(page, new RegExp(`data-metric="${metric}"`));
  assert.match(
    page,
    /<dt>CA net<\/dt>\s*<dd class="value">1 234,50 €<\/dd>\s*<dd class="previous">\s*contre\s*1 500,00 €/,
  );
  assert.match(page, /class="change down"[^]*?▼ −17,7 %[^]*?en baisse de 17,7 %/); // −17.7 by PC1's rule
  assert.match(page, /<dt>Commandes<\/dt>\s*<dd class="value">10<\/dd>[^]*?class="change up"/);
  assert.match(page, /<dt>Nouveaux clients<\/dt>[^]*?class="change none"[^]*?—/);
  assert.match(page, /Comparé à la période du 1 février 2026 au 28 février 2026/);
  // Without a comparison: the values alone.
  const alone = keyFiguresHtml(
    Object.fromEntries(KEY_METRICS.map((m) => [m, 0])) as Record<(typeof KEY_METRICS)[number], number>,
    formatsFor('EUR'),
  ).text;
  assert.doesNotMatch(alone, /class="change|contre|Comparé/);
});

const days = (from: string, values: number[]): RevenueDay[] =>
  values.map((v, i) => ({
    date: addDays(from, i),
    orders: 1,
    grossSales: v,
    refunds: 0,
    taxes: 0,
    shipping: 0,
    fees: 0,
    netRevenue: v,
  }));
const points = (svg: string, series: string): [number, number][] =>
  (new RegExp(`data-series="${series}"[^>]*points="([^"]*)"`).exec(svg)?.[1] ?? '')
    .split(' ')
    .filter(Boolean)
    .map((p) => p.split(',').map(Number) as [number, number]);

test('chart: the comparison as a second, lighter series, point k under point k, in the text alternative', () => {
  const svg = revenueChartSvg(days('2024-02-01', [10, 20, 30, 40]), {
    previous: { values: [50, 5, 15], total: 70, period: 'du 1 février 2023 au 3 février 2023', change: 42.9 },
  });
  const net = points(svg, 'net');
  const previous = points(svg, 'previous');
  assert.equal(net.length, 4);
  assert.equal(previous.length, 3, 'no fourth comparison bucket: the line stops');
  previous.forEach(([x], k) => assert.equal(x, net[k]?.[0], `bucket ${k} aligned`));
  // The axis holds the comparison's values too: 50 is above every main value, still in the plot.
  const top = Math.min(...previous.map(([, y]) => y));
  assert.ok(top >= 36 && top < Math.min(...net.map(([, y]) => y)));
  assert.match(
    svg,
    new RegExp(`data-series="previous" fill="none" stroke="${PREVIOUS_COLOUR}"[^>]*stroke-dasharray`),
  );
  assert.notEqual(PREVIOUS_COLOUR, NET_COLOUR);
  assert.doesNotMatch(svg, /data-series="gross"/, 'net against net: two series');
  assert.match(svg, />CA net, période de comparaison</);
  assert.match(
    plain(svg),
    /aria-label="Chiffre d’affaires net par jour, comparé à la période du 1 février 2023 au 3 février 2023, du 1er février 2024 au 4 février 2024 \(4 jours\) : CA net total 100,00 €, contre 70,00 € sur la période de comparaison \(en hausse de 42,9 %\)\."/,
  );
  // Extra comparison values past the main count are not drawn (PC1 leaves them out).
  const longer = revenueChartSvg(days('2024-02-01', [1, 2]), {
    previous: { values: [1, 2, 3], total: 6, period: 'p', change: null },
  });
  assert.equal(points(longer, 'previous').length, 2);
  assert.match(plain(longer), /variation non calculable/);
  assert.throws(
    () =>
      revenueChartSvg(days('2024-02-01', [1]), {
        previous: { values: [Number.NaN], total: 0, period: 'p', change: null },
      }),
    RangeError,
  );
});

test('colour follows good news: a rise in refunds or discounts is red (class cost), a fall green', async () => {
  assert.equal(changeClasses(12.5), 'change up');
  assert.equal(changeClasses(-3), 'change down');
  assert.equal(changeClasses(12.5, true), 'change up cost');
  assert.equal(changeClasses(null, true), 'change none cost');
  const { APP_CSS } = await import('../../../src/web/assets.js');
  assert.match(APP_CSS, /\.change\.cost\.up \{ color: var\(--danger\); \}/);
  assert.match(APP_CSS, /\.change\.cost\.down \{ color: var\(--ok\); \}/);
});
