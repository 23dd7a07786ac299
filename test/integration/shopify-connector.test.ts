// Issue 21: a Shopify shop connected through its Admin GraphQL API, against the stand-in shop
// (test/helpers/fake-shopify.ts: graphql-js over Shopify's types, cost and throttling), with the
// real sync worker, database and HTTP. The figures after a sync are compared with those of
// importing the same orders from a file (S1–S3, T1 through the API's answers).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app.js';
import { connectStore, syncStoreNow } from '../../src/domain/store-connections.js';
import { connectionsOf } from '../../src/ingest/connectors/connections.js';
import { storeSyncSetup } from '../../src/ingest/connectors/registry.js';
import { BULK_ORDERS } from '../../src/ingest/connectors/shopify/bulk.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { connectionState } from '../../src/web/store-connection-views.js';
import { assertNoSecretInDatabase, secretForms } from '../helpers/connected-store.js';
import { FakeShopify } from '../helpers/fake-shopify.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  assertSameProductFigures,
  countedShopifyOrders,
  expectedShopifyLines,
  expectedShopifyOrderLines,
  paced,
  SHOPIFY_SYNC_ENV,
} from '../helpers/shopify-expectations.js';
import { answers, assertSameAnswers, eventually } from '../helpers/woocommerce-expectations.js';

