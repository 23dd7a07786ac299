// Issue 20 on the Revenue page, in Chromium against the real server: « Comparer à » (PC1). The key
// figures equal the API's own answers for each period, asked over real HTTP with an API key, and
// their change is PC1's rule; the chart draws the comparison as a second series with a text
// alternative; the table and the CSV carry PC1's comparison columns, buckets matched by index
// (29 February 2024 has no day in February 2023); hostile values of `compare` get a clear 400.
// Then, on both engines (embedded, PostgreSQL with TEST_ENGINE=postgres) over real HTTP: the
// page's key figures and every table row equal the API's own `compare=` answers (S3).
// Covers PC1, S3, U3 on the page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Dialog, Page } from 'playwright-core';
import { addUserToOrganization } from '../../src/domain/users.js';
import { KEY_METRICS } from '../../src/metrics/revenue-compare.js';
import { COMPARED_CSV_HEADER, REVENUE_CSV_HEADER } from '../../src/metrics/revenue-csv.js';
import { percentChange } from '../../src/query/compare.js';
import { chromiumAvailable, launchBrowser, SCREENSHOTS } from '../helpers/browser.js';
import { describeOn } from '../helpers/database.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { Client } from '../helpers/web-client.js';

const EMAIL = 'compare@atelier.example';
const PASSWORD = 'long enough password';
const STORE = 'https://compare.example';
const order = (id: string, created_at: string, total: string, more: Record<string, string> = {}) => ({
  store: STORE,
  id,
  created_at,
  status: 'completed',
  items: 1,
  total,
  ...more,
});

// March 2024, its previous period (30 January – 29 February 2024, a leap day) and March 2023.
// c1 is new in the previous period and returning in March (U3 relative to each period's start).
const ORDERS = [
  order('p1', '2024-02-10T10:00:00Z', '100.00', { customer_email: 'c1@x.fr' }),
  order('p2', '2024-02-29T23:30:00Z', '40.00', { customer_email: 'c4@x.fr', tax_total: '5.00' }),
  order('y1', '2023-03-10T09:00:00Z', '80.00', { customer_email: 'c3@x.fr' }),
  order('m1', '2024-03-05T08:00:00Z', '50.00', { customer_email: 'c1@x.fr' }),
  order('m2', '2024-03-05T09:00:00Z', '30.00', { customer_email: 'c2@x.fr', shipping_total: '4.90' }),
  order('m3', '2024-03-20T12:00:00Z', '20.00', { customer_email: 'c3@x.fr' }),
  order('m4', '2024-03-31T23:59:59Z', '10.00'),
  order('x1', '2024-03-06T10:00:00Z', '999.00', { status: 'pending' }), // S1: nowhere
];

/** A figure as the page writes it (« 1 234,56 € », « ▼ −18,5 % ») back to a number. */
const figure = (text: string): number =>
  Number(
    text
      .replace(/[\s\u00a0\u202f€%▲▼=+]/g, '')
      .replace('−', '-')
      .replace(',', '.'),
  );

// One service for the file (another embedded database costs seconds of CPU); each suite has its
// own organization and its own user.
let service: TestService;
before(async () => {
  service = await startTestService();
});
after(() => service?.cleanup());

