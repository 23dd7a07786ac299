import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RevenueDay } from '../../../src/metrics/revenue.js';
import { addDays, nextBucketStart } from '../../../src/query/dates.js';
import {
  GROSS_COLOUR,
  NET_COLOUR,
  bucketLabel,
  escapeXml,
  labelIndices,
  revenueChartSvg,
  yScale,
} from '../../../src/web/revenue-chart.js';

const day = (date: string, netRevenue: number, grossSales: number): RevenueDay => ({
  date,
  orders: grossSales === 0 ? 0 : 1,
  grossSales,
  refunds: 0,
  taxes: 0,
  shipping: 0,
  fees: 0,
  netRevenue,
});

function series(from: string, count: number, value: (i: number) => [number, number]): RevenueDay[] {
  return Array.from({ length: count }, (_, i) => day(addDays(from, i), ...value(i)));
}

/** French number spaces (U+202F, U+00A0) as plain spaces, for readable expectations. */
const plain = (text: string): string => text.replace(/[\u202f\u00a0]/g, ' ');

/**
 * A small XML well-formedness check: tags nest and close, attributes are quoted, text and
 * attribute values hold no raw `<` and no `&` but the five entities.
 */
function assertWellFormed(svg: string): void {
  assert.ok(svg.startsWith('<svg '), 'starts with the svg element');
  assert.ok(svg.endsWith('</svg>'), 'ends with the svg element');
  assert.doesNotMatch(svg, /&(?!(?:amp|lt|gt|quot|#39);)/, 'every & starts an entity');
  const stack: string[] = [];
  let rest = svg;
  while (rest.length > 0) {
    const open = rest.indexOf('<');
    if (open < 0) break;
    assert.doesNotMatch(rest.slice(0, open), />/, 'no raw > in text');
    const tag = /^<(\/?)([a-zA-Z][\w-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/.exec(rest.slice(open));
    assert.ok(tag, `a well-formed tag at: ${rest.slice(open, open + 80)}`);
    const [whole, closing, name, , selfClosing] = tag;
    if (closing) assert.equal(stack.pop(), name, `closing </${name}>`);
    else if (!selfClosing) stack.push(name ?? '');
    rest = rest.slice(open + whole.length);
  }
  assert.deepEqual(stack, [], 'every element is closed');
}

function attribute(element: string, name: string): string | undefined {
  return new RegExp(`\\s${name}="([^"]*)"`).exec(element)?.[1];
}

function polylines(svg: string): { series: string; stroke: string; points: [number, number][] }[] {
  return [...svg.matchAll(/<polyline[^>]*>/g)].map(([element]) => ({
    series: attribute(element, 'data-series') ?? '',
    stroke: attribute(element, 'stroke') ?? '',
    points: (attribute(element, 'points') ?? '')
      .split(' ')
      .map((pair) => pair.split(',').map(Number) as [number, number]),
  }));
}

function viewBox(svg: string): [number, number] {
  const box = (attribute(svg.slice(0, svg.indexOf('>')), 'viewBox') ?? '').split(' ').map(Number);
  return [box[2] ?? NaN, box[3] ?? NaN];
}

const texts = (svg: string, group: string): string[] => {
  const start = svg.indexOf(`<g class="${group}"`);
  const end = svg.indexOf('</g>', start);
  return [...svg.slice(start, end).matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => plain(m[1] ?? ''));
};

/** Every number the drawing uses is finite and inside the viewBox. */
function assertInside(svg: string): void {
  assert.doesNotMatch(svg, /NaN|Infinity|undefined|null/);
  const [width, height] = viewBox(svg);
  for (const [, name, value] of svg.matchAll(/\s(x|x1|x2|cx|y|y1|y2|cy)="([^"]*)"/g)) {
    const n = Number(value);
    assert.ok(Number.isFinite(n), `${name}="${value}"`);
    assert.ok(n >= 0 && n <= (name?.includes('x') ? width : height), `${name}="${value}" inside the viewBox`);
  }
  for (const line of polylines(svg)) {
    for (const [px, py] of line.points) {
      assert.ok(Number.isFinite(px) && Number.isFinite(py), `point ${px},${py}`);
      assert.ok(px >= 0 && px <= width && py >= 0 && py <= height, `point ${px},${py} inside the viewBox`);
    }
  }
}

const MARCH = series('2026-03-01', 31, (i) => [i * 100, i * 120 + 50]);

describe('revenue chart SVG', () => {
  test('structure: accessible, responsive, well-formed; two polylines of distinct colours and a legend', () => {
    const svg = revenueChartSvg(MARCH);
    assertWellFormed(svg);
    assertInside(svg);
    const root = svg.slice(0, svg.indexOf('>'));
    assert.equal(attribute(root, 'xmlns'), 'http://www.w3.org/2000/svg');
    assert.equal(attribute(root, 'role'), 'img');
    assert.equal(attribute(root, 'width'), '100%');
    assert.equal(attribute(root, 'height'), undefined, 'the height follows the width (viewBox ratio)');
    assert.equal(attribute(root, 'viewBox'), '0 0 800 320');
    const label = plain(attribute(root, 'aria-label') ?? '');
    // Totals: net 0 + 100 + … + 3000 = 100 × 465 = 46 500; gross 120 × 465 + 31 × 50 = 57 350.
    assert.equal(
      label,
      'Chiffre d’affaires net et brut par jour, du 1er mars 2026 au 31 mars 2026 (31 jours) : ' +
        'CA net total 46 500,00 €, CA brut total 57 350,00 €.',
    );
    assert.match(svg, /<svg [^>]*>\n<title>[^<]+<\/title>/, 'the title is the first child');
    const lines = polylines(svg);
    assert.deepEqual(
      lines.map((l) => [l.series, l.stroke]),
      [
        ['gross', GROSS_COLOUR],
        ['net', NET_COLOUR],
      ],
    );
    assert.notEqual(NET_COLOUR, GROSS_COLOUR);
    for (const line of lines) assert.equal(line.points.length, 31, `${line.series}: one point per day`);
    const xs = lines[0]?.points.map(([px]) => px) ?? [];
    assert.ok(
      xs.every((px, i) => i === 0 || px > (xs[i - 1] ?? Infinity)),
      'days from left to right',
    );
    assert.deepEqual(texts(svg, 'legend'), ['CA net', 'CA brut']);
    const legend = svg.slice(svg.indexOf('<g class="legend"'));
    assert.ok(legend.includes(`stroke="${NET_COLOUR}"`) && legend.includes(`stroke="${GROSS_COLOUR}"`));
    assert.equal((svg.match(/<circle /g) ?? []).length, 62, 'a dot per day and series on a short period');
  });

  test('y axis: 4 or 5 rounded ticks formatted in French, 0 among them; a few date labels', () => {
    const svg = revenueChartSvg(series('2026-03-01', 10, (i) => [i * 1000, i * 1111]));
    // Highest value 9 × 1111 = 9 999 → 4 steps of 2 500 up to 10 000.
    assert.deepEqual(texts(svg, 'y-axis'), ['0 €', '2 500 €', '5 000 €', '7 500 €', '10 000 €']);
    const dates = texts(svg, 'x-axis');
    assert.ok(dates.length >= 2 && dates.length <= 7, dates.join(' | '));
    assert.equal(dates[0], '1 mars');
    assert.equal(dates[dates.length - 1], '10 mars');
    // Highest 25 000: 3 steps of 10 000 fit tighter than 4 (0 to 40 000).
    const large = revenueChartSvg(series('2026-03-01', 3, (i) => [12_500 * i, 12_500 * i]));
    assert.deepEqual(texts(large, 'y-axis'), ['0 €', '10 000 €', '20 000 €', '30 000 €']);
  });

  test('one day: a point per series, drawn as a dot, labelled once', () => {
    const svg = revenueChartSvg([day('2026-03-05', 40.5, 50)]);
    assertWellFormed(svg);
    assertInside(svg);
    const lines = polylines(svg);
    assert.deepEqual(
      lines.map((l) => l.points.length),
      [1, 1],
    );
    assert.equal((svg.match(/<circle /g) ?? []).length, 2, 'a lone point is visible as a dot');
    assert.deepEqual(texts(svg, 'x-axis'), ['5 mars']);
    assert.match(plain(svg), /aria-label="[^"]*le 5 mars 2026 \(1 jour\) : CA net total 40,50 €/);
  });

  test('730 days: every point drawn, a handful of date labels with years, no dots', () => {
    const days = series('2024-03-11', 730, (i) => [Math.sin(i / 20) * 500, 800 + (i % 7) * 10.01]);
    const svg = revenueChartSvg(days);
    assertWellFormed(svg);
    assertInside(svg);
    for (const line of polylines(svg)) assert.equal(line.points.length, 730);
    const dates = texts(svg, 'x-axis');
    assert.ok(dates.length >= 2 && dates.length <= 7, dates.join(' | '));
    assert.equal(dates[0], '11 mars 2024', 'a period across years shows the year');
    assert.equal(dates[dates.length - 1], '10 mars 2026');
    assert.equal((svg.match(/<circle /g) ?? []).length, 0);
    assert.ok(svg.length < 60_000, `${svg.length} characters`);
  });

  test('all zeros: a readable axis, both lines on the zero line, zero totals', () => {
    const svg = revenueChartSvg(series('2026-03-01', 5, () => [0, 0]));
    assertWellFormed(svg);
    assertInside(svg);
    assert.deepEqual(texts(svg, 'y-axis'), ['0 €', '25 €', '50 €', '75 €', '100 €']);
    const zeroLine = /<line [^>]*y1="([\d.]+)"[^>]*>\n<text [^>]*>0\s€<\/text>/.exec(plain(svg))?.[1];
    for (const line of polylines(svg)) {
      assert.ok(
        line.points.every(([, py]) => String(py) === zeroLine),
        `${line.series} on y=${zeroLine}`,
      );
    }
    assert.match(plain(svg), /CA net total 0,00 €, CA brut total 0,00 €/);
  });

  test('negative net revenue: the axis goes below zero and the line below the zero line', () => {
    const days = [day('2026-03-01', -120, 30), day('2026-03-02', 80, 100), day('2026-03-03', -0.01, 0)];
    const svg = revenueChartSvg(days);
    assertWellFormed(svg);
    assertInside(svg);
    const ticks = texts(svg, 'y-axis');
    assert.ok(ticks.length >= 4 && ticks.length <= 5, ticks.join(' | '));
    assert.ok(ticks.includes('0 €'));
    assert.match(ticks[0] ?? '', /^[-−]\d/, `lowest tick ${ticks[0]} is negative`);
    const net = polylines(svg).find((l) => l.series === 'net');
    const gross = polylines(svg).find((l) => l.series === 'gross');
    const zeroY = gross?.points[2]?.[1] ?? NaN; // gross 0 on the third day
    assert.ok((net?.points[0]?.[1] ?? 0) > zeroY, 'below the zero line (y grows downwards)');
    assert.match(plain(svg), /CA net total -40,01 €/);
  });

  test('inserted text is escaped: dates, currency code', () => {
    const svg = revenueChartSvg([day('"><script>alert(1)</script>', 1, 2), day('2026-03-02&x', 3, 4)], {
      currency: '<b>"&',
    });
    assertWellFormed(svg);
    assert.doesNotMatch(svg, /<script|<b>/);
    assert.match(svg, /&lt;script&gt;/);
    assert.match(svg, /&lt;b&gt;&quot;&amp;/);
    assert.equal(escapeXml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  test('options: size and currency; nonsense sizes fall back or are bounded; no days at all', () => {
    const svg = revenueChartSvg(MARCH, { width: 400, height: 200, currency: 'USD' });
    assert.deepEqual(viewBox(svg), [400, 200]);
    assertInside(svg);
    assert.ok(
      texts(svg, 'y-axis').every((t) => t.endsWith(' $US')),
      texts(svg, 'y-axis').join(' | '),
    );
    assert.ok(texts(svg, 'x-axis').length <= 4, 'fewer date labels on a narrow chart');
    assert.deepEqual(viewBox(revenueChartSvg(MARCH, { width: Number.NaN, height: -5 })), [800, 160]);
    const lowercase = revenueChartSvg(MARCH, { currency: 'eur' });
    assert.ok(texts(lowercase, 'y-axis').every((t) => t.endsWith(' €')));
    const empty = revenueChartSvg([]);
    assertWellFormed(empty);
    assertInside(empty);
    assert.equal(polylines(empty).length, 0);
    assert.match(empty, /Aucune donnée/);
  });

  test('a non-finite value is refused rather than drawn', () => {
    assert.throws(() => revenueChartSvg([day('2026-03-01', Number.NaN, 1)]), RangeError);
    assert.throws(() => revenueChartSvg([day('2026-03-01', 1, Infinity)]), RangeError);
  });
});

/** `count` months from `from` (a first of month), with large monthly amounts. */
function months(from: string, count: number, value: (i: number) => [number, number]): RevenueDay[] {
  const days: RevenueDay[] = [];
  for (let start = from, i = 0; i < count; start = nextBucketStart(start, 'month'), i++)
    days.push(day(start, ...value(i)));
  return days;
}

describe('revenue chart SVG with wider buckets (G2)', () => {
  test('one month: a dot per series, the month as its label, « en mars 2026 (1 mois) »', () => {
    const svg = revenueChartSvg([day('2026-03-01', 1234.5, 2000)], { granularity: 'month' });
    assertWellFormed(svg);
    assertInside(svg);
    assert.deepEqual(
      polylines(svg).map((l) => l.points.length),
      [1, 1],
    );
    assert.equal((svg.match(/<circle /g) ?? []).length, 2);
    assert.deepEqual(texts(svg, 'x-axis'), ['mars 2026']);
    assert.match(
      plain(svg),
      /aria-label="Chiffre d’affaires net et brut par mois, en mars 2026 \(1 mois\) : CA net total 1 234,50 €/,
    );
  });

  test('25 months across three years: every point, dots, month labels with years, ends labelled', () => {
    const days = months('2024-04-01', 25, (i) => [20_000 + i * 1000.01, 30_000 + (i % 5) * 2500]);
    assert.equal(days[24]?.date, '2026-04-01');
    const svg = revenueChartSvg(days, { granularity: 'month' });
    assertWellFormed(svg);
    assertInside(svg);
    for (const line of polylines(svg)) assert.equal(line.points.length, 25);
    assert.equal((svg.match(/<circle /g) ?? []).length, 50, 'few, wide buckets keep their dots');
    const labels = texts(svg, 'x-axis');
    assert.ok(labels.length >= 2 && labels.length <= 7, labels.join(' | '));
    assert.equal(labels[0], 'avr. 2024');
    assert.equal(labels[labels.length - 1], 'avr. 2026');
    // Net: 25 × 20 000 + 1 000,01 × (0 + … + 24 = 300); gross: 25 × 30 000 + 2 500 × 5 × (0 + … + 4).
    assert.match(
      plain(svg),
      /par mois, d’avril 2024 à avril 2026 \(25 mois\) : CA net total 800 003,00 €, CA brut total 875 000,00 €/,
    );
  });

  test('weeks, quarters and years name their buckets in the summary and on the axis', () => {
    const weeks = revenueChartSvg([day('2025-12-29', 1, 1), day('2026-01-05', 2, 2)], {
      granularity: 'week',
    });
    assertWellFormed(weeks);
    assert.match(
      plain(weeks),
      /par semaine, des semaines du 29 décembre 2025 au 5 janvier 2026 \(2 semaines\)/,
    );
    assert.deepEqual(texts(weeks, 'x-axis'), ['29 déc. 2025', '5 janv. 2026']);
    const quarters = revenueChartSvg([day('2025-10-01', 1, 1), day('2026-01-01', 2, 2)], {
      granularity: 'quarter',
    });
    assert.match(plain(quarters), /par trimestre, du T4 2025 au T1 2026 \(2 trimestres\)/);
    assert.deepEqual(texts(quarters, 'x-axis'), ['T4 2025', 'T1 2026']);
    const year = revenueChartSvg([day('2026-01-01', 1, 1)], { granularity: 'year' });
    assert.match(plain(year), /par année, en 2026 \(1 année\)/);
    assert.deepEqual(texts(year, 'x-axis'), ['2026']);
    assert.equal(bucketLabel('2026-03-02', 'week'), 'semaine du 2 mars 2026');
    assert.equal(bucketLabel('<b>', 'month'), '<b>', 'not a day: returned as is, escaped by the caller');
    // Years 1–99 are not 1901–1999 (Date.UTC's reading of them).
    assert.equal(bucketLabel('0001-01-01', 'year'), '1');
    assert.equal(bucketLabel('0099-04-01', 'quarter'), 'T2 99');
  });
});

describe('chart scales', () => {
  test('yScale: 4–5 ticks, 0 included, the range covered, whole cents, no binary noise', () => {
    const cases: [number, number][] = [
      [0, 0],
      [0, 0.01],
      [0, 0.3],
      [0, 7.3],
      [0, 9_999],
      [0, 12_345.67],
      [-120, 100],
      [-0.01, 0],
      [-5, 0],
      [0, 99_999_999_999.99],
    ];
    for (const [low, high] of cases) {
      const { ticks, min, max } = yScale(low, high);
      const text = `${low}..${high}: ${ticks.join(', ')}`;
      assert.ok(ticks.length >= 4 && ticks.length <= 5, text);
      assert.ok(ticks.includes(0), text);
      assert.ok(min <= low && max >= high, text);
      assert.equal(min, ticks[0]);
      assert.equal(max, ticks[ticks.length - 1]);
      for (const tick of ticks) {
        assert.ok(Math.abs(tick * 100 - Math.round(tick * 100)) < 1e-6, `${text}: ${tick} is whole cents`);
        assert.ok(String(tick).length <= 16, `${text}: ${tick} has no binary noise`);
      }
    }
    assert.deepEqual(yScale(0, 0.3).ticks, [0, 0.1, 0.2, 0.3]);
    assert.deepEqual(yScale(0, 12_345).ticks, [0, 5_000, 10_000, 15_000]);
  });

  test('labelIndices: all days when few, first and last always, at most 7', () => {
    assert.deepEqual(labelIndices(0, 700), []);
    assert.deepEqual(labelIndices(1, 700), [0]);
    assert.deepEqual(labelIndices(5, 700), [0, 1, 2, 3, 4]);
    for (const count of [8, 31, 365, 730]) {
      const indices = labelIndices(count, 700);
      assert.ok(indices.length >= 2 && indices.length <= 7, `${count}: ${indices.join(',')}`);
      assert.equal(indices[0], 0);
      assert.equal(indices[indices.length - 1], count - 1);
    }
    assert.equal(labelIndices(730, 100).length, 2);
  });
});
