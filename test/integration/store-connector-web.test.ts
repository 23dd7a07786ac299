// Issue 11 on the Boutiques page (Settings → Stores): connecting a WooCommerce store in a real
// browser (Debian's Chromium via playwright-core) against the stand-in store, with the real sync
// worker and database: errors next to the fields, the one-time webhook card, the backfill's
// progress refreshed by the page's script, « Synchroniser maintenant », « Déconnecter ». The
// consumer secret never comes back in a page, and the browser only ever talks to the service.
// Then, over plain HTTP (no browser): CSRF, and hostile addresses answered by a 400 page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { addUserToOrganization } from '../../src/domain/users.js';
import { connectionsOf } from '../../src/ingest/connectors/connections.js';
import { chromiumAvailable, SCREENSHOTS } from '../helpers/browser.js';
import { openStoresPage } from '../helpers/connected-store.js';
import { engine } from '../helpers/database.js';
import { FakeWooCommerce } from '../helpers/fake-woocommerce.js';
import { startTestApp, startTestService, type TestService } from '../helpers/service.js';
import { Client, PASSWORD } from '../helpers/web-client.js';
import { eventually } from '../helpers/woocommerce-expectations.js';
import { FAST_SYNC_ENV } from '../helpers/woocommerce-expectations.js';

// A pass every 3 s once the history is read: the page's progress and « Synchroniser maintenant »
// do not wait for it, and every pass after the backfill costs CPU for nothing.
const ENV = { ...FAST_SYNC_ENV, STORE_SYNC_INTERVAL_S: '3' };
const EMAIL = 'gerante@boutique-navigateur.example';
const digits = (text: string | null) => Number((text ?? '').replace(/\D/g, ''));

/** One service and database for both suites (the second's app has its own settings). */
let service: TestService;
let store: FakeWooCommerce;

before(async () => {
  const certificate = await FakeWooCommerce.generateCertificate();
  // The store's clock an hour behind: no order was modified in the last minutes, so that the
  // passes after the backfill (one a second) read no order again (none of these tests is about
  // changes; the overlap of 2 minutes would re-read a few orders at every pass).
  store = await FakeWooCommerce.start({ certificate, now: new Date(Date.now() - 3_600_000) });
  service = await startTestService(ENV, { storeCa: store.ca });
});
after(async () => {
  await service?.cleanup();
  await store?.close();
});