describeOn('embedded', 'Revenue page compared with another period (PC1) in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let key = '';

  /** The API's key figures for one period, over real HTTP with the organization's key (S3). */
  const apiFigures = async (from: string, to: string): Promise<Record<string, number>> => {
    const response = await service.get(
      `/api/reports/tabular?metrics=${KEY_METRICS.join(',')}&from=${from}&to=${to}`,
      key,
    );
    assert.equal(response.status, 200);
    const body = (await response.json()) as { rows: Record<string, number>[] };
    return body.rows[0] ?? {};
  };

  before(async () => {
    assert.ok(chromiumAvailable(), 'Debian chromium is installed');
    const added = await service.addOrganization('Atelier Comparaison', ORDERS);
    key = added.key;
    await addUserToOrganization(service.db, added.org.id, EMAIL, PASSWORD);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${service.baseUrl}/login`);
    await page.getByLabel('Adresse e-mail').fill(EMAIL);
    await page.getByLabel('Mot de passe').fill(PASSWORD);
    await page.getByRole('button', { name: 'Se connecter' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/login'));
  });
  after(async () => {
    await browser?.close();
  });

  test('PC1: « Période précédente » shows the key figures of both periods as the API gives them, with PC1’s change', async () => {
    await page.goto(`${service.baseUrl}/reports/revenue?from=2024-03-01&to=2024-03-31`);
    const compare = page.getByLabel('Comparer à');
    assert.equal(await compare.inputValue(), '', 'no comparison by default');
    assert.deepEqual(
      (await compare.locator('option').allTextContents()).map((o) => o.trim()),
      ['Aucune', 'Période précédente', 'Même période l’an dernier'],
    );
    // Without a comparison: the key figures alone, the table and the CSV as before PC1.
    assert.equal(await page.locator('#key-figures .change').count(), 0);
    assert.equal(await page.locator('#revenue-table thead th').count(), 8);
    const plain = await (
      await page.request.get(`${service.baseUrl}/reports/revenue.csv?from=2024-03-01&to=2024-03-31`)
    ).text();
    assert.ok(plain.startsWith(`${REVENUE_CSV_HEADER}\r\n`));

    await compare.selectOption({ label: 'Période précédente' });
    await page.getByRole('button', { name: 'Afficher' }).click();
    await page.waitForURL(/compare=previous_period/);
    assert.equal(await page.getByLabel('Comparer à').inputValue(), 'previous_period', 'the choice is kept');
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'revenue-compare.png'), fullPage: true });

    const now = await apiFigures('2024-03-01', '2024-03-31');
    const before = await apiFigures('2024-01-30', '2024-02-29');
    // Hand-worked: March 4 orders, 110.00 gross, 105.10 net (shipping deducted); the previous
    // period 2 orders, 140.00 gross, 135.00 net (tax deducted). c1 new then, returning now.
    assert.deepEqual([now.orders, now.gross_sales, now.net_revenue, now.new_customers], [4, 110, 105.1, 1]);
    assert.deepEqual(
      [before.orders, before.gross_sales, before.net_revenue, before.new_customers],
      [2, 140, 135, 2],
    );
    const changes: Record<string, number | null> = {};
    for (const metric of KEY_METRICS) {
      const box = page.locator(`#key-figures [data-metric="${metric}"]`);
      assert.equal(figure((await box.locator('.value').textContent()) ?? ''), now[metric], `${metric} now`);
      const previous = ((await box.locator('.previous').textContent()) ?? '').replace('contre', '');
      assert.equal(figure(previous), before[metric], `${metric} before`);
      const expected = percentChange(now[metric] ?? 0, before[metric] ?? null);
      changes[metric] = expected;
      const change = box.locator('.change');
      const shown = (await change.locator('[aria-hidden=true]').textContent()) ?? '';
      const words = (await change.locator('.visually-hidden').textContent()) ?? '';
      if (expected === null) {
        assert.equal(shown.trim(), '—', `${metric}: no change against 0`);
        continue;
      }
      assert.equal(figure(shown), expected, `${metric}: PC1's change`);
      const way = expected > 0 ? 'up' : expected < 0 ? 'down' : 'same';
      assert.match((await change.getAttribute('class')) ?? '', new RegExp(`\\b${way}\\b`));
      // Never colour alone: an arrow and a sign on screen, words for screen readers.
      assert.match(shown, way === 'up' ? /^▲ \+/ : way === 'down' ? /^▼ −/ : /^= /);
      assert.match(words, way === 'up' ? /en hausse de/ : way === 'down' ? /en baisse de/ : /stable/);
    }
    assert.deepEqual([changes.net_revenue, changes.gross_sales, changes.orders], [-22.1, -21.4, 100]);
    const colours = (await page.evaluate(
      `['up', 'down'].map((way) => getComputedStyle(document.querySelector('#key-figures .change.' + way)).color)`,
    )) as string[];
    assert.notEqual(colours[0], colours[1], 'up and down in different colours');

    // The chart: the period's net revenue and the comparison's, a legend and a text alternative.
    const chart = page.locator('.chart svg');
    assert.equal(await chart.locator('polyline').count(), 2);
    assert.equal(await chart.locator('polyline[data-series="previous"]').count(), 1);
    const points = async (series: string) =>
      ((await chart.locator(`polyline[data-series="${series}"]`).getAttribute('points')) ?? '').split(' ')
        .length;
    assert.deepEqual([await points('net'), await points('previous')], [31, 31], 'bucket k under bucket k');
    assert.match((await chart.locator('.legend').textContent()) ?? '', /CA net, période de comparaison/);
    const summary = (await chart.getAttribute('aria-label')) ?? '';
    assert.match(summary, /comparé à la période du 30 janvier au 29 février 2024/);
    assert.match(summary, /CA net total 105,10\s€, contre 135,00\s€ .*en baisse de 22,1 %/);
    assert.equal(await chart.getAttribute('role'), 'img');

    // The table: the comparison's day under each day; each figure's value over its change and
    // previous value (issue 30: CA net first, one column per figure).
    const rows = page.locator('#revenue-table tbody tr');
    assert.equal(await rows.count(), 31);
    const pairs = await rows.evaluateAll((trs) =>
      trs.map((tr) => `${tr.getAttribute('data-date')}/${tr.getAttribute('data-date-previous')}`),
    );
    assert.equal(pairs[0], '2024-03-01/2024-01-30');
    assert.equal(pairs[30], '2024-03-31/2024-02-29');
    const headers = (await page.locator('#revenue-table thead th').allTextContents()).map((h) => h.trim());
    assert.equal(headers.length, 1 + 7);
    assert.deepEqual(headers.slice(0, 4), ['Jour', 'CA net', 'Commandes', 'CA brut']);
    assert.match(
      (await rows.first().locator('th').textContent()) ?? '',
      /1 mars 2024\s+contre 30 janv\. 2024/,
    );

    // The CSV: PC1's columns in PC1's order; the link keeps the choice.
    const link = page.getByRole('link', { name: 'CSV de l’API' });
    assert.equal(
      await link.getAttribute('href'),
      '/reports/revenue.csv?from=2024-03-01&to=2024-03-31&granularity=day&compare=previous_period',
    );
    const response = await page.request.get(`${service.baseUrl}${await link.getAttribute('href')}`);
    assert.match(response.headers()['content-disposition'] ?? '', /comparaison-2024-01-30-2024-02-29\.csv/);
    const lines = (await response.text()).split('\r\n');
    assert.equal(lines[0], COMPARED_CSV_HEADER);
    assert.match(
      COMPARED_CSV_HEADER,
      /^date,date_previous,orders,.*,net_revenue,orders_previous,.*,net_revenue_change$/,
    );
    assert.equal(lines.length, 1 + 31 + 1 + 1);
    // 5 March: two orders against none on 4 February (change null: empty cells).
    assert.equal(
      lines[5],
      '2024-03-05,2024-02-03,2,80.00,0.00,0.00,4.90,0.00,75.10,0,0.00,0.00,0.00,0.00,0.00,0.00,,,,,,,',
    );
    assert.equal(
      lines[32],
      'total,,4,110.00,0.00,0.00,4.90,0.00,105.10,2,140.00,0.00,5.00,0.00,0.00,135.00,100,-21.4,,-100,,,-22.1',
    );
  });

  test('PC1: « Même période l’an dernier » over 29 February: the leap day has no comparison day', async () => {
    await page.goto(`${service.baseUrl}/reports/revenue?from=2024-02-01&to=2024-02-29&compare=previous_year`);
    const rows = page.locator('#revenue-table tbody tr');
    assert.equal(await rows.count(), 29);
    assert.equal(await rows.last().getAttribute('data-date-previous'), '', 'no 29 February 2023');
    assert.match((await rows.last().locator('th').textContent()) ?? '', /contre —/);
    assert.equal((await rows.last().locator('td[data-col=netRevenue] .previous').textContent())?.trim(), '—');
    const chart = page.locator('.chart svg');
    const points = (
      (await chart.locator('polyline[data-series="previous"]').getAttribute('points')) ?? ''
    ).split(' ');
    assert.equal(points.length, 28, 'the comparison line stops at its last day');
    const csv = (
      await (
        await page.request.get(
          `${service.baseUrl}/reports/revenue.csv?from=2024-02-01&to=2024-02-29&compare=previous_year`,
        )
      ).text()
    ).split('\r\n');
    assert.equal(csv[29], '2024-02-29,,1,40.00,0.00,5.00,0.00,0.00,35.00,,,,,,,,,,,,,,');
    // A year earlier February 2023 had no order: every change against 0 is null.
    const box = page.locator('#key-figures [data-metric="net_revenue"]');
    assert.equal(((await box.locator('.change [aria-hidden=true]').textContent()) ?? '').trim(), '—');
    assert.match((await box.locator('.change').textContent()) ?? '', /non calculable/);
  });

  test('PC1: the compared page reads on a phone-sized screen, the table as one card per day', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(
        `${service.baseUrl}/reports/revenue?from=2024-03-01&to=2024-03-31&compare=previous_year`,
      );
      const overflow = (await page.evaluate(
        'document.documentElement.scrollWidth - window.innerWidth',
      )) as number;
      assert.ok(overflow <= 1, `the page overflows by ${overflow}px`);
      assert.ok(await page.locator('#key-figures [data-metric="net_revenue"] .change').isVisible());
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  test('PC1: hostile, huge, repeated or impossible `compare` values get a clear 400, never echoed, no 5xx', async () => {
    const base = `${service.baseUrl}/reports/revenue?from=2024-03-01&to=2024-03-31`;
    const hostile = '<script>alert(1)</script>';
    let dialogs = 0;
    const onDialog = (dialog: Dialog) => (dialogs++, void dialog.dismiss());
    page.on('dialog', onDialog);
    const shown = await page.goto(`${base}&compare=${encodeURIComponent(hostile)}`);
    assert.equal(shown?.status(), 400);
    assert.match((await page.locator('#compare-error').textContent()) ?? '', /Comparaison invalide/);
    assert.equal(await page.getByLabel('Comparer à').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#revenue-table').count(), 0, 'no report for a bad request');
    assert.ok(!(await page.content()).includes('alert(1)'), 'the value is not shown back');
    page.off('dialog', onDialog);
    assert.equal(dialogs, 0, 'no script ran');

    const first = await page.goto(
      `${service.baseUrl}/reports/revenue?from=0001-01-01&to=0001-01-31&compare=previous_period`,
    );
    assert.equal(first?.status(), 400);
    assert.match(
      (await page.locator('#compare-error').textContent()) ?? '',
      /avant le 1er janvier de l’an 1/,
    );

    for (const query of [
      `compare=${'x'.repeat(10_000)}`,
      `compare=${'x'.repeat(70_000)}`, // past the bound of a request line: 431 from Node
      'compare=previous_period&compare=previous_year',
      'compare=custom',
      'compare=PREVIOUS_PERIOD',
      `compare=${encodeURIComponent('previous_period" onfocus="alert(1)')}`,
    ]) {
      for (const path of ['/reports/revenue', '/reports/revenue.csv']) {
        const response = await page.request.get(
          `${service.baseUrl}${path}?from=2024-03-01&to=2024-03-31&${query}`,
        );
        const expected = query.length > 65_536 ? 431 : 400;
        assert.equal(response.status(), expected, `${path}?${query.slice(0, 60)}`);
        const body = await response.text();
        assert.ok(!body.includes('onfocus') && !body.includes('xxxxxxxxxx'), 'not echoed');
      }
    }
  });
});