describe('Shopify connector (issue 21)', () => {
  let service: TestService;
  /**
   * A second service on a database of its own, pinned to SHOPIFY_API_VERSION=2025-10 and syncing a
   * store only when asked (a webhook, a backfill): the legacy version's test, and the webhooks'
   * (no timed pass that would find their orders first). One for both: a database costs seconds,
   * and started by the first of them, near the end: an idle service still looks for due stores.
   */
  let legacyStarted: Promise<TestService> | undefined;
  const legacyService = () =>
    (legacyStarted ??= startTestService(
      { ...SHOPIFY_SYNC_ENV, SHOPIFY_API_VERSION: '2025-10', STORE_SYNC_INTERVAL_S: '3600' },
      { storeCa: certificate.cert },
    ));
  let certificate: { key: string; cert: string };
  const logLines: string[] = [];
  const startShop = (options: Parameters<typeof FakeShopify.start>[0] = {}) =>
    FakeShopify.start({ certificate, ...options });

  before(async () => {
    certificate = await FakeShopify.generateCertificate();
    service = await startTestService(SHOPIFY_SYNC_ENV, {
      storeCa: certificate.cert,
      logger: { write: (line: string) => logLines.push(line) },
    });
  });
  after(async () => {
    await Promise.all([service?.cleanup(), legacyStarted?.then((legacy) => legacy.cleanup())]);
  });

  const setup = (on: TestService = service) => storeSyncSetup(on.config, certificate.cert);
  const connection = async (organizationId: string) => (await connectionsOf(service.db, organizationId))[0];
  const connectWithToken = (organizationId: string, shop: FakeShopify, webhookSecret?: string) =>
    connectStore(service.db, setup(), {
      organizationId,
      platform: 'shopify',
      address: shop.url,
      consumerKey: '',
      consumerSecret: shop.accessToken,
      ...(webhookSecret === undefined ? {} : { webhookSecret }),
    });
  /** A Dev Dashboard app: its client id and secret, exchanged for a token (client-credentials grant). */
  const connectWithClient = (organizationId: string, shop: FakeShopify) =>
    connectStore(service.db, setup(), {
      organizationId,
      platform: 'shopify',
      address: shop.url,
      consumerKey: shop.clientId,
      consumerSecret: shop.clientSecret,
    });
  const syncedWith = (organizationId: string, shop: FakeShopify) =>
    eventually(
      'the shop synced',
      paced(() => connection(organizationId)),
      (c) =>
        c !== undefined &&
        c.phase === 'incremental' &&
        !c.running &&
        c.orders === countedShopifyOrders(shop).length,
      120_000,
    );

  /** The bulk file read once: no slice twice, every counted order imported, none written twice. */
  const assertReadOnce = async (organizationId: string, shop: FakeShopify, twice: string) => {
    const ranges = shop.bulkDownloads.map((d) => d.range ?? 'bytes=0-');
    assert.equal(new Set(ranges).size, ranges.length, `no slice read twice: ${ranges.join(' ')}`);
    const [jobs] = await service.db.query<{ imported: string; updated: string }>(
      `SELECT sum(imported) AS imported, sum(updated) AS updated FROM import_jobs WHERE organization_id = $1 AND origin = 'connector'`,
      [organizationId],
    );
    assert.equal(Number(jobs!.imported), countedShopifyOrders(shop).length);
    assert.equal(Number(jobs!.updated), 0, twice);
  };

  /** `store sync` in this process, tried again while the server's worker holds the store. */
  async function syncNow(organizationId: string, shop: FakeShopify) {
    for (let tries = 0; ; tries++) {
      const sync = await syncStoreNow(service.db, setup(), organizationId, shop.url, () => undefined);
      if (sync.ran || tries >= 100) return sync;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** An organization's order lines (section 15), in order, without its own ids. */
  const linesOf = (organizationId: string, db = service.db) =>
    db.query<Record<string, unknown>>(
      `SELECT external_id, line_id, position, product_id, variant_id, sku, product_name, variant_name,
              categories, quantity, subtotal::text, discount::text, refunded_quantity, refunded_amount::text
       FROM order_lines WHERE organization_id = $1 ORDER BY external_id, position`,
      [organizationId],
    );

  /** An organization that imported, from a file, what the connector should have made of the shop. */
  async function importedTwin(name: string, shop: FakeShopify) {
    const twin = await service.addOrganization(name, []);
    const result = await importOrderRecords(service.db, twin.org.id, expectedShopifyLines(shop));
    assert.equal(result.refused, false, JSON.stringify(result.errors.slice(0, 3)));
    return twin;
  }

  test('connecting: wrong address, refused token, missing scopes, another currency: French errors, nothing saved', async () => {
    const shop = await startShop();
    const usd = await startShop({ currency: 'USD' });
    const noOrders = await startShop({ scopes: ['read_products'] });
    const recent = await startShop({ scopes: ['read_orders'] });
    try {
      const { org } = await service.addOrganization('Refus Shopify', []);
      const attempt = (shopTo: FakeShopify, changes: Record<string, string> = {}) =>
        connectStore(service.db, setup(), {
          organizationId: org.id,
          platform: 'shopify',
          address: shopTo.url,
          consumerKey: '',
          consumerSecret: shopTo.accessToken,
          ...changes,
        }).then(
          () => assert.fail('connected'),
          (error: { message: string; body: { field?: string } }) => error,
        );
      const wrongToken = await attempt(shop, { consumerSecret: `shpat_${'0'.repeat(32)}` });
      assert.equal(wrongToken.body.field, 'credentials');
      assert.match(wrongToken.message, /Jeton refusé.*401/);
      const wrongAddress = await attempt(shop, { address: `${shop.url}/pas-shopify` });
      assert.equal(wrongAddress.body.field, 'address');
      assert.match(wrongAddress.message, /Aucune API Admin Shopify/);
      assert.match((await attempt(shop, { consumerSecret: 'court' })).message, /Jeton d’accès invalide/);
      const denied = await attempt(noOrders);
      assert.equal(denied.body.field, 'credentials');
      assert.match(denied.message, /read_orders.*read_all_orders/);
      assert.match((await attempt(recent)).message, /read_all_orders.*60 derniers jours/);
      const currency = await attempt(usd);
      assert.match(currency.message, /en USD, l’organisation en EUR.*jamais convertis/);
      const http = await attempt(shop, { address: shop.url.replace('https:', 'http:') });
      assert.ok(http.message.length > 0);
      assert.equal((await connectionsOf(service.db, org.id)).length, 0);
      // The token went in its header only, never in an address.
      for (const request of shop.requests) assert.ok(!request.path.includes(shop.accessToken));
    } finally {
      await Promise.all([shop, usd, noOrders, recent].map((s) => s.close()));
    }
  });

  test('backfill of a shop with refunds, cancellations and test orders, with two more instances on the same database (one bulk operation, each slice of its file read once, nothing written twice), then changes and deletions: the figures of a file import', async () => {
    const shop = await startShop({ seed: 11 });
    // Two more instances on the service's database, racing its own for the store while the
    // history is read (one backfill serves both points: the figures, and the lease between instances).
    const instances = await Promise.all(
      [0, 1].map(() =>
        buildApp(service.config, { db: service.db, logger: false, storeCa: certificate.cert }),
      ),
    );
    let instancesClosed = false;
    const closeInstances = async () => {
      if (!instancesClosed) await Promise.all(instances.map((app) => app.close()));
      instancesClosed = true;
    };
    try {
      await Promise.all(instances.map((app) => app.ready()));
      // 560 orders and more: three slices of the bulk file (250 orders each), each read once
      // whichever instance holds the store (a pass reads up to 50 slices: more would add passes
      // of the same instance, not races).
      shop.addOrders(560);
      shop.bulkDurationMs = 1_500;
      shop.slowDown(5);
      // An order with more line items than a page asks for, and one with a refund of its shipping.
      shop.addOrder({
        lines: Array.from({ length: 60 }, () => ({ quantity: 2, unitCents: 100, taxCents: 20 })),
      });
      const refunded = shop.addOrder({ taxesIncluded: true, shipping: [{ priceCents: 600, taxCents: 100 }] });
      shop.addRefund(refunded.id, { full: true });
      // Issue 27: an order without line items (an app's order of shipping alone).
      shop.addOrder({ lines: [] });
      assert.ok(shop.allOrders().some((o) => o.test));
      // The stand-in's lines hold what section 15 must carry: a variant, a discount and a partial
      // refund in a shop whose prices include taxes, products without type, custom lines.
      const sold = countedShopifyOrders(shop).flatMap((o) =>
        expectedShopifyOrderLines(o).map((l) => ({ o, l })),
      );
      assert.ok(
        sold.some(
          ({ o, l }) =>
            o.taxesIncluded && l.variant_id && Number(l.discount) > 0 && Number(l.refunded_amount) > 0,
        ),
      );
      assert.ok(
        sold.some(({ l }) => !l.product_id) &&
          sold.some(({ l }) => l.product_id && (l.categories as string[]).length === 0),
      );
      const { org, key } = await service.addOrganization('Shopify', []);
      const connected = await connectWithToken(org.id, shop);
      assert.equal(connected.webhookSecret, undefined, 'nothing shown for Shopify: its secret is the app’s');
      // Which instance holds the store, sampled while the history is read.
      const holders = new Set<string>();
      const sampling = setInterval(() => {
        void service.db
          .query<{ owner: string | null }>(
            `SELECT lease_owner AS owner FROM store_connections WHERE organization_id = $1 AND lease_until > now()`,
            [org.id],
          )
          .then(
            (rows) => rows[0]?.owner && holders.add(rows[0].owner),
            () => undefined,
          );
      }, 200); // a few samples a second, not every connection of the pool
      try {
        await syncedWith(org.id, shop);
      } finally {
        clearInterval(sampling);
      }
      await closeInstances();
      shop.slowDown(0);
      assert.ok(holders.size >= 1);
      const runs = shop.requests.filter((r) => r.body.includes('bulkOperationRunQuery'));
      assert.equal(runs.length, 1, 'one bulk operation, started by one instance');
      assert.ok(
        !shop.requests.some((r) => r.body.includes('SalesMetricsOrders(') && r.body.includes('"ID"')),
        'no instance fell back to the page walk (a second operation refused)',
      );
      assert.ok(shop.bulkDownloads.length >= 3, 'the history read from a bulk operation’s file, in slices');
      await assertReadOnce(org.id, shop, 'no order written twice');
      const twin = await importedTwin('Shopify jumeau', shop);
      assertSameAnswers(await answers(service, key), await answers(service, twin.key));
      // Issue 27 (L1–L5): every line exactly, and product net sales as the shop's own figures.
      assert.deepEqual(await linesOf(org.id), await linesOf(twin.org.id));
      await assertSameProductFigures(service, key, twin.key, shop);
      // Every query stayed under Shopify's single-query maximum.
      assert.ok(shop.costs.length > 0);
      assert.ok(
        shop.costs.every((c) => c.requested <= 1000),
        JSON.stringify(shop.costs.slice(0, 3)),
      );

      // Later: a new order, a refund, a cancellation, a deleted order, an order turned into a test.
      const [a, b, c] = countedShopifyOrders(shop).slice(10, 13);
      shop.addOrder({ email: 'nouveau@example.com' });
      shop.addRefund(a!.id, { full: false });
      shop.cancelOrder(b!.id);
      shop.deleteOrder(c!.id);
      const sync = await syncNow(org.id, shop);
      assert.equal(sync.error, undefined);
      assert.ok(sync.ran);
      const later = await importedTwin('Shopify jumeau 2', shop);
      assertSameAnswers(await answers(service, key), await answers(service, later.key));
      assert.deepEqual(await linesOf(org.id), await linesOf(later.org.id));
      await assertSameProductFigures(service, key, later.key, shop);
      assert.equal((await connection(org.id))!.orders, countedShopifyOrders(shop).length);
    } finally {
      await closeInstances();
      await shop.close();
    }
  });

  test('orders with more refunds and taxed shipping lines than a page asks for: refund_tax, refund_shipping and shipping_total exact (issue 21 item 4; S1–S3)', async () => {
    const shop = await startShop({ seed: 14 });
    try {
      shop.addOrders(20);
      // Read by the bulk backfill (the file has every shipping line; refunds by the detail query).
      shop.addOrderWithManyParts({ refunds: 8, shippingLines: 7 });
      shop.addOrderWithManyParts({ refunds: 6, shippingLines: 12 });
      const { org, key } = await service.addOrganization('Shopify parts', []);
      await connectWithToken(org.id, shop);
      await syncedWith(org.id, shop);
      const twin = await importedTwin('Shopify parts jumeau', shop);
      assertSameAnswers(await answers(service, key), await answers(service, twin.key));
      // Read by an incremental pass (pages of orders, then the detail and its further pages).
      shop.addOrderWithManyParts({ refunds: 7, shippingLines: 9 });
      shop.addOrderWithManyParts({ refunds: 0, shippingLines: 8 });
      const sync = await syncNow(org.id, shop);
      assert.equal(sync.error, undefined);
      const later = await importedTwin('Shopify parts jumeau 2', shop);
      assertSameAnswers(await answers(service, key), await answers(service, later.key));
      assert.ok(
        shop.costs.every((c) => c.requested <= 1000),
        'every query under the single-query maximum',
      );
    } finally {
      await shop.close();
    }
  });

  test('a bulk operation gathering the history: its objects so far and their rate on the Boutiques page (issue 21 item 2)', async () => {
    const shop = await startShop({ seed: 15 });
    // Long enough for a few looks at it (one every 200 ms, SHOPIFY_SYNC_ENV) before its file is read.
    shop.bulkDurationMs = 2_500;
    try {
      shop.addOrders(100);
      const { org } = await service.addOrganization('Shopify progression', []);
      await connectWithToken(org.id, shop);
      const gathering = await eventually(
        'the bulk operation’s objects',
        paced(() => connection(org.id)),
        (c) => (c?.exportObjects ?? 0) > 0 && c?.runOrders === 0,
        30_000,
      );
      assert.ok((gathering!.backfillTotal ?? 0) > 0, 'the shop’s order count as the estimate');
      assert.match(
        connectionState(gathering!, Date.now()).text,
        /^Import de l’historique (en cours|\(reprise imminente\)) : export de la boutique, [1-9][\d\s]* objets rassemblés( \([\d\s]+ objets\/s\))? ; 0 commandes lues sur environ/,
      );
      await syncedWith(org.id, shop);
    } finally {
      await shop.close();
    }
  });

  test('client-credentials grant: the token is obtained, renewed when refused, and never stored or sent in an address', async () => {
    const shop = await startShop({ seed: 12 });
    try {
      shop.addOrders(60);
      const { org } = await service.addOrganization('Shopify client', []);
      await connectWithClient(org.id, shop);
      await syncedWith(org.id, shop);
      assert.ok(shop.grants >= 1);
      const grants = shop.grants;
      shop.expireTokens();
      shop.addOrder();
      const sync = await syncNow(org.id, shop);
      assert.equal(sync.error, undefined);
      assert.equal(shop.grants, grants + 1, 'a refused token is renewed once');
      assert.equal((await connection(org.id))!.orders, countedShopifyOrders(shop).length);
      const [row] = await service.db.query<{ credentials: Buffer }>(
        'SELECT credentials FROM store_connections WHERE organization_id = $1',
        [org.id],
      );
      assert.ok(!row!.credentials.toString('latin1').includes(shop.clientSecret), 'sealed, not in clear');
      for (const r of shop.requests)
        assert.ok(!r.path.includes(shop.clientSecret) && !r.path.includes('shpat_'));
      for (const line of logLines) assert.ok(!line.includes(shop.clientSecret), 'no secret in the log');
    } finally {
      await shop.close();
    }
  });

  test('a granted token that expires in 2 s: renewed before it expires, never refused (401), and the store keeps syncing', async () => {
    // A token the shop refuses only once it has expired; each answer takes 600 ms (slow shop).
    const shop = await startShop({ seed: 18, tokenLifetimeS: 2 });
    try {
      shop.addOrders(60);
      shop.bulkDurationMs = 1_000;
      shop.slowDown(600);
      const { org, key } = await service.addOrganization('Shopify jeton court', []);
      await connectWithClient(org.id, shop);
      await syncedWith(org.id, shop);
      shop.addOrder();
      await syncedWith(org.id, shop);
      // More incremental passes, until the token was renewed as it went (not a fixed wait).
      const grants = await eventually(
        'renewed as it went',
        async () => shop.grants,
        (n) => n >= 4,
        60_000,
      );
      assert.ok(grants >= 4, `renewed as it went: ${grants} grants`);
      assert.equal(shop.unauthorized, 0, 'no request carried an expired token');
      // Neither the client secret nor any token granted in the log, the database, or an address.
      const secrets = [shop.clientSecret, ...shop.issued];
      const log = logLines.join('\n');
      for (const form of secretForms(secrets)) assert.ok(!log.includes(form), 'a secret in the log');
      await assertNoSecretInDatabase(service.db, secrets);
      for (const r of shop.requests) for (const s of secrets) assert.ok(!r.path.includes(s));
      assert.ok((await connection(org.id))!.orders >= countedShopifyOrders(shop).length);
      const twin = await importedTwin('Shopify jeton court jumeau', shop);
      assertSameAnswers(await answers(service, key), await answers(service, twin.key));
    } finally {
      await shop.close();
    }
  });

  test('a bulk operation refused (five other bulk queries of this app running, the most API 2026-10 allows): the history is walked page by page, the same figures', async () => {
    const shop = await startShop({ seed: 15 });
    try {
      shop.addOrders(100); // a dozen pages of 9 orders
      shop.bulkDurationMs = 60_000;
      // Other bulk queries of the same app (not this connector's) hold the five places.
      for (let n = 0; n < 5; n++)
        assert.ok(shop.runBulkQuery(`{ orders(query: "n${n}") { edges { node { id } } } }`));
      const { org, key } = await service.addOrganization('Shopify sans bulk', []);
      await connectWithToken(org.id, shop);
      await syncedWith(org.id, shop);
      assert.equal(shop.bulkRunQueries, 6, 'ours asked for once, refused OPERATION_IN_PROGRESS');
      assert.equal(shop.bulkRuns, 5, 'the others left alone');
      assert.equal(shop.bulkDownloads.length, 0);
      const twin = await importedTwin('Shopify sans bulk jumeau', shop);
      assertSameAnswers(await answers(service, key), await answers(service, twin.key));
    } finally {
      await shop.close();
    }
  });

  test('API 2026-10 (several bulk queries at once): this connector’s own bulk query already running (a server killed before saving its cursor) is found by bulkOperations and adopted, none started', async () => {
    const shop = await startShop({ seed: 17 });
    try {
      shop.addOrders(300); // two slices of its file
      shop.bulkDurationMs = 1_500;
      assert.ok(shop.runBulkQuery(BULK_ORDERS), 'the operation a killed server had started');
      const { org, key } = await service.addOrganization('Shopify bulk repris', []);
      await connectWithToken(org.id, shop);
      await syncedWith(org.id, shop);
      assert.ok(shop.requests.every((r) => r.path.startsWith('/bulk/') || r.path.includes('/2026-10/')));
      assert.equal(shop.bulkRuns, 1, 'no second operation');
      assert.equal(
        shop.bulkRunQueries,
        1,
        'no bulkOperationRunQuery of ours (the one counted: the killed server’s)',
      );
      assert.ok(
        shop.requests.some((r) => r.body.includes('bulkOperations(')),
        'looked up by bulkOperations',
      );
      assert.ok(shop.bulkDownloads.length >= 2, 'its file read, in slices');
      assert.ok(
        !shop.requests.some((r) => r.body.includes('SalesMetricsOrders(') && r.body.includes('"ID"')),
        'no page walk',
      );
      const twin = await importedTwin('Shopify bulk repris jumeau', shop);
      assertSameAnswers(await answers(service, key), await answers(service, twin.key));
    } finally {
      await shop.close();
    }
  });

  test('API 2026-10: a bulkOperationRunQuery answered after the client’s timeout (the operation started all the same): adopted, not asked again, one operation, nothing imported twice', async () => {
    const shop = await startShop({ seed: 19 });
    try {
      shop.addOrders(300); // two slices of its file
      shop.bulkDurationMs = 1_000;
      // STORE_HTTP_TIMEOUT_MS is 3 s in these tests: the first answer arrives after 4.
      shop.answerBulkRunLate(1, 4_000);
      const { org, key } = await service.addOrganization('Shopify bulk sans réponse', []);
      await connectWithToken(org.id, shop);
      await syncedWith(org.id, shop);
      assert.equal(shop.bulkRuns, 1, 'one bulk operation started, no orphan');
      assert.equal(shop.bulkRunQueries, 1, 'the mutation not sent again');
      await assertReadOnce(org.id, shop, 'no order imported twice');
      const twin = await importedTwin('Shopify bulk sans réponse jumeau', shop);
      assertSameAnswers(await answers(service, key), await answers(service, twin.key));
    } finally {
      await shop.close();
    }
  });

  test('SHOPIFY_API_VERSION=2025-10 (one bulk query at a time, no bulkOperations): a mutation answered too late is looked up with currentBulkOperation and adopted; another query running refuses ours: page by page', async () => {
    const legacy = await legacyService();
    const late = await startShop({ seed: 20 });
    const busy = await startShop({ seed: 21 });
    try {
      late.addOrders(300);
      late.bulkDurationMs = 1_000;
      late.answerBulkRunLate(1, 4_000);
      busy.addOrders(60);
      busy.bulkDurationMs = 60_000;
      assert.ok(busy.runBulkQuery('{ orders { edges { node { id } } } }'));
      const lateOrg = await legacy.addOrganization('Shopify 2025-10', []);
      const busyOrg = await legacy.addOrganization('Shopify 2025-10 occupée', []);
      for (const [org, shop] of [
        [lateOrg.org, late],
        [busyOrg.org, busy],
      ] as const) {
        await connectStore(legacy.db, setup(legacy), {
          organizationId: org.id,
          platform: 'shopify',
          address: shop.url,
          consumerKey: '',
          consumerSecret: shop.accessToken,
        });
      }
      for (const [org, shop] of [
        [lateOrg.org, late],
        [busyOrg.org, busy],
      ] as const) {
        await eventually(
          'synced on 2025-10',
          paced(() => connectionsOf(legacy.db, org.id).then((c) => c[0])),
          (c) => c?.phase === 'incremental' && !c.running && c.orders === countedShopifyOrders(shop).length,
          60_000,
        );
      }
      for (const shop of [late, busy]) {
        assert.ok(shop.requests.every((r) => r.path.startsWith('/bulk/') || r.path.includes('/2025-10/')));
        assert.ok(!shop.requests.some((r) => r.body.includes('bulkOperations(')), 'not in 2025-10');
      }
      assert.equal(late.bulkRunQueries, 1, 'the late mutation not sent again');
      assert.equal(late.bulkRuns, 1);
      assert.ok(late.bulkDownloads.length >= 2, 'the adopted operation’s file read');
      assert.equal(busy.bulkRunQueries, 2, 'ours refused OPERATION_IN_PROGRESS, once');
      assert.equal(busy.bulkRuns, 1, 'the other one left alone');
      assert.equal(busy.bulkDownloads.length, 0, 'page by page');
    } finally {
      await Promise.all([late.close(), busy.close()]);
    }
  });

  test('a throttled shop, 429 and 5xx: the pass waits for the bucket and backs off, and ends with every order', async () => {
    const shop = await startShop({ seed: 13, bucket: { maximum: 1000, restoreRate: 400 } });
    try {
      shop.addOrders(60);
      const { org } = await service.addOrganization('Shopify lent', []);
      shop.drainBucket();
      shop.failNext(2, 429, '0');
      shop.failNext(1, 503);
      await connectWithToken(org.id, shop);
      await syncedWith(org.id, shop);
      assert.ok(shop.costs.every((c) => c.requested <= 1000));
      // The client waited for the refill rather than hammering: few THROTTLED answers at most.
      const throttled = shop.costs.filter((c) => c.throttled).length;
      assert.ok(throttled <= 3, `THROTTLED ${throttled} times`);
    } finally {
      await shop.close();
    }
  });

  test('webhooks: a signed delivery re-reads the order; forged, unsigned or repeated ones change nothing; a deleted order stops counting', async () => {
    const shop = await startShop({ seed: 14, apiSecret: 'secret-de-l-application' });
    // The service whose stores sync when asked only: what a webhook changes, the webhook did.
    const quiet = await legacyService();
    try {
      shop.addOrders(60);
      const { org } = await quiet.addOrganization('Shopify webhooks', []);
      const connected = await connectStore(quiet.db, setup(quiet), {
        organizationId: org.id,
        platform: 'shopify',
        address: shop.url,
        consumerKey: '',
        consumerSecret: shop.accessToken,
        webhookSecret: shop.apiSecret,
      });
      const target = `${quiet.baseUrl}${connected.webhookPath}`;
      const state = paced(() => connectionsOf(quiet.db, org.id).then((c) => c[0]!));
      await eventually('backfilled', state, (c) => c.phase === 'incremental' && !c.running, 60_000);
      // Issue 27: a tax-inclusive order of a variant with a discount, then one of its lines refunded.
      const fresh = shop.addOrder({
        email: 'webhook@example.com',
        taxesIncluded: true,
        lines: [
          {
            quantity: 2,
            unitCents: 2400,
            taxCents: 720,
            discountCents: 480,
            sku: 'TSB-M',
            product: { id: 801, title: 'T-shirt bio', productType: 'Vêtements' },
            variant: { id: 8012, title: 'M' },
          },
          { quantity: 1, unitCents: 1200, taxCents: 200 },
        ],
      });
      assert.equal((await shop.deliver(target, 'orders/create', fresh.id, { secret: 'faux' })).status, 401);
      assert.equal(
        (await shop.deliver(target, 'orders/create', fresh.id, { omitSignature: true })).status,
        401,
      );
      const delivered = await shop.deliver(target, 'orders/create', fresh.id, { webhookId: 'w-1' });
      assert.equal(delivered.status, 202);
      const repeated = await shop.deliver(target, 'orders/create', fresh.id, { webhookId: 'w-1' });
      assert.equal(repeated.status, 200);
      assert.match(repeated.body, /ignored/);
      const count = countedShopifyOrders(shop).length;
      await eventually('the new order counted', state, (c) => c.orders === count && !c.running, 30_000);
      const freshLines = paced(() =>
        linesOf(org.id, quiet.db).then((rows) => rows.filter((r) => r.external_id === String(fresh.id))),
      );
      const [tee] = await freshLines();
      assert.deepEqual(
        [tee!.variant_id, tee!.subtotal, tee!.discount, tee!.refunded_quantity],
        ['8012', '40.00', '4.00', 0],
      );
      shop.addRefund(fresh.id);
      assert.equal((await shop.deliver(target, 'refunds/create', fresh.id)).status, 202);
      const refunded = await eventually(
        'the refunded line',
        freshLines,
        (rows) => rows[0]?.refunded_quantity === 2,
      );
      assert.equal(refunded[0]!.refunded_amount, '36.00');
      assert.equal(refunded[1]!.refunded_amount, '0.00');
      const gone = countedShopifyOrders(shop)[0]!;
      shop.deleteOrder(gone.id);
      assert.equal((await shop.deliver(target, 'orders/delete', gone.id)).status, 202);
      await eventually(
        `the deleted order gone (${count - 1} orders expected)`,
        state,
        (c) => c.orders === count - 1 && !c.running,
        30_000,
      );
    } finally {
      await shop.close();
    }
  });
});
