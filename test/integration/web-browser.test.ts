// The web application in a real browser (Debian's Chromium via playwright-core), against the
// real server and database: sign up → key → API → revoke → 401; settings → report and API
// change together; the Revenue report equals the API; CSRF and cross-organization checks.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Dialog, Page } from 'playwright-core';
import { createApiKey } from '../../src/auth/api-keys.js';
import { findOrganization } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { addUserToOrganization } from '../../src/domain/users.js';
import { chromiumAvailable, launchBrowser, SCREENSHOTS } from '../helpers/browser.js';
import { describeOn } from '../helpers/database.js';
import { startTestApp, startTestService, type TestService } from '../helpers/service.js';

const ORDERS = [
  {
    store: 'https://web.example',
    id: '1',
    created_at: '2026-03-01T10:00:00Z',
    status: 'completed',
    customer_email: 'a@x.fr',
    items: 2,
    total: '120.00',
    tax_total: '20.00',
    shipping_total: '5.00',
  },
  {
    store: 'https://web.example',
    id: '2',
    created_at: '2026-03-02T10:00:00Z',
    status: 'completed',
    items: 1,
    total: '60.50',
    tax_total: '10.08',
    fee_total: '1.50',
  },
  {
    store: 'https://web.example',
    id: '3',
    created_at: '2026-03-02T11:00:00Z',
    status: 'refunded',
    customer_email: 'b@x.fr',
    items: 1,
    total: '30.00',
    tax_total: '5.00',
    refund_total: '30.00',
    refund_tax: '5.00',
  },
  {
    store: 'https://web.example',
    id: '4',
    created_at: '2026-03-03T09:00:00Z',
    status: 'on-hold',
    items: 1,
    total: '10.01',
  },
];
const PERIOD = 'from=2026-03-01&to=2026-03-31';