// Orders on the first and last days of each comparison period, so that a comparison period off by
// one day changes the figures, not only `date_previous`.
const EDGES = [
  order('e1', '2024-01-30T00:00:00Z', '7.00', { customer_email: 'c5@x.fr' }),
  order('e2', '2023-03-01T00:30:00Z', '11.00', { customer_email: 'c1@x.fr', tax_total: '1.00' }),
  order('e3', '2023-03-31T22:00:00Z', '13.00', { customer_email: 'c6@x.fr' }),
  order('e4', '2023-10-06T12:00:00Z', '17.00', { customer_email: 'c2@x.fr', shipping_total: '2.00' }),
  order('e5', '2024-01-01T00:00:00Z', '19.00', { customer_email: 'c7@x.fr' }),
  order('e6', '2023-02-28T12:00:00Z', '23.00', { customer_email: 'c8@x.fr' }),
  order('e7', '2022-11-15T03:00:00Z', '29.00', { customer_email: 'c3@x.fr' }),
];
/** The table's figures that are catalog metrics (refunds and fees are not): column id, metric. */
const TABLE_METRICS = [
  ['orders', 'orders'],
  ['grossSales', 'gross_sales'],
  ['taxes', 'taxes'],
  ['shipping', 'shipping'],
  ['netRevenue', 'net_revenue'],
] as const;

