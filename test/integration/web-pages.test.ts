// Issue 30 in Chromium against the real server: a French shop owner's pages. Every page fits a
// 1,280 px screen and a 390 px phone without scrolling sideways; tables, totals and key figures
// write numbers, amounts and days in French (« 1 005 », « 1 234,56 € », « 1 mars 2026 »); the
// compared Revenue table puts CA net first and fits its box; a new organization's Revenue page says
// there is nothing yet and leads to Boutiques, a period without orders says so; Boutiques tells
// stores fed by files from connected ones and lists past imports; Report settings shows statuses
// in French beside their value; the « CSV pour Excel » is exactly the bytes a French spreadsheet
// expects (BOM, `;`, decimal comma, CRLF). One server, one browser, one data set for the file.
// UX_SHOTS=<dir> also saves each page's screenshot at both widths there.
// Covers V1 (the API's CSV unchanged beside the French one), S1, PC1, G2 on the page.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createOrganization, setSubscription } from '../../src/domain/organizations.js';
import { addUserToOrganization } from '../../src/domain/users.js';
import { chromiumAvailable, launchBrowser } from '../helpers/browser.js';
import { describeOn } from '../helpers/database.js';
import { startTestService, type TestService } from '../helpers/service.js';

const EMAIL = 'lumiere@atelier.example';
const PASSWORD = 'long enough password';
const STORE = 'https://lumiere.example';
const PERIOD = 'from=2026-03-01&to=2026-03-31';
/** 1,005 small orders on 2 March (a count with a thousands separator), and a few big ones. */
const BULK = 1_000;
const ORDERS = [
  ...Array.from({ length: BULK }, (_, i) => ({
    store: STORE,
    id: `b${i}`,
    created_at: '2026-03-02T10:00:00Z',
    status: 'completed',
    items: 1,
    total: '1.00',
  })),
  {
    store: STORE,
    id: 'a1',
    created_at: '2026-03-01T09:00:00Z',
    status: 'completed',
    items: 2,
    total: '1234.56',
  },
  {
    store: STORE,
    id: 'a2',
    created_at: '2026-03-01T10:00:00Z',
    status: 'processing',
    items: 1,
    total: '60.50',
    tax_total: '10.08',
  },
  {
    store: STORE,
    id: 'a3',
    created_at: '2026-03-03T10:00:00Z',
    status: 'refunded',
    items: 1,
    total: '30.00',
    refund_total: '30.00',
  },
  { store: STORE, id: 'a4', created_at: '2026-03-03T11:00:00Z', status: 'on-hold', items: 1, total: '10.01' },
  {
    store: STORE,
    id: 'a5',
    created_at: '2026-03-04T11:00:00Z',
    status: 'cancelled',
    items: 1,
    total: '99.00',
  },
  // The previous period (29 January – 28 February): one order, so that changes are computed.
  {
    store: STORE,
    id: 'p1',
    created_at: '2026-02-10T11:00:00Z',
    status: 'completed',
    items: 1,
    total: '500.00',
  },
];
const VIEWPORTS = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
] as const;