describeOn('embedded', 'web application in Chromium', () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;
  let shot = 0;
  // UX_SHOTS=1 saves each step's screenshot: seconds of Chromium's CPU that no assertion needs.
  const screenshot = async (name: string) => {
    if (!process.env.UX_SHOTS) return;
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({
      path: path.join(SCREENSHOTS, `${String(++shot).padStart(2, '0')}-${name}.png`),
      fullPage: true,
    });
  };
  const api = async (key: string, query: string) => {
    const response = await fetch(`${service.baseUrl}/api/reports/tabular?${query}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: response.status, body: (await response.json()) as { rows: Record<string, number>[] } };
  };

  before(async () => {
    assert.ok(chromiumAvailable(), 'Debian chromium is installed');
    service = await startTestService();
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    await browser?.close();
    await service?.cleanup();
  });

  test('sign up, create a key, call the API with it, revoke it: the next call gets 401', async () => {
    await page.goto(`${service.baseUrl}/signup`);
    await screenshot('signup');
    await page.getByLabel('Nom de l’organisation').fill('Atelier Navigateur');
    await page.getByLabel('Adresse e-mail').fill('owner@atelier.example');
    await page.getByLabel(/Mot de passe/).fill('correct horse battery');
    await page.getByRole('button', { name: 'Créer le compte' }).click();
    // Finding 3: no session from the sign-up itself; the same neutral notice whoever signs up.
    await page.waitForURL(/\/login\?signup=1/);
    assert.match((await page.getByRole('status').textContent()) ?? '', /Connectez-vous/);
    await page.getByLabel('Adresse e-mail').fill('owner@atelier.example');
    await page.getByLabel('Mot de passe').fill('correct horse battery');
    await page.getByRole('button', { name: 'Se connecter' }).click();
    await page.waitForURL(/\/settings\/api-keys/);
    const org = await findOrganization(service.db, 'atelier-navigateur');
    await importOrderRecords(service.db, org.id, ORDERS);

    await page.getByRole('link', { name: 'Créer une clé' }).click();
    await page.getByLabel('Nom de la clé').fill('Tableur');
    await screenshot('create-key');
    await page.getByRole('button', { name: 'Confirmer' }).click();
    const key = (await page.locator('#new-key-value').textContent())?.trim() ?? '';
    assert.match(key, /^smk_[0-9A-Za-z]{38}$/);
    assert.ok(await page.getByText('elle ne sera plus jamais affichée').isVisible());
    await screenshot('key-created');
    assert.equal((await api(key, PERIOD)).status, 400, 'a 400 (no metric) proves the key was accepted');
    assert.equal((await api(key, `metrics=orders&${PERIOD}`)).status, 200);

    await page.getByRole('link', { name: 'J’ai copié la clé, fermer' }).click();
    assert.equal(await page.locator('#new-key-value').count(), 0, 'closing leaves only the prefix');
    const row = page.locator(`tr[data-prefix="${key.slice(0, 12)}"]`);
    assert.equal(await row.locator('td').first().textContent(), 'Tableur');
    await row.getByRole('link', { name: 'Révoquer' }).click();
    await screenshot('revoke-confirm');
    await row.getByRole('button', { name: 'Révoquer la clé' }).click();
    await page.waitForURL(/revoked=/);
    assert.equal(
      (await api(key, `metrics=orders&${PERIOD}`)).status,
      401,
      'K4: refused on the very next request',
    );
  });

  test('the Revenue report equals the API; a settings change moves both', async () => {
    const org = await findOrganization(service.db, 'atelier-navigateur');
    const { key } = await createApiKey(service.db, org.id, 'comparaison');
    const totalsFromPage = async () => {
      await page.goto(`${service.baseUrl}/reports/revenue?${PERIOD}`);
      const number = async (column: string) =>
        Number(
          ((await page.locator(`#revenue-totals td[data-col=${column}]`).textContent()) ?? '')
            .replace(/[^\d,-]/g, '')
            .replace(',', '.'),
        );
      return {
        orders: await number('orders'),
        gross: await number('grossSales'),
        taxes: await number('taxes'),
        shipping: await number('shipping'),
        net: await number('netRevenue'),
      };
    };
    const totalsFromApi = async () => {
      const { body } = await api(key, `metrics=orders,gross_sales,taxes,shipping,net_revenue&${PERIOD}`);
      const r = body.rows[0] ?? {};
      return {
        orders: r.orders,
        gross: r.gross_sales,
        taxes: r.taxes,
        shipping: r.shipping,
        net: r.net_revenue,
      };
    };
    const before = await totalsFromPage();
    await screenshot('revenue');
    assert.deepEqual(before, await totalsFromApi());
    // completed 120 + 60.50 and refunded 30 count, on-hold 10.01 too: net = 95 + 50.42 + 0 + 10.01
    assert.deepEqual(before, { orders: 4, gross: 220.51, taxes: 35.08, shipping: 5, net: 155.43 });

    await page.goto(`${service.baseUrl}/settings/report`);
    await page.getByLabel('on-hold').check();
    await page.getByLabel('Frais (paiement, commissions)').check();
    await screenshot('report-settings');
    await page.getByRole('button', { name: 'Enregistrer' }).click();
    await page.waitForURL(/saved=1/);
    const after = await totalsFromPage();
    assert.deepEqual(after, { orders: 3, gross: 210.5, taxes: 35.08, shipping: 5, net: 143.92 }); // − 10.01 − 1.50
    assert.deepEqual(after, await totalsFromApi());

    const csv = await (await page.request.get(`${service.baseUrl}/reports/revenue.csv?${PERIOD}`)).text();
    assert.match(csv, /^date,orders,gross_sales,refunds,taxes,shipping,fees,net_revenue\r\n/);
    assert.match(csv, /\r\ntotal,3,210\.50,30\.00,35\.08,5\.00,1\.50,143\.92\r\n$/);
  });

  test('G2: the Revenue report grouped by « Mois » shows one row per month whose sums are the totals', async () => {
    const org = await findOrganization(service.db, 'atelier-navigateur');
    const extra = (id: string, created_at: string, total: string, more: Record<string, string> = {}) => ({
      store: 'https://web.example',
      id,
      created_at,
      status: 'completed',
      items: 1,
      total,
      ...more,
    });
    await importOrderRecords(service.db, org.id, [
      extra('g1', '2026-01-20T10:00:00Z', '15.25'),
      extra('g2', '2026-04-02T10:00:00Z', '9.99', { tax_total: '1.66' }),
      extra('g3', '2026-04-11T00:00:00Z', '500.00'), // the day after the period: left out
    ]);
    await page.goto(`${service.baseUrl}/reports/revenue?from=2026-01-15&to=2026-04-10`);
    const grouping = page.getByLabel('Regroupement');
    assert.equal(await grouping.inputValue(), 'day', 'days by default');
    assert.deepEqual(
      await grouping
        .locator('option')
        .allTextContents()
        .then((t) => t.map((o) => o.trim())),
      ['Jour', 'Semaine', 'Mois', 'Trimestre', 'Année'],
    );
    await grouping.selectOption({ label: 'Mois' });
    await page.getByRole('button', { name: 'Afficher' }).click();
    await page.waitForURL(/granularity=month/);
    await screenshot('revenue-by-month');
    assert.equal(await page.getByLabel('Regroupement').inputValue(), 'month', 'the choice is kept');
    assert.equal(await page.getByLabel('Du').inputValue(), '15/01/2026', 'as the French write it');
    assert.equal((await page.locator('#revenue-table thead th').first().textContent())?.trim(), 'Mois');
    const rows = page.locator('#revenue-table tbody tr');
    const dates = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-date')));
    assert.deepEqual(dates, ['2026-01-01', '2026-02-01', '2026-03-01', '2026-04-01']);
    assert.deepEqual(await rows.locator('th').allTextContents(), [
      'janvier 2026',
      'février 2026',
      'mars 2026',
      'avril 2026',
    ]);
    // Every column of the months adds up, in cents, to the totals row; the totals are hand-worked
    // (settings of the previous test: on-hold excluded, fees deducted): March 210.50 gross and
    // 143.92 net, plus 15.25 in January and 9.99 − 1.66 tax in April.
    const cents = (text: string) => Math.round(Number(text.replace(/[^\d,-]/g, '').replace(',', '.')) * 100);
    const sums = Array.from({ length: 7 }, () => 0);
    for (let i = 0; i < dates.length; i++) {
      const cells = await rows.nth(i).locator('td').allTextContents();
      cells.forEach((cell, c) => (sums[c] = (sums[c] ?? 0) + cents(cell)));
    }
    const totals = (await page.locator('#revenue-totals td').allTextContents()).map(cents);
    assert.deepEqual(sums, totals, 'the months add up to the totals');
    // Issue 30: CA net first, then orders and gross sales.
    assert.deepEqual([totals[1], totals[2], totals[0]], [500, 23574, 16750]);
    const { key } = await createApiKey(service.db, org.id, 'mois');
    const fromApi = await api(
      key,
      'metrics=orders,gross_sales,net_revenue&dimensions=date&granularity=month&from=2026-01-15&to=2026-04-10',
    );
    assert.deepEqual(
      fromApi.body.rows.map((r) => [r.date, r.orders, r.gross_sales, r.net_revenue]),
      [
        ['2026-01-01', 1, 15.25, 15.25],
        ['2026-03-01', 3, 210.5, 143.92],
        ['2026-04-01', 1, 9.99, 8.33],
      ],
      'S3: the API’s months',
    );
    assert.match(
      (await page.getByRole('img').first().getAttribute('aria-label')) ?? '',
      /par mois, de janvier 2026 à avril 2026 \(4 mois\)/,
    );

    const link = page.getByRole('link', { name: 'CSV de l’API' });
    assert.equal(
      await link.getAttribute('href'),
      '/reports/revenue.csv?from=2026-01-15&to=2026-04-10&granularity=month',
    );
    const csv = await (await page.request.get(`${service.baseUrl}${await link.getAttribute('href')}`)).text();
    assert.deepEqual(
      csv.split('\r\n').map((line) => line.split(',').slice(0, 3).join(',')),
      [
        'date,orders,gross_sales',
        '2026-01-01,1,15.25',
        '2026-02-01,0,0.00',
        '2026-03-01,3,210.50',
        '2026-04-01,1,9.99',
        'total,5,235.74',
        '',
      ],
    );

    await page.getByLabel('Regroupement').selectOption({ label: 'Semaine' });
    await page.getByRole('button', { name: 'Afficher' }).click();
    await page.waitForURL(/granularity=week/);
    assert.equal((await page.locator('#revenue-table thead th').first().textContent())?.trim(), 'Semaine');
    // 15 January 2026 is a Thursday: the first week starts on Monday the 12th.
    assert.equal(
      await page.locator('#revenue-table tbody tr').first().getAttribute('data-date'),
      '2026-01-12',
    );
  });

  test('G2: a hostile granularity is refused next to its field with 400, never echoed; the CSV too', async () => {
    const hostile = '<script>alert(1)</script>';
    const url = `${service.baseUrl}/reports/revenue?from=2026-03-01&to=2026-03-31&granularity=${encodeURIComponent(hostile)}`;
    const response = await page.request.get(url);
    assert.equal(response.status(), 400);
    const body = await response.text();
    assert.ok(!body.includes(hostile) && !body.includes('alert(1)'), 'the value is not shown back');
    let dialogs = 0;
    const onDialog = (dialog: Dialog) => (dialogs++, void dialog.dismiss());
    page.on('dialog', onDialog);
    const shown = await page.goto(url);
    assert.equal(shown?.status(), 400);
    assert.match((await page.locator('#granularity-error').textContent()) ?? '', /Regroupement invalide/);
    assert.equal(await page.getByLabel('Regroupement').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#revenue-table').count(), 0, 'no report for a bad request');
    assert.equal(await page.getByLabel('Du').inputValue(), '01/03/2026', 'the period is kept');
    page.off('dialog', onDialog);
    assert.equal(dialogs, 0, 'no script ran');
    await screenshot('revenue-bad-granularity');
    const csv = await page.request.get(
      `${service.baseUrl}/reports/revenue.csv?granularity=${encodeURIComponent(hostile)}`,
    );
    assert.equal(csv.status(), 400);
    assert.ok(!(await csv.text()).includes('alert(1)'));
    // Percent-encoded quotes and ampersands in a valid-looking place change nothing either.
    const quoted = await page.request.get(
      `${service.baseUrl}/reports/revenue?granularity=${encodeURIComponent('month" onfocus="alert(1)')}`,
    );
    assert.equal(quoted.status(), 400);
    assert.ok(!(await quoted.text()).includes('onfocus'));
  });

  test('CSRF: a form posted without its token is refused; another organization’s key cannot be revoked', async () => {
    const response = await page.request.post(`${service.baseUrl}/settings/api-keys`, {
      form: { name: 'sans jeton' },
    });
    assert.equal(response.status(), 403);
    const other = await service.addOrganization('Autre', []);
    await page.goto(`${service.baseUrl}/settings/api-keys`);
    const token = await page.locator('input[name=_csrf]').first().inputValue();
    const attempt = await page.request.post(`${service.baseUrl}/settings/api-keys/revoke`, {
      form: { _csrf: token, prefix: other.key.slice(0, 12) },
    });
    assert.equal(attempt.status(), 404);
    assert.equal(
      (await api(other.key, 'metrics=orders')).status,
      200,
      'the other organization’s key still works',
    );
  });

  test('Stores: add a store; an invalid file is refused with its lines listed; valid lines import on request', async () => {
    await page.goto(`${service.baseUrl}/settings/stores`);
    await page.getByLabel('Adresse de la boutique', { exact: true }).fill('ftp://fichiers.example');
    await page.getByRole('button', { name: 'Ajouter', exact: true }).click();
    assert.match((await page.locator('#address-error').textContent()) ?? '', /invalide/);
    await page.getByLabel('Adresse de la boutique', { exact: true }).fill('https://nouvelle.example/');
    await page.getByRole('button', { name: 'Ajouter', exact: true }).click();
    assert.ok(await page.getByRole('cell', { name: 'https://nouvelle.example', exact: true }).isVisible());
    const lines = [
      '{"store":"https://nouvelle.example","id":"n1","created_at":"2026-03-05T10:00:00Z","status":"completed","items":1,"total":"40.00"}',
      '{"store":"https://nouvelle.example","id":"n2","created_at":"2026-02-30T10:00:00Z","status":"completed","items":1,"total":"5.00"}',
    ];
    const file = {
      name: 'commandes.ndjson',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(lines.join('\n')),
    };
    await page.getByLabel('Fichier').setInputFiles(file);
    await page.getByRole('button', { name: 'Importer', exact: true }).click();
    await page.locator('#import-report').waitFor();
    assert.match(
      (await page.locator('#import-report').textContent()) ?? '',
      /Import refusé[\s\S]*created_at/,
    );
    await screenshot('import-refused');
    const org = await findOrganization(service.db, 'atelier-navigateur');
    const counted = async () =>
      (
        await service.db.query(
          'SELECT 1 FROM orders o JOIN stores s ON s.id = o.store_id WHERE o.organization_id = $1 AND s.address = $2',
          [org.id, 'https://nouvelle.example'],
        )
      ).length;
    assert.equal(await counted(), 0, 'I1: nothing written');
    await page.goto(`${service.baseUrl}/settings/stores`);
    await page.getByLabel('Fichier').setInputFiles(file);
    await page.getByLabel('Importer les lignes valides et lister les autres').check();
    await page.getByRole('button', { name: 'Importer', exact: true }).click();
    await page.locator('#import-report').waitFor();
    assert.match(
      (await page.locator('#import-report').textContent()) ?? '',
      /1\scommande importée,\s+0\sremplacée,\s+1\sligne refusée/,
    );
    assert.equal(await counted(), 1);
  });

  test('a person in two organizations switches between them; each shows its own keys', async () => {
    const second = await service.addOrganization('Seconde Maison', []);
    await addUserToOrganization(service.db, second.org.id, 'owner@atelier.example', 'ignored-existing-user');
    await page.goto(`${service.baseUrl}/settings/api-keys`);
    assert.ok(await page.getByRole('cell', { name: 'Tableur' }).isVisible());
    // The form posts, then the browser follows the 303 back to this page: wait for that page to
    // load before reading it (a goto meanwhile could be interrupted by the redirect's navigation).
    const switched = page.waitForResponse((r) => r.url().endsWith('/switch-organization'));
    const reloaded = page.waitForEvent('load');
    await page.getByLabel('Organisation').selectOption('seconde-maison');
    assert.equal((await switched).status(), 303);
    await reloaded;
    assert.equal(new URL(page.url()).pathname, '/settings/api-keys', 'back to the page the form was on');
    assert.ok(
      await page.getByRole('cell', { name: 'Seconde Maison tests' }).isVisible(),
      'the other organization’s keys',
    );
    assert.equal(await page.getByRole('cell', { name: 'Tableur' }).count(), 0);
    const back = page.waitForResponse((r) => r.url().endsWith('/switch-organization'));
    const returned = page.waitForEvent('load');
    await page.getByLabel('Organisation').selectOption('atelier-navigateur');
    assert.equal((await back).status(), 303);
    await returned;
    assert.ok(
      await page.getByRole('cell', { name: 'Tableur' }).isVisible(),
      'the first organization’s keys again',
    );
  });

  test('sign-up errors are shown next to the field at fault', async () => {
    const context = await browser.newContext();
    const other = await context.newPage();
    await other.goto(`${service.baseUrl}/signup`);
    await other.getByLabel('Nom de l’organisation').fill('Doublon');
    await other.getByLabel('Adresse e-mail').fill('owner@atelier');
    await other.getByLabel(/Mot de passe/).fill('court');
    await other.getByRole('button', { name: 'Créer le compte' }).click();
    assert.match((await other.locator('#email-error').textContent()) ?? '', /invalide/);
    assert.match((await other.locator('#password-error').textContent()) ?? '', /caractères/);
    assert.equal(await other.getByLabel('Adresse e-mail').getAttribute('aria-invalid'), 'true');
    assert.equal(
      await other.getByLabel('Nom de l’organisation').inputValue(),
      'Doublon',
      'what was typed is kept',
    );
    await context.close();
  });

  test('a wrong password is refused with a message; repeated failures are rate-limited', async () => {
    const context = await browser.newContext();
    const other = await context.newPage();
    const inPage = async (password: string) => {
      await other.goto(`${service.baseUrl}/login`);
      await other.getByLabel('Adresse e-mail').fill('owner@atelier.example');
      await other.getByLabel('Mot de passe').fill(password);
      const [response] = await Promise.all([
        other.waitForResponse((r) => r.url().endsWith('/login') && r.request().method() === 'POST'),
        other.getByRole('button', { name: 'Se connecter' }).click(),
      ]);
      return response.status();
    };
    assert.equal(await inPage('wrong-0'), 401);
    assert.match((await other.getByRole('alert').textContent()) ?? '', /incorrect/);
    // The next nine as the form posts them (its token, the context's cookies), without drawing
    // nine pages: the limit is the server's, the page only shows its answer.
    const token = await other.locator('input[name=_csrf]').first().inputValue();
    for (let i = 1; i < 10; i++) {
      const response = await other.request.post(`${service.baseUrl}/login`, {
        form: { _csrf: token, email: 'owner@atelier.example', password: `wrong-${i}`, next: '' },
        headers: { origin: service.baseUrl },
        maxRedirects: 0,
      });
      assert.equal(response.status(), 401, `attempt ${i + 1}`);
    }
    assert.equal(await inPage('wrong-10'), 429);
    assert.match((await other.getByRole('alert').textContent()) ?? '', /Trop de tentatives/);
    await context.close();
  });

  test('parallel wrong passwords from one address get no more than the limit of checks', async () => {
    // Its own app, for its own in-memory login limit, on the suite's database.
    const fresh = await startTestApp(service, {});
    try {
      const form = await fresh.app.inject({ url: '/login' });
      const token = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
      const cookie = String(form.headers['set-cookie']).split(';')[0] ?? '';
      const statuses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          fresh.app
            .inject({
              method: 'POST',
              url: '/login',
              headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
              payload: new URLSearchParams({
                _csrf: token,
                email: 'nobody@x.example',
                password: `guess-${i}`,
              }).toString(),
            })
            .then((r) => r.statusCode),
        ),
      );
      assert.deepEqual(statuses.sort(), [...Array(10).fill(401), ...Array(10).fill(429)]);
    } finally {
      await fresh.close();
    }
  });

  test('every page reads on a phone-sized screen; logout ends the session', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, url] of [
      ['phone-revenue', '/reports/revenue'],
      ['phone-keys', '/settings/api-keys'],
      ['phone-settings', '/settings/report'],
      ['phone-subscription', '/settings/subscription'],
      ['phone-stores', '/settings/stores'],
    ]) {
      await page.goto(`${service.baseUrl}${url}`);
      assert.equal(await page.locator('h1').count(), 1);
      const overflow = (await page.evaluate(
        'document.documentElement.scrollWidth - window.innerWidth',
      )) as number;
      assert.ok(overflow <= 1, `${url} overflows by ${overflow}px`);
      await screenshot(name ?? 'page');
    }
    await page.getByRole('button', { name: 'Se déconnecter' }).click();
    await page.waitForURL(/\/login/);
    await page.goto(`${service.baseUrl}/settings/api-keys`);
    assert.match(page.url(), /\/login\?next=/);
    await screenshot('login');
  });
});