/** A compared cell of the page's HTML: its value, its comparison's value and its change. */
function comparedCell(
  row: string,
  column: string,
): { value: number | null; previous: number | null; change: number | null } {
  const cell = new RegExp(`data-col="${column}"[\\s\\S]*?</td>`).exec(row)?.[0] ?? '';
  const value = /<span class="now">([^<]*)</.exec(cell)?.[1];
  const previous = /class="previous">([^<]*)</.exec(cell)?.[1];
  assert.ok(value !== undefined && previous !== undefined, `cell ${column}: ${cell.slice(0, 300)}`);
  const change = /class="change [^"]*">([^<]*)</.exec(cell)?.[1];
  return {
    value: shown(value),
    previous: shown(previous),
    change: change === undefined ? null : shown(change),
  };
}
const CASES = [
  { from: '2024-03-01', to: '2024-03-31', granularity: 'day', compare: 'previous_period' },
  { from: '2024-03-01', to: '2024-03-31', granularity: 'day', compare: 'previous_year' },
  { from: '2024-02-01', to: '2024-02-29', granularity: 'day', compare: 'previous_year' },
  { from: '2024-01-03', to: '2024-03-31', granularity: 'week', compare: 'previous_period' },
  { from: '2023-11-15', to: '2024-03-31', granularity: 'month', compare: 'previous_year' },
] as const;

