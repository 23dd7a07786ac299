// Issue 21 on the Boutiques page: « Connecter une boutique Shopify » over HTTP with a signed-in
// session (CSRF token and all), against the stand-in Shopify: a refused token shown next to the
// Shopify form in French and never sent back, then the connection with the webhook address (and
// no secret: Shopify's is the app's own), the store listed as Shopify while its history imports.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addUserToOrganization } from '../../src/domain/users.js';
import { connectionsOf } from '../../src/ingest/connectors/connections.js';
import { FakeShopify } from '../helpers/fake-shopify.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { countedShopifyOrders } from '../helpers/shopify-expectations.js';
import { Client, PASSWORD } from '../helpers/web-client.js';
import { eventually, FAST_SYNC_ENV } from '../helpers/woocommerce-expectations.js';

const EMAIL = 'gerante@boutique-shopify.example';

describe('Boutiques page: connecting a Shopify shop (issue 21)', () => {
  let service: TestService;
  let shop: FakeShopify;
  let client: Client;
  let organizationId: string;

  before(async () => {
    shop = await FakeShopify.start({ seed: 31 });
    shop.addOrders(200);
    // No voided or expired order: the Report settings page must offer them all the same.
    for (const order of shop.allOrders())
      if (['VOIDED', 'EXPIRED'].includes(order.financialStatus ?? '')) order.financialStatus = 'PAID';
    service = await startTestService(FAST_SYNC_ENV, { storeCa: shop.ca });
    const { org } = await service.addOrganization('Boutique Shopify Web', []);
    organizationId = org.id;
    await addUserToOrganization(service.db, org.id, EMAIL, PASSWORD);
    client = new Client(service.baseUrl);
    assert.equal((await client.login(EMAIL)).status, 303);
  });
  after(async () => {
    await service?.cleanup();
    await shop?.close();
  });

  const connect = async (fields: Record<string, string>) =>
    client.post('/settings/stores/connect', {
      _csrf: await client.token('/settings/stores'),
      platform: 'shopify',
      address: shop.url,
      ...fields,
    });

  const offered = async () => {
    const page = await (await client.get('/settings/report')).text();
    return [...page.matchAll(/name="excluded" value="([^"]+)"/g)].map((m) => m[1]);
  };

  test('the page offers it; a refused token: the error by the Shopify form, the token not sent back', async () => {
    const page = await (await client.get('/settings/stores')).text();
    assert.match(page, /<h2>Connecter une boutique Shopify<\/h2>/);
    assert.ok(!(await offered()).includes('voided'), 'no Shopify status before a Shopify store');
    const wrong = `shpat_${'5'.repeat(32)}`;
    const response = await connect({ access_token: wrong });
    assert.equal(response.status, 400);
    const body = await response.text();
    assert.match(body, /id="shopify-connect-error" role="alert">Jeton refusé par la boutique Shopify/);
    assert.match(body, /id="shopify-access-token"[^>]*aria-invalid="true"/);
    assert.ok(!body.includes(wrong), 'the typed token is not sent back');
    assert.ok(!body.includes('id="connect-error"'), 'not shown by the WooCommerce form');
    assert.deepEqual(await connectionsOf(service.db, organizationId), []);
  });

  test('the right token: the webhook address shown, no secret; the shop listed as Shopify and backfilled', async () => {
    const response = await connect({ access_token: shop.accessToken, webhook_secret: shop.apiSecret });
    assert.equal(response.status, 200);
    const body = await response.text();
    assert.match(
      body,
      /<code class="key" id="webhook-url">http:\/\/127\.0\.0\.1:\d+\/webhooks\/shopify\/[0-9a-f-]{36}<\/code>/,
    );
    assert.match(body, /orders\/create.*orders\/updated.*orders\/delete/s);
    for (const secret of [shop.accessToken, shop.apiSecret]) assert.ok(!body.includes(secret));
    await eventually(
      'backfilled',
      () => connectionsOf(service.db, organizationId),
      (c) => c[0]?.phase === 'incremental' && c[0].orders === countedShopifyOrders(shop).length,
    );
    const page = await (await client.get('/settings/stores')).text();
    assert.match(page, /Shopify · secret ••••/);
    // Report settings (S1): Shopify's unpaid statuses can be excluded.
    const statuses = await offered();
    for (const status of ['voided', 'expired', 'cancelled', 'pending'])
      assert.ok(statuses.includes(status), status);
    for (const secret of [shop.accessToken, shop.apiSecret]) assert.ok(!page.includes(secret));
  });
});
