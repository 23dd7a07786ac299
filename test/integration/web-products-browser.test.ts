// Issue 27 item 5, the « Produits » page in a real Chromium against the real server: the chart of
// the top ten by net sales and the table render, the headers and « Trier par » sort the table on
// the server (L7), the navigation leads there, and the page fits a 375 px phone and a laptop
// without scrolling sideways, plain and compared (PC1). One server, one small data set.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { addUserToOrganization } from '../../src/domain/users.js';
import { chromiumAvailable, launchBrowser, SCREENSHOTS } from '../helpers/browser.js';
import { describeOn } from '../helpers/database.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { PASSWORD } from '../helpers/web-client.js';

const EMAIL = 'navigateur@produits.example';
const STORE = 'https://navigateur.example';
const MARCH = 'from=2026-03-01&to=2026-03-31';
const LONG_NAME = 'Coffret découverte de douze thés verts et noirs en vrac d’origines lointaines';

/** Twelve products: product k sells k units at 10.00 each (net 10·k), in k orders of March 2026
 * or in February for the comparison; product 12 has a long name, product 5 a name without spaces. */
function orders(): Record<string, unknown>[] {
  const made: Record<string, unknown>[] = [];
  for (let k = 1; k <= 12; k++) {
    const name = k === 12 ? LONG_NAME : k === 5 ? 'Bougie'.repeat(12) : `Produit ${k}`;
    for (const [month, day] of [
      ['03', k],
      ['02', k + 1],
    ] as const) {
      made.push({
        store: STORE,
        id: `${month}-${k}`,
        created_at: `2026-${month}-${String(day).padStart(2, '0')}T10:00:00Z`,
        status: 'completed',
        items: k,
        total: `${10 * k}.00`,
        lines: [
          {
            line_id: '1',
            product_id: `p${k}`,
            sku: `SKU-${k}`,
            product_name: name,
            categories: [k % 2 ? 'Impairs' : 'Pairs'],
            quantity: month === '03' ? k : 1,
            subtotal: month === '03' ? `${10 * k}.00` : '10.00',
          },
        ],
      });
    }
  }
  return made;
}

const figure = (text: string): number =>
  Number(
    text
      .replace(/[\s\u00a0\u202f€]/g, '')
      .replace('−', '-')
      .replace(',', '.'),
  );