describe('Boutiques page: connecting a WooCommerce store in Chromium (issue 11)', () => {
  let browser: Browser;
  let page: Page;
  let organizationId: string;
  /** Every URL the browser asked for. */
  let requested: string[] = [];
  /** The text of every answer the browser got (pages, the table's refreshes, the script). */
  let bodies: Promise<string>[] = [];
  let shot = 0;
  const screenshot = async (name: string) => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    const file = path.join(SCREENSHOTS, `stores-${engine}-${String(++shot).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    console.log(`screenshot: ${file}`);
  };
  /** Neither REST key in the page as it is now, nor in any answer received so far. */
  const noKeys = async (step: string) => {
    const texts = [await page.content(), ...(await Promise.all(bodies))];
    for (const text of texts) {
      assert.ok(!text.includes(store.consumerSecret), `${step}: the consumer secret in a page`);
      assert.ok(!text.includes(store.consumerKey), `${step}: the consumer key in a page`);
    }
  };
  const row = () => page.locator(`#connections tr[data-store="${store.url}"]`);
  const stateText = async () => ((await row().locator('td[data-label="État"]').textContent()) ?? '').trim();
  const submitConnect = async (secret: string) => {
    await page.getByLabel('Adresse de la boutique WooCommerce').fill(store.url);
    await page.getByLabel('Clé client (ck_…)').fill(store.consumerKey);
    await page.getByLabel('Secret client (cs_…)').fill(secret);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/settings/stores/connect')),
      page.getByRole('button', { name: 'Connecter', exact: true }).click(),
    ]);
    await page.waitForLoadState('load');
    return response;
  };

  before(async () => {
    assert.ok(chromiumAvailable(), 'Debian chromium is installed');
    // Five pages: the backfill's length comes from the store's delay below, not from its size.
    store.addOrders(500, 17);
    const { org } = await service.addOrganization('Boutique Navigateur', []);
    organizationId = org.id;
    ({ browser, page, requested, bodies } = await openStoresPage(
      service,
      org.id,
      { email: EMAIL, password: PASSWORD },
      (context) =>
        context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.baseUrl }),
    ));
  });
  after(async () => {
    await browser?.close();
  });

  test('wrong keys: the error next to the fields, in French; the secret is neither kept nor sent back', async () => {
    await noKeys('the empty page');
    const wrongSecret = `cs_${'9'.repeat(40)}`;
    const response = await submitConnect(wrongSecret);
    assert.equal(response.status(), 400);
    const error = page.locator('#connect-error');
    assert.equal(await error.getAttribute('role'), 'alert');
    assert.match(
      (await error.textContent()) ?? '',
      /^Clés refusées par la boutique localhost:\d+ : vérifiez la clé client \(ck_…\) et le secret client \(cs_…\)/,
    );
    const keyField = page.getByLabel('Clé client (ck_…)');
    assert.equal(await keyField.getAttribute('aria-invalid'), 'true');
    assert.equal(await keyField.getAttribute('aria-describedby'), 'connect-error');
    assert.equal(await page.getByLabel('Secret client (cs_…)').inputValue(), '', 'the secret field is empty');
    assert.equal(await page.getByLabel('Adresse de la boutique WooCommerce').inputValue(), store.url);
    const html = await response.text();
    assert.ok(!html.includes(wrongSecret), 'the typed secret is not sent back');
    assert.ok(!html.includes(store.consumerKey), 'nor the consumer key');
    assert.ok(!(await page.content()).includes(wrongSecret));
    await noKeys('the refused connection');
    await screenshot('wrong-keys');
    assert.deepEqual(await connectionsOf(service.db, organizationId), [], 'nothing saved');
  });

  test('the right keys: the webhook card once, then the backfill’s progress, refreshed without reloading', async () => {
    store.slowDown(180); // a backfill of ~10 s: the table is refreshed during it
    const response = await submitConnect(store.consumerSecret);
    assert.equal(response.status(), 200);
    const card = page.locator('#webhook-card');
    assert.match(
      (await card.locator('h2').textContent()) ?? '',
      new RegExp(`Boutique connectée : ${store.url}`),
    );
    const connection = (await connectionsOf(service.db, organizationId))[0];
    assert.ok(connection);
    assert.equal(
      (await page.locator('#webhook-url').textContent())?.trim(),
      `${service.baseUrl}/webhooks/woocommerce/${connection.id}`,
    );
    const webhookSecret = ((await page.locator('#webhook-secret').textContent()) ?? '').trim();
    assert.match(webhookSecret, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(webhookSecret, store.consumerSecret);
    const copy = card.getByRole('button', { name: 'Copier le secret' });
    await copy.click();
    await page.getByRole('button', { name: 'Copiée ✓' }).waitFor({ timeout: 5_000 });
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), webhookSecret, 'copied');
    await noKeys('the webhook card');

    // The table reads the backfill as it goes, the page's script fetching it every 3 s.
    await page.evaluate('window.stillTheSamePage = true');
    assert.match(
      await stateText(),
      /^Import de l’historique (en cours|\(reprise imminente\)) : [\d\s]+ commandes lues/,
    );
    assert.equal(await page.locator('#connections').getAttribute('data-active'), '1');
    await row()
      .locator('td[data-label="État"]', { hasText: /en cours : [1-9][\d\s]* commandes lues sur environ/ })
      .waitFor({ timeout: 30_000 });
    const during = await stateText();
    const total = store.allOrders().length;
    assert.match(
      during,
      new RegExp(`sur environ ${total.toLocaleString('fr-FR')}(, [\\d\\s]+ commandes/s)?\\.`),
    );
    const read = digits(/: ([\d\s]+) commandes lues/.exec(during)?.[1] ?? '');
    assert.ok(read > 0 && read < total, `${read} of ${total}`);
    assert.equal(await row().locator('progress').getAttribute('max'), String(total));
    await noKeys('during the backfill');
    await screenshot('backfill');

    await row().locator('td[data-label="État"]', { hasText: 'À jour.' }).waitFor({ timeout: 60_000 });
    assert.equal(await page.evaluate('window.stillTheSamePage'), true, 'reached without reloading the page');
    assert.equal(digits(await row().locator('td[data-label="Commandes"]').textContent()), total);
    assert.doesNotMatch(
      (await row().locator('td[data-label="Dernière synchronisation réussie"]').textContent()) ?? '',
      /—/,
    );
    assert.match(
      (await row().locator('td[data-label="Boutique"]').textContent()) ?? '',
      new RegExp(`secret ••••${store.consumerSecret.slice(-4)}`),
    );
    await noKeys('up to date');
    await screenshot('up-to-date');
  });

  test('« Synchroniser maintenant » finds an order deleted in the store; « Déconnecter » can remove its orders', async () => {
    store.slowDown(0);
    const deleted = store.allOrders()[250]!;
    store.deleteOrder(deleted.id);
    const total = store.allOrders().length;
    await row().getByRole('button', { name: 'Synchroniser maintenant' }).click();
    await page.waitForLoadState('load');
    assert.equal(
      ((await page.getByRole('status').textContent()) ?? '').trim(),
      `Synchronisation demandée : ${store.url}`,
    );
    await noKeys('sync asked');
    await eventually(
      'the deleted order gone from the table',
      async () => {
        await page.goto(`${service.baseUrl}/settings/stores`);
        return digits(await row().locator('td[data-label="Commandes"]').textContent());
      },
      (orders) => orders === total,
      30_000,
    );

    await row().getByLabel('supprimer aussi ses commandes').check();
    await row().getByRole('button', { name: 'Déconnecter' }).click();
    await page.waitForLoadState('load');
    assert.equal(
      ((await page.getByRole('status').textContent()) ?? '').trim(),
      // Issue 30: the count in French, the plural in words.
      `Boutique déconnectée : ${store.url} ; ${total.toLocaleString('fr-FR')}\u00a0${total > 1 ? 'commandes supprimées' : 'commande supprimée'}.`,
    );
    assert.match(
      (await page.locator('#connections').textContent()) ?? '',
      /Aucune boutique connectée par son API/,
    );
    const [left] = await service.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM orders WHERE organization_id = $1',
      [organizationId],
    );
    assert.equal(left?.n, 0);
    await noKeys('disconnected');
    await screenshot('disconnected');
  });

  test('the browser never asked another host than the service', () => {
    assert.ok(requested.length > 10);
    const elsewhere = requested.filter((url) => !url.startsWith(`${service.baseUrl}/`));
    assert.deepEqual(elsewhere, []);
  });
});