describeOn('embedded', 'French pages that fit (issue 30) in Chromium', () => {
  let service: TestService;
  let browser: Browser;
  let signedIn: BrowserContext;
  let page: Page;
  let importPage = '';

  /**
   * The page's width against its viewport's, at both widths; a screenshot when asked. Loaded once
   * and then narrowed: the pages' layout is CSS alone (no script reads the width), which a resize
   * applies as a load at that width would, without asking the server for the page twice.
   */
  const fitsAtBothWidths = async (on: Page, url: string, name: string) => {
    await on.setViewportSize(VIEWPORTS[0]);
    await on.goto(`${service.baseUrl}${url}`);
    for (const viewport of VIEWPORTS) {
      await on.setViewportSize(viewport);
      const [scroll, inner] = await on.evaluate<[number, number]>(
        '[document.documentElement.scrollWidth, window.innerWidth]',
      );
      assert.ok(scroll <= inner, `${url} at ${viewport.width} px: ${scroll} px wide`);
      const shots = process.env.UX_SHOTS;
      if (shots) {
        fs.mkdirSync(shots, { recursive: true });
        await on.screenshot({ path: path.join(shots, `${name}-${viewport.width}.png`), fullPage: true });
        // A tall page is also seen as a phone shows it: its top, and its table's end.
        await on.screenshot({ path: path.join(shots, `${name}-${viewport.width}-top.png`) });
        const end = on.locator('tfoot, #empty-state, #import-history-section').first();
        if ((await end.count()) > 0) {
          await end.scrollIntoViewIfNeeded();
          await on.screenshot({ path: path.join(shots, `${name}-${viewport.width}-end.png`) });
        }
      }
    }
  };
  const text = async (selector: string) =>
    ((await page.locator(selector).first().textContent()) ?? '').trim();
  const squeeze = (value: string) => value.replace(/\s+/g, ' ').trim();

  before(async () => {
    assert.ok(chromiumAvailable(), 'Debian chromium is installed');
    service = await startTestService();
    const { org } = await service.addOrganization('Atelier Lumière', ORDERS);
    await addUserToOrganization(service.db, org.id, EMAIL, PASSWORD);
    const empty = await createOrganization(service.db, { name: 'Boutique Neuve' });
    await setSubscription(service.db, empty.id, 'active');
    await addUserToOrganization(service.db, empty.id, EMAIL, PASSWORD);
    browser = await launchBrowser();
    // A French shop owner's browser: its date fields read JJ/MM/AAAA.
    signedIn = await browser.newContext({ viewport: VIEWPORTS[0], locale: 'fr-FR' });
    page = await signedIn.newPage();
    await page.goto(`${service.baseUrl}/login`);
    await page.getByLabel('Adresse e-mail').fill(EMAIL);
    await page.getByLabel('Mot de passe').fill(PASSWORD);
    await page.getByRole('button', { name: 'Se connecter' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/login'));
    // The session's organization: Atelier Lumière (switched to if the other came first).
    // The switch's navigation awaited as such: waiting for the load state could return before it
    // began, and the next page.goto then be cut by its redirect (net::ERR_ABORTED, seen in CI).
    if (!(await page.content()).includes('<option value="atelier-lumiere" selected>')) {
      await Promise.all([
        page.waitForNavigation(),
        page.locator('#org-switch').selectOption('atelier-lumiere'),
      ]);
    }
    // The organization's report data is prepared on its first report (issue 28). On a loaded machine
    // (CI runs files side by side) that first page may say « Calcul en cours » (503) and reload
    // itself when the data should be ready, as a shop owner sees it: followed here, once, so that
    // the tests below read figures.
    await page.goto(`${service.baseUrl}/reports/revenue?${PERIOD}`);
    await page.locator('#revenue-table').waitFor({ timeout: 60_000 });
  });
  after(async () => {
    await browser?.close();
    await service?.cleanup();
  });

  test('Revenue: totals, rows and key figures in French; CA net first (issue 30, items 1 and 2)', async () => {
    await page.setViewportSize(VIEWPORTS[0]);
    await page.goto(`${service.baseUrl}/reports/revenue?${PERIOD}`);
    const headers = (await page.locator('#revenue-table thead th').allTextContents()).map(squeeze);
    assert.deepEqual(headers.slice(0, 3), ['Jour', 'CA net', 'Commandes']);
    // 1,000 orders at 1,00 € + 1 234,56 € + 60,50 € + 10,01 € (S1: refunded counts, cancelled not).
    const totals = (await page.locator('#revenue-totals td').allTextContents()).map(squeeze);
    assert.equal(totals[1], '1 004', 'orders with a thousands separator');
    assert.equal(totals[2], '2 335,07 €');
    assert.equal(totals[0], '2 294,99 €', 'CA net: refunds and taxes deducted');
    assert.equal(squeeze(await text('[data-metric=orders] .value')), totals[1], 'key figure = total row');
    const first = page.locator('#revenue-table tbody tr').first();
    assert.equal(squeeze((await first.locator('th').textContent()) ?? ''), '1 mars 2026');
    assert.equal(squeeze((await first.locator('td[data-col=grossSales]').textContent()) ?? ''), '1 295,06 €');
    // The table fits its box at 1,280 px: no scroll inside it either.
    const box = await page
      .locator('.table-wrap:has(#revenue-table)')
      .evaluate((wrap) => ({ scroll: wrap.scrollWidth, client: wrap.clientWidth }));
    assert.ok(box.scroll <= box.client, `table ${box.scroll} px in a ${box.client} px box`);
  });

  test('the period fields show and take days as the French write them, whatever the browser (item 2, P3)', async () => {
    await page.setViewportSize(VIEWPORTS[0]);
    await page.goto(`${service.baseUrl}/reports/revenue?${PERIOD}`);
    assert.equal(await page.locator('#from').inputValue(), '01/03/2026');
    assert.equal(await page.locator('#to').inputValue(), '31/03/2026');
    // The 1st of March typed the French way is the 1st of March, not the 3rd of January.
    await page.locator('#from').fill('1/3/2026');
    await page.locator('#to').fill('02.03.2026');
    await Promise.all([page.waitForURL(/from=1%2F3%2F2026/), page.locator('.period-form button').click()]);
    const rows = (await page.locator('#revenue-table tbody tr th').allTextContents()).map(squeeze);
    assert.deepEqual(rows, ['1 mars 2026', '2 mars 2026']);
    assert.equal(await page.locator('#to').inputValue(), '02/03/2026');
    await page.goto(`${service.baseUrl}/reports/products?from=31/02/2026&to=31/03/2026`);
    assert.match(await text('#from-error'), /Date invalide : écrivez-la jj\/mm\/aaaa/);
  });

  test('Revenue compared: CA net first, each figure over its change, fits its box (item 1, PC1)', async () => {
    await page.setViewportSize(VIEWPORTS[0]);
    await page.goto(`${service.baseUrl}/reports/revenue?${PERIOD}&compare=previous_period`);
    const headers = (await page.locator('#revenue-table thead th:visible').allTextContents()).map(squeeze);
    assert.equal(headers[1], 'CA net');
    assert.ok(headers.length <= 6, `${headers.length} columns shown at first`);
    const net = page.locator('#revenue-totals td[data-col=netRevenue]');
    assert.equal(squeeze((await net.locator('.now').textContent()) ?? ''), '2 294,99 €');
    assert.equal(squeeze((await net.locator('.change').textContent()) ?? ''), '▲ +359,0 %');
    assert.equal(squeeze((await net.locator('.previous').textContent()) ?? ''), '500,00 €');
    assert.match(
      squeeze((await page.locator('#revenue-totals th').textContent()) ?? ''),
      /^Total contre 29\/01 – 28\/02\/2026$/,
    );
    const box = await page
      .locator('.table-wrap:has(#revenue-table)')
      .evaluate((wrap) => ({ scroll: wrap.scrollWidth, client: wrap.clientWidth }));
    assert.ok(box.scroll <= box.client, `table ${box.scroll} px in a ${box.client} px box`);
    // The picker brings the other columns back.
    await page.locator('.column-picker summary').click();
    await page.getByRole('checkbox', { name: 'Taxes' }).check();
    assert.ok(await page.locator('#revenue-totals td[data-col=taxes]').isVisible());
  });

  test('the period form stays aligned when a date is refused; « Révoquer » is not the main button (item 9)', async () => {
    await page.setViewportSize(VIEWPORTS[0]);
    await page.goto(`${service.baseUrl}/reports/revenue?from=2026-03-40&to=2026-03-31`);
    assert.match(await text('#from-error'), /Date invalide/);
    const tops = await Promise.all(
      ['#from', '#to', '#granularity', '#compare', '.period-form button'].map(
        async (selector) => (await page.locator(selector).boundingBox())?.y ?? -1,
      ),
    );
    for (const top of tops)
      assert.ok(Math.abs(top - (tops[0] ?? 0)) <= 2, `fields level: ${tops.join(', ')}`);
    await page.goto(`${service.baseUrl}/settings/api-keys`);
    const revoke = page.getByRole('link', { name: 'Révoquer' }).first();
    const create = page.getByRole('link', { name: 'Créer une clé' });
    type Styles = { getComputedStyle(element: unknown): { backgroundColor: string } };
    const background = (l: typeof revoke) =>
      l.evaluate((e) => (globalThis as unknown as Styles).getComputedStyle(e).backgroundColor);
    assert.notEqual(await background(revoke), await background(create));
    assert.equal(await background(revoke), 'rgb(255, 255, 255)');
  });

  test('French CSV for Excel: BOM, `;`, decimal comma, JJ/MM/AAAA, CRLF; the API CSV unchanged (item 5, V1)', async () => {
    const period = 'from=2026-03-01&to=2026-03-03';
    const french = await page.request.get(`${service.baseUrl}/reports/revenue-excel.csv?${period}`);
    assert.equal(french.status(), 200);
    assert.match(french.headers()['content-disposition'] ?? '', /revenus-2026-03-01-2026-03-03-excel\.csv/);
    const expected =
      '\ufeffJour;Commandes;CA brut;Remboursements;Taxes;Livraison;Frais;CA net\r\n' +
      '01/03/2026;2;1295,06;0,00;10,08;0,00;0,00;1284,98\r\n' +
      '02/03/2026;1000;1000,00;0,00;0,00;0,00;0,00;1000,00\r\n' +
      '03/03/2026;2;40,01;30,00;0,00;0,00;0,00;10,01\r\n' +
      'Total;1004;2335,07;30,00;10,08;0,00;0,00;2294,99\r\n';
    assert.deepEqual(await french.body(), Buffer.from(expected, 'utf8'));
    const api = await (await page.request.get(`${service.baseUrl}/reports/revenue.csv?${period}`)).text();
    assert.equal(api.split('\r\n')[4], 'total,1004,2335.07,30.00,10.08,0.00,0.00,2294.99');
    const compared = await (
      await page.request.get(`${service.baseUrl}/reports/revenue-excel.csv?${period}&compare=previous_year`)
    ).text();
    assert.match(
      compared,
      /^\ufeffJour;Comparé à;Commandes;.*;CA net \(évolution %\)\r\n01\/03\/2026;01\/03\/2025;2;1295,06;/,
    );
    await page.goto(`${service.baseUrl}/reports/revenue?${period}`);
    assert.ok(await page.getByRole('link', { name: 'CSV pour Excel (français)' }).isVisible());
    assert.ok(await page.getByRole('link', { name: 'CSV de l’API' }).isVisible());
  });

  test('Report settings: each status in French beside its own value (item 3, S1)', async () => {
    await page.goto(`${service.baseUrl}/settings/report`);
    const labels = (await page.locator('fieldset').first().locator('label').allTextContents()).map(squeeze);
    for (const label of [
      'Annulée (cancelled)',
      'Terminée (completed)',
      'En cours (processing)',
      'En attente (on-hold)',
    ])
      assert.ok(labels.includes(label), `${label} in ${labels.join(' | ')}`);
    assert.equal(await page.getByLabel('Annulée (cancelled)').getAttribute('value'), 'cancelled');
  });

  test('an import names its file; Boutiques tells stores fed by files from connected ones, lists past imports (items 4, 9)', async () => {
    await page.setViewportSize(VIEWPORTS[0]);
    await page.goto(`${service.baseUrl}/settings/stores`);
    assert.match(
      squeeze(await text('#no-connection')),
      /1 boutique reçoit ses commandes par import de fichiers/,
    );
    assert.ok(!(await page.content()).includes('Aucune boutique connectée.'));
    assert.match(squeeze(await text('#stores tbody tr')), /lumiere\.example Import de fichiers 1 006/);
    const file = [1, 2, 3]
      .map((n) =>
        JSON.stringify({
          store: STORE,
          id: `f${n}`,
          created_at: '2026-04-0' + n + 'T10:00:00Z',
          status: 'completed',
          items: 1,
          total: '5.00',
        }),
      )
      .join('\n');
    await page
      .locator('#file')
      .setInputFiles({ name: 'avril.ndjson', mimeType: 'application/x-ndjson', buffer: Buffer.from(file) });
    await page.locator('#import-form button').click();
    await page.locator('#import-report').waitFor({ timeout: 20_000 });
    importPage = new URL(page.url()).pathname;
    assert.match(
      squeeze(await text('#import-report [role=status]')),
      /^3 commandes importées, 0 remplacée, 0 ligne refusée\.$/,
    );
    assert.match(
      squeeze(await text('#import-source')),
      /Fichier avril\.ndjson, importé depuis cette page le/,
    );
    await page.goto(`${service.baseUrl}/settings/stores`);
    assert.match(
      squeeze(
        (await page.locator('#import-history tbody tr').first().locator('th, td').allTextContents()).join(
          ' ',
        ),
      ),
      /^avril\.ndjson .* Terminé 3 0 0 Cette page$/,
    );
  });

  test('empty states: a new organization is led to Boutiques; a period without orders says so (item 4)', async () => {
    await page.goto(`${service.baseUrl}/reports/revenue?from=2020-01-01&to=2020-01-31`);
    assert.match(squeeze(await text('#empty-state')), /Aucune commande sur cette période/);
    assert.equal(await page.locator('#revenue-table').count(), 0);
    await Promise.all([page.waitForNavigation(), page.locator('#org-switch').selectOption('boutique-neuve')]);
    await page.goto(`${service.baseUrl}/reports/revenue`);
    assert.match(squeeze(await text('#empty-state')), /Aucune commande pour l’instant/);
    assert.equal(await page.locator('#revenue-table').count(), 0, 'no rows of zeros');
    assert.equal(await page.locator('#key-figures').count(), 0, 'no « 0,00 € contre 0,00 € »');
    await fitsAtBothWidths(page, '/reports/revenue', 'revenue-new-organization');
    await fitsAtBothWidths(page, '/settings/stores', 'stores-new-organization');
    assert.match(squeeze(await text('#no-store')), /Aucune boutique pour l’instant/);
    await page.setViewportSize(VIEWPORTS[0]);
    await page.goto(`${service.baseUrl}/reports/revenue`);
    await page.getByRole('link', { name: 'Aller à Boutiques' }).click();
    await page.waitForURL(/\/settings\/stores$/);
    await Promise.all([
      page.waitForNavigation(),
      page.locator('#org-switch').selectOption('atelier-lumiere'),
    ]);
  });

  test('every page fits 1,280 px and 390 px without scrolling sideways (issue 30)', async () => {
    const pages: [string, string][] = [
      [`/reports/revenue?${PERIOD}`, 'revenue'],
      [`/reports/revenue?${PERIOD}&compare=previous_period`, 'revenue-compared'],
      [
        `/reports/revenue?from=2025-01-01&to=2026-03-31&granularity=month&compare=previous_year`,
        'revenue-months',
      ],
      ['/reports/revenue?from=2026-03-40', 'revenue-bad-date'],
      ['/reports/revenue?from=2020-01-01&to=2020-01-31', 'revenue-no-order-in-period'],
      ['/settings/api-keys', 'keys'],
      ['/settings/api-keys/new', 'key-new'],
      ['/settings/report', 'report-settings'],
      ['/settings/stores', 'stores'],
      ['/settings/subscription', 'subscription'],
      [importPage || '/settings/stores', 'import'],
      ['/nowhere', 'not-found'],
    ];
    for (const [url, name] of pages) await fitsAtBothWidths(page, url, name);
    const visitor = await browser.newPage({ locale: 'fr-FR' });
    for (const [url, name] of [
      ['/login', 'login'],
      ['/signup', 'signup'],
    ] as const)
      await fitsAtBothWidths(visitor, url, name);
    await visitor.close();
  });
});