describeOn('embedded', 'the « Produits » page in Chromium (issue 27, item 5)', () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;

  /** A column's main values, top to bottom. */
  const column = async (id: string): Promise<number[]> =>
    (await page.locator(`#products-table tbody td[data-col="${id}"] .cell`).allTextContents()).map((t) =>
      figure(t.split('\n')[0] ?? t),
    );
  const fits = async (url: string, name: string) => {
    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${service.baseUrl}${url}`);
      const [scroll, inner] = await page.evaluate<[number, number]>(
        '[document.documentElement.scrollWidth, window.innerWidth]',
      );
      assert.ok(scroll <= inner, `${url} at ${width} px: ${scroll} px wide`);
      if (width === 1280) {
        const [inside, box] = await page
          .locator('#products-table')
          .evaluate((table) => [table.scrollWidth, table.parentElement?.clientWidth ?? 0]);
        assert.ok((inside ?? 0) <= (box ?? 0), `the table inside its box at 1,280 px: ${inside} > ${box}`);
      }
      const chart = await page.locator('svg.bars').boundingBox();
      assert.ok(chart && chart.x >= 0 && chart.x + chart.width <= width, `the chart inside ${width} px`);
      if (process.env.UX_SHOTS) {
        fs.mkdirSync(SCREENSHOTS, { recursive: true });
        await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
      }
    }
  };

  before(async () => {
    assert.ok(chromiumAvailable(), 'Debian chromium is installed');
    service = await startTestService();
    const { org } = await service.addOrganization('Atelier Navigateur Produits', orders());
    await addUserToOrganization(service.db, org.id, EMAIL, PASSWORD);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'fr-FR' });
    await page.goto(`${service.baseUrl}/login`);
    await page.getByLabel('Adresse e-mail').fill(EMAIL);
    await page.getByLabel('Mot de passe').fill(PASSWORD);
    await page.getByRole('button', { name: 'Se connecter' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/login'));
  });
  after(async () => {
    await browser?.close();
    await service?.cleanup();
  });

  test('the navigation leads to the page; the chart draws the top ten by net sales with a text alternative', async () => {
    await page.goto(`${service.baseUrl}/reports/revenue?${MARCH}`);
    await page.getByRole('link', { name: 'Produits', exact: true }).click();
    await page.waitForURL(/\/reports\/products$/);
    await page.goto(`${service.baseUrl}/reports/products?${MARCH}`);
    const chart = page.getByRole('img', { name: /^Meilleures ventes nettes par produit/ });
    assert.equal(await chart.count(), 1);
    const values = await page
      .locator('svg.bars g.bar')
      .evaluateAll((bars) => bars.map((bar) => Number(bar.getAttribute('data-value'))));
    assert.deepEqual(values, [120, 110, 100, 90, 80, 70, 60, 50, 40, 30], 'ten bars, largest first');
    const widths = await page
      .locator('svg.bars g.bar rect')
      .evaluateAll((rects) => rects.map((r) => r.getBoundingClientRect().width));
    assert.ok(widths[0] && widths[9] && Math.abs(widths[9] / widths[0] - 0.25) < 0.02, 'bars to scale');
    const label = (await chart.getAttribute('aria-label')) ?? '';
    assert.ok(label.includes(`1. ${LONG_NAME} : 120,00`), 'the whole name in the text alternative');
    assert.equal(await page.locator('#products-table tbody tr').count(), 12);
  });

  test('L7: a header sorts the table on the server, again the other way; « Trier par » too', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${service.baseUrl}/reports/products?${MARCH}`);
    assert.deepEqual(await column('product_net_sales'), [120, 110, 100, 90, 80, 70, 60, 50, 40, 30, 20, 10]);
    await page.locator('#products-table thead a[data-sort="units_sold"]').click();
    await page.waitForURL(/sort=-units_sold/);
    assert.equal(await page.locator('th[data-col="units_sold"]').getAttribute('aria-sort'), 'descending');
    assert.deepEqual(await column('units_sold'), [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    await page.locator('#products-table thead a[data-sort="units_sold"]').click();
    await page.waitForURL(/sort=units_sold/);
    assert.equal(await page.locator('th[data-col="units_sold"]').getAttribute('aria-sort'), 'ascending');
    assert.deepEqual(await column('units_sold'), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    await page.getByLabel('Trier par').selectOption({ label: 'Produit (A → Z)' });
    await page.getByRole('button', { name: 'Afficher' }).click();
    await page.waitForURL(/sort=name/);
    const names = await page.locator('#products-table tbody th').allTextContents();
    assert.deepEqual(
      names.map((n) => n.trim()),
      [...names.map((n) => n.trim())].sort(),
    );
    assert.equal(await page.getByLabel('Trier par').inputValue(), 'name', 'the choice is kept');
  });

  test('PC1: compared, each cell shows its change; the page fits 375 px and 1,280 px without scrolling sideways', async () => {
    await fits(`/reports/products?${MARCH}`, 'products');
    await fits(`/reports/products?${MARCH}&compare=previous_period&group=variant`, 'products-compared');
    await page.setViewportSize({ width: 375, height: 800 });
    const change = page
      .locator('#products-table tbody tr')
      .first()
      .locator('td[data-col="units_sold"] .change');
    assert.match((await change.textContent()) ?? '', /^▲ \+1\s100,0\s%$/, '12 units against 1');
    assert.equal(await page.locator('svg.bars rect.previous').count(), 10, 'the comparison drawn beside');
  });
});