describe('Boutiques page over HTTP: CSRF and hostile addresses (issue 11)', () => {
  let app: Awaited<ReturnType<typeof startTestApp>>;
  let client: Client;
  let organizationId: string;
  const EMAIL_HTTP = 'gerant@boutique-http.example';
  const KEY = `ck_${'a1'.repeat(20)}`;
  const SECRET = `cs_${'b2'.repeat(20)}`;

  before(async () => {
    // As in production: private addresses and plain http:// refused. An app of its own (its own
    // limit of connection tries) on the same database, without a sync worker: nothing to sync here.
    app = await startTestApp(service, { STORE_ALLOW_PRIVATE: '0', STORE_SYNC_WORKERS: '0' });
    const { org } = await service.addOrganization('Boutique HTTP', []);
    organizationId = org.id;
    await addUserToOrganization(service.db, org.id, EMAIL_HTTP, PASSWORD);
    client = new Client(app.baseUrl);
    assert.equal((await client.login(EMAIL_HTTP)).status, 303);
  });
  after(async () => {
    await app?.close();
  });

  test('a form posted without its CSRF token, or with a forged one, is refused', async () => {
    const fields = { platform: 'woocommerce', address: 'https://boutique.example', consumer_key: KEY };
    for (const form of [
      { ...fields, consumer_secret: SECRET },
      { ...fields, consumer_secret: SECRET, _csrf: 'forged-token' },
    ]) {
      const response = await client.post('/settings/stores/connect', form);
      assert.equal(response.status, 403);
      const body = await response.text();
      assert.ok(!body.includes(SECRET));
    }
    for (const action of ['sync', 'disconnect'])
      assert.equal(
        (await client.post(`/settings/stores/${action}`, { address: 'https://boutique.example' })).status,
        403,
      );
    assert.deepEqual(await connectionsOf(service.db, organizationId), []);
  });

  test('hostile addresses: a clear 400 page in French, the address echoed escaped, never a 500', async () => {
    const hostile: [string, RegExp][] = [
      [
        'javascript:alert(1)',
        /^Adresse de boutique invalide : « javascript:alert\(1\) » \(URL https:\/\/ attendue\)$/,
      ],
      [
        'http://169.254.169.254',
        /^Adresse en http:\/\/ refusée : la connexion à la boutique doit être chiffrée/,
      ],
      [
        'https://169.254.169.254/latest/meta-data/',
        /^Adresse refusée : 169\.254\.169\.254 désigne une adresse privée ou interne/,
      ],
      ['https://[::ffff:127.0.0.1]:8443', /^Adresse refusée : \[::ffff:7f00:1\] désigne une adresse privée/],
      [
        `https://127.0.0.1/${'a'.repeat(5_000 - 'https://127.0.0.1/'.length)}`,
        /^Adresse de boutique invalide : « https:\/\/127\.0\.0\.1\/a{182} » \(URL https:\/\/ attendue\)$/,
      ],
      [`https://10.0.0.1/"><script>alert(1)</script>`, /^Adresse refusée : 10\.0\.0\.1/],
      [`https://boutique.example/" onfocus="alert(1)" x="`, /^Adresse de boutique invalide/],
      [`<img src=x onerror=alert(1)>`, /^Adresse de boutique invalide : « <img src=x onerror=alert\(1\)> »/],
    ];
    for (const [address, message] of hostile) {
      const token = await client.token('/settings/stores');
      const response = await client.post('/settings/stores/connect', {
        _csrf: token,
        platform: 'woocommerce',
        address,
        consumer_key: KEY,
        consumer_secret: SECRET,
      });
      const what = address.slice(0, 60);
      assert.equal(response.status, 400, what);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/, what);
      const body = await response.text();
      const error = /<p class="error" id="connect-error" role="alert">([\s\S]*?)<\/p>/.exec(body)?.[1];
      assert.ok(error, `${what}: the error next to the form`);
      const text = error
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, '&')
        .trim();
      assert.match(text, message, what);
      assert.match(body, /id="connect-address"[^>]*aria-invalid="true"/, `${what}: the address field marked`);
      // Echoed escaped in the field (cut at 2048 characters), never as markup.
      const shown = address.slice(0, 2048).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
      const escaped = shown.replace(/"/g, '&quot;').replace(/'/g, '&#39;');
      assert.ok(body.includes(`value="${escaped}"`), `${what}: echoed escaped`);
      if (/[<>"]/.test(address)) assert.ok(!body.includes(address.slice(0, 2048)), `${what}: never raw`);
      assert.ok(!body.includes('a'.repeat(2049)), `${what}: not echoed whole`);
      assert.ok(!body.includes(SECRET), `${what}: the secret not sent back`);
    }
    // A hostile key is refused next to the key fields and not echoed at all.
    const token = await client.token('/settings/stores');
    const badKey = await client.post('/settings/stores/connect', {
      _csrf: token,
      platform: 'woocommerce',
      address: 'https://boutique.example',
      consumer_key: 'ck_"><script>alert(2)</script>',
      consumer_secret: SECRET,
    });
    assert.equal(badKey.status, 400);
    const body = await badKey.text();
    assert.match(body, /Clé client invalide : elle commence par ck_/);
    assert.ok(!body.includes('alert(2)'));
    assert.match(body, /id="consumer-key"[^>]*aria-invalid="true"/);
    assert.deepEqual(await connectionsOf(service.db, organizationId), [], 'nothing saved');

    // Each try makes the server call the address typed: past the hourly tries, a 429 page, not a 500.
    let limited: Response | undefined;
    for (let i = 0; i < 25 && !limited; i++) {
      const response = await client.post('/settings/stores/connect', {
        _csrf: await client.token('/settings/stores'),
        platform: 'woocommerce',
        address: 'https://192.168.1.1',
        consumer_key: KEY,
        consumer_secret: SECRET,
      });
      if (response.status === 429) limited = response;
      else assert.equal(response.status, 400);
    }
    assert.ok(limited, 'tries are limited');
    assert.match(
      await limited.text(),
      /<p class="error" id="connect-error" role="alert">Trop d’essais de connexion : réessayez dans \d+ min\.<\/p>/,
    );
  });
});
