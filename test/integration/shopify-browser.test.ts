// Issue 21 on the Boutiques page in a real browser (Debian's Chromium via playwright-core):
// « Connecter une boutique Shopify » against the stand-in Shopify, with the real sync worker and
// database. A refused token's French error by the Shopify form, then the connection with its
// webhook address and the shop listed as up to date; the access token and the app's secret never
// come back in a page or an answer, and the browser only ever talks to the service.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { connectionsOf } from '../../src/ingest/connectors/connections.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { openStoresPage } from '../helpers/connected-store.js';
import { FakeShopify } from '../helpers/fake-shopify.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { countedShopifyOrders, SHOPIFY_SYNC_ENV } from '../helpers/shopify-expectations.js';
import { PASSWORD } from '../helpers/web-client.js';

const EMAIL = 'gerant@shopify-navigateur.example';
const digits = (text: string | null) => Number((text ?? '').replace(/\D/g, ''));

describe('Boutiques page: connecting a Shopify shop in Chromium (issue 21)', () => {
  let service: TestService;
  let shop: FakeShopify;
  let browser: Browser;
  let page: Page;
  let organizationId: string;
  let requested: string[] = [];
  let bodies: Promise<string>[] = [];

  /** Neither the token nor the app's secret in the page as it is now, nor in any answer so far. */
  const noSecrets = async (step: string, typed: string[] = []) => {
    const texts = [await page.content(), ...(await Promise.all(bodies))];
    for (const text of texts)
      for (const secret of [shop.accessToken, shop.apiSecret, ...typed])
        assert.ok(!text.includes(secret), `${step}: a secret in a page`);
  };
  const submit = async (token: string) => {
    await page.getByLabel('Adresse de la boutique Shopify').fill(shop.url);
    await page.getByLabel('Jeton d’accès de l’API Admin (shpat_…)').fill(token);
    await page
      .getByLabel('Secret de l’application, qui signe ses webhooks (facultatif)')
      .fill(shop.apiSecret);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/settings/stores/connect')),
      page.getByRole('button', { name: 'Connecter la boutique Shopify' }).click(),
    ]);
    await page.waitForLoadState('load');
    return response;
  };

  before(async () => {
    assert.ok(chromiumAvailable(), 'Debian chromium is installed');
    shop = await FakeShopify.start({ seed: 41 });
    shop.addOrders(100);
    service = await startTestService(SHOPIFY_SYNC_ENV, { storeCa: shop.ca });
    const { org } = await service.addOrganization('Shopify Navigateur', []);
    organizationId = org.id;
    ({ browser, page, requested, bodies } = await openStoresPage(service, org.id, {
      email: EMAIL,
      password: PASSWORD,
    }));
  });
  after(async () => {
    await browser?.close();
    await service?.cleanup();
    await shop?.close();
  });

  test('a refused token: the French error by the Shopify form, the token field emptied, nothing saved', async () => {
    await page.getByRole('heading', { name: 'Connecter une boutique Shopify' }).waitFor();
    const wrong = `shpat_${'7'.repeat(32)}`;
    const response = await submit(wrong);
    assert.equal(response.status(), 400);
    const error = page.locator('#shopify-connect-error');
    assert.equal(await error.getAttribute('role'), 'alert');
    assert.match((await error.textContent()) ?? '', /^Jeton refusé par la boutique Shopify/);
    const tokenField = page.getByLabel('Jeton d’accès de l’API Admin (shpat_…)');
    assert.equal(await tokenField.getAttribute('aria-invalid'), 'true');
    assert.equal(await tokenField.inputValue(), '', 'the token field is empty');
    assert.equal(await page.getByLabel('Adresse de la boutique Shopify').inputValue(), shop.url);
    assert.equal(await page.locator('#connect-error').count(), 0, 'not by the WooCommerce form');
    await noSecrets('the refused token', [wrong]);
    assert.deepEqual(await connectionsOf(service.db, organizationId), []);
  });

  test('the right token: the webhook address shown, the shop listed and backfilled, no secret shown', async () => {
    const response = await submit(shop.accessToken);
    assert.equal(response.status(), 200);
    const connection = (await connectionsOf(service.db, organizationId))[0];
    assert.ok(connection);
    assert.equal(connection.platform, 'shopify');
    assert.equal(
      (await page.locator('#webhook-url').textContent())?.trim(),
      `${service.baseUrl}/webhooks/shopify/${connection.id}`,
    );
    assert.match((await page.locator('#webhook-card').textContent()) ?? '', /orders\/create/);
    assert.equal(await page.locator('#webhook-secret').count(), 0, 'no secret: Shopify’s is the app’s');
    await noSecrets('the webhook card');

    const row = page.locator(`#connections tr[data-store="${shop.url}"]`);
    await row.locator('td[data-label="État"]', { hasText: 'À jour.' }).waitFor({ timeout: 90_000 });
    assert.equal(
      digits(await row.locator('td[data-label="Commandes"]').textContent()),
      countedShopifyOrders(shop).length,
    );
    assert.match((await row.locator('td[data-label="Boutique"]').textContent()) ?? '', /Shopify/);
    await noSecrets('up to date');
  });

  test('the browser never asked another host than the service', () => {
    const origin = new URL(service.baseUrl).origin;
    assert.ok(requested.length > 0);
    for (const url of requested) assert.equal(new URL(url).origin, origin, url);
  });
});