/** A shown figure back to a number; « — » (no comparison bucket, or no change) is null. */
const shown = (text: string): number | null => (text.trim() === '—' ? null : figure(text));
const cents = (value: unknown): number | null =>
  value === null || value === undefined ? null : Math.round(Number(value) * 100) / 100;

describe('Revenue page compared (PC1): key figures and table equal the API’s compare= answers (S3)', () => {
  const email = `http-${EMAIL}`; // its own user: a session on this suite's organization alone
  let client: Client;
  let key = '';

  const api = async (query: string): Promise<Record<string, number | string | null>[]> => {
    const response = await service.get(`/api/reports/tabular?${query}`, key);
    assert.equal(response.status, 200, query);
    return ((await response.json()) as { rows: Record<string, number | string | null>[] }).rows;
  };

  before(async () => {
    const added = await service.addOrganization('Atelier Comparaison HTTP', [...ORDERS, ...EDGES]);
    key = added.key;
    await addUserToOrganization(service.db, added.org.id, email, PASSWORD);
    client = new Client(service.baseUrl);
    assert.equal((await client.login(email, PASSWORD)).status, 303);
  });

  test('PC1: a previous period reaching before year 1 is refused as the comparison, in French, no computed day shown (issue 26)', async () => {
    for (const path of ['/reports/revenue', '/reports/revenue.csv']) {
      const response = await client.get(`${path}?from=0001-01-02&to=0002-01-05&compare=previous_period`);
      assert.equal(response.status, 400, path);
      const text = await response.text();
      assert.ok(!text.includes('-0001'), `${path}: no day the user never typed`);
      if (path === '/reports/revenue') {
        assert.match(
          text,
          /id="compare-error">[^<]*période de comparaison commencerait avant le 1er janvier/,
        );
        assert.ok(!text.includes('id="from-error"'), 'the period itself is fine');
      } else {
        assert.equal(text, 'Comparaison invalide');
      }
    }
  });

  for (const c of CASES) {
    test(`PC1, S3: ${c.granularity} ${c.from}..${c.to} compare=${c.compare}`, async () => {
      const period = `from=${c.from}&to=${c.to}&compare=${c.compare}`;
      const response = await client.get(`/reports/revenue?${period}&granularity=${c.granularity}`);
      assert.equal(response.status, 200);
      const html = await response.text();

      // Key figures: value, « contre » value and change, as the API's row without dimensions.
      const [row] = await api(`metrics=${KEY_METRICS.join(',')}&${period}`);
      assert.ok(row);
      for (const metric of KEY_METRICS) {
        const box = new RegExp(
          `data-metric="${metric}"[\\s\\S]*?class="value">([^<]*)<[\\s\\S]*?class="previous">\\s*contre([^<]*)<[\\s\\S]*?aria-hidden="true">([^<]*)<`,
        ).exec(html);
        assert.ok(box, `key figure ${metric}`);
        assert.equal(shown(box[1] ?? ''), cents(row[metric]), `${metric}`);
        assert.equal(shown(box[2] ?? ''), cents(row[`${metric}_previous`]), `${metric}_previous`);
        assert.equal(shown(box[3] ?? ''), row[`${metric}_change`], `${metric}_change`);
      }

      // The table: bucket k and the comparison's k-th bucket, as the API's rows by `date`.
      const rows = await api(
        `dimensions=date&granularity=${c.granularity}&metrics=${TABLE_METRICS.map(([, m]) => m).join(',')}&${period}&limit=1000`,
      );
      const byDate = new Map(rows.map((r) => [String(r.date), r]));
      const body = html.slice(html.indexOf('<tbody>'), html.indexOf('</tbody>'));
      const trs = [...body.matchAll(/data-date="([^"]*)" data-date-previous="([^"]*)"([\s\S]*?)<\/tr>/g)];
      assert.ok(trs.length > 0);
      const dates = new Set(trs.map((tr) => tr[1]));
      for (const r of rows) assert.ok(dates.has(String(r.date)), `API row ${String(r.date)} on the page`);
      let compared = 0;
      for (const [, date = '', datePrevious = '', cells = ''] of trs) {
        const r = byDate.get(date);
        if (r === undefined) {
          // No order in either period's k-th bucket: the API has no row, the page zeros.
          for (const [column] of TABLE_METRICS)
            assert.equal(comparedCell(cells, column).value, 0, `${date} without an API row`);
          continue;
        }
        compared++;
        assert.equal(datePrevious, r.date_previous ?? '', `${date}: date_previous`);
        for (const [column, metric] of TABLE_METRICS) {
          const at = `${date} ${metric}`;
          const cell = comparedCell(cells, column);
          assert.equal(cell.value, cents(r[metric]), at);
          assert.equal(cell.previous, cents(r[`${metric}_previous`]), `${at}_previous`);
          assert.equal(cell.change, r[`${metric}_change`], `${at}_change`);
        }
      }
      assert.equal(compared, rows.length, 'every API row compared');
    });
  }
});
