// Issue 11: a WooCommerce store connected through its REST API, against the stand-in store
// (test/helpers/fake-woocommerce.ts), with the real sync worker, database and HTTP. The figures
// after a sync are compared with those of importing the same orders from a file.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { connectStore, disconnectStore, syncStoreNow } from '../../src/domain/store-connections.js';
import { connectionsOf, queueRefetch } from '../../src/ingest/connectors/connections.js';
import { storeSyncSetup } from '../../src/ingest/connectors/registry.js';
import { importOrderRecords, STAGING_BATCH } from '../../src/ingest/import.js';
import { createApiKey } from '../../src/auth/api-keys.js';
import { engine, ordersBeingWritten } from '../helpers/database.js';
import { orderLine } from '../helpers/orders.js';
import { FakeWooCommerce } from '../helpers/fake-woocommerce.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  answers,
  assertSameAnswers,
  countedOrders,
  eventually,
  expectedLines,
  FAST_SYNC_ENV,
} from '../helpers/woocommerce-expectations.js';

/** A pass every 3 s: the changes test waits for one; every other pass costs CPU for nothing. */
const ENV = { ...FAST_SYNC_ENV, STORE_SYNC_INTERVAL_S: '3' };

describe('WooCommerce connector (issue 11)', () => {
  let service: TestService;
  let store: FakeWooCommerce;
  const logLines: string[] = [];

  let certificate: { key: string; cert: string };
  /** Every stand-in store shares one certificate, which the service's worker trusts. */
  const startStore = (options: Parameters<typeof FakeWooCommerce.start>[0] = {}) =>
    FakeWooCommerce.start({ certificate, ...options });

  before(async () => {
    certificate = await FakeWooCommerce.generateCertificate();
    store = await startStore();
    service = await startTestService(ENV, {
      storeCa: store.ca,
      logger: { write: (line: string) => logLines.push(line) },
    });
  });
  /**
   * The webhook tests' service, started once for both: no sync but a webhook's or a test's (an
   * hour between passes), so that what a delivery changes is the delivery's doing.
   */
  let quiet: Promise<TestService> | undefined;
  const quietService = () =>
    (quiet ??= startTestService({ ...ENV, STORE_SYNC_INTERVAL_S: '3600' }, { storeCa: certificate.cert }));
  after(async () => {
    await (await quiet)?.cleanup();
    if (process.env.DEBUG_LOGS)
      for (const line of logLines) if (line.includes('store sync')) console.log(line.slice(0, 600));
    await service?.cleanup();
    await store?.close();
  });

  // A store left connected is synced every second until the file ends: each test's stores are
  // disconnected after it (their orders kept), so that no later test pays for those passes.
  afterEach(async () => {
    const left = await service.db.query<{ organization_id: string; address: string }>(
      'SELECT c.organization_id::text AS organization_id, s.address FROM store_connections c JOIN stores s ON s.id = c.store_id',
    );
    for (const c of left)
      await disconnectStore(service.db, c.organization_id, c.address, { removeOrders: false });
  });

  const setup = () => storeSyncSetup(service.config, store.ca);
  const connection = async (organizationId: string) => (await connectionsOf(service.db, organizationId))[0];
  const upToDate = async (organizationId: string) => {
    const synced = await eventually(
      'the store synced',
      () => connection(organizationId),
      (c) => c !== undefined && c.phase === 'incremental' && c.lastSuccessAt !== null && !c.running,
    );
    assert.ok(synced);
    return synced;
  };

  /** Connects the stand-in `from` to the organization with its right keys. */
  const connectTo = (on: TestService, organizationId: string, from: FakeWooCommerce) =>
    connectStore(on.db, storeSyncSetup(on.config, from.ca), {
      organizationId,
      platform: 'woocommerce',
      address: from.url,
      consumerKey: from.consumerKey,
      consumerSecret: from.consumerSecret,
    });

  /** Waits until the worker has read the whole store and is idle. */
  const syncedWith = (organizationId: string, from: FakeWooCommerce) =>
    eventually(
      'the store synced',
      () => connection(organizationId),
      (c) =>
        c !== undefined && c.phase === 'incremental' && !c.running && c.orders === from.allOrders().length,
    );

  /** An organization's order lines, in order, without its own ids. */
  const linesOf = (organizationId: string) =>
    service.db.query<Record<string, unknown>>(
      `SELECT external_id, line_id, position, product_id, variant_id, sku, product_name, variant_name,
              categories, quantity, subtotal::text, discount::text, refunded_quantity, refunded_amount::text
       FROM order_lines WHERE organization_id = $1 ORDER BY external_id, position`,
      [organizationId],
    );

  /** An organization that imported, from a file, what the connector should have made of the store. */
  async function importedTwin(name: string, from: FakeWooCommerce) {
    const twin = await service.addOrganization(name, []);
    const result = await importOrderRecords(service.db, twin.org.id, expectedLines(from));
    assert.equal(result.refused, false, JSON.stringify(result.errors.slice(0, 3)));
    return twin;
  }

  test('connecting: wrong keys, a site without the REST API, a private or plain-http address: French errors, nothing saved', async () => {
    const { org } = await service.addOrganization('Refus', []);
    const attempt = (changes: Partial<Parameters<typeof connectStore>[2]>, withSetup = setup()) =>
      connectStore(service.db, withSetup, {
        organizationId: org.id,
        platform: 'woocommerce',
        address: store.url,
        consumerKey: store.consumerKey,
        consumerSecret: store.consumerSecret,
        ...changes,
      }).then(
        () => assert.fail('connected'),
        (error: { code: string; message: string; body: { field?: string } }) => error,
      );
    const wrongSecret = await attempt({ consumerSecret: `cs_${'0'.repeat(40)}` });
    assert.equal(wrongSecret.body.field, 'credentials');
    assert.match(wrongSecret.message, /Clés refusées/);
    assert.match((await attempt({ consumerKey: 'pas-une-cle' })).message, /commence par ck_/);
    const noRest = await startStore({ restApi: false });
    try {
      const error = await attempt({ address: noRest.url }, storeSyncSetup(service.config, noRest.ca));
      assert.match(error.message, /Aucune API REST WooCommerce/);
      assert.equal(error.body.field, 'address');
    } finally {
      await noRest.close();
    }
    const strict = storeSyncSetup(
      loadConfig({ ...process.env, DATA_DIR: service.config.dataDir, STORE_ALLOW_PRIVATE: '0' }),
    );
    for (const address of [
      'https://127.0.0.1:9',
      'https://169.254.169.254',
      'https://localhost:9',
      'http://boutique.example',
    ]) {
      const error = await attempt({ address }, strict);
      assert.equal(error.body.field, 'address', address);
      assert.match(error.message, /refusée/, address);
    }
    const untrusted = await attempt({}, storeSyncSetup(service.config));
    assert.match(untrusted.message, /Certificat|TLS/);
    assert.deepEqual(await connectionsOf(service.db, org.id), []);
    assert.equal(store.requests.filter((r) => r.method !== 'GET').length, 0, 'the store is never written to');
  });

  test('backfill of several pages of orders, then the figures equal an import of the same orders from a file', async () => {
    // Five pages of a hundred: paging, refunds, skipped and trashed orders; the count is not the point.
    store.addOrders(500, 7);
    const refunded = store
      .allOrders()
      .filter((o) => o.status === 'completed')
      .slice(0, 40);
    for (const [i, order] of refunded.entries()) {
      const item = order.line_items[0]!;
      store.addRefund(order.id, {
        lineItems: [{ quantity: 1, total: Number(item.total) / Math.max(1, item.quantity), totalTax: 0.5 }],
        ...(i % 2 === 0 ? { shipping: { total: order.shipping_total, totalTax: order.shipping_tax } } : {}),
      });
    }
    store.trashOrder(store.allOrders()[10]!.id);
    store.addOrder({ currency: 'USD' });
    const synced = await service.addOrganization('Synchronisée', []);
    const connected = await connectStore(service.db, setup(), {
      organizationId: synced.org.id,
      platform: 'woocommerce',
      address: `${store.url}/`,
      consumerKey: store.consumerKey,
      consumerSecret: store.consumerSecret,
    });
    assert.equal(connected.address, store.url);
    const done = await upToDate(synced.org.id);
    assert.equal(done.orders, countedOrders(store).length);
    assert.equal(done.backfillTotal, store.allOrders().length);
    assert.equal(done.skippedOrders, 1, 'the order in dollars is left out');
    assert.match(done.lastSkipped ?? '', /devise USD différente/);
    const twin = await importedTwin('Importée', store);
    assertSameAnswers(await answers(service, synced.key), await answers(service, twin.key));
    assert.equal(store.maxConcurrentRequests, 1, 'one request at a time');
    // Issue 27 (L1): the lines, exactly as docs/connectors.md maps them; categories read once per
    // product and pass, a hundred products a request, not once per order.
    const syncedLines = await linesOf(synced.org.id);
    assert.deepEqual(syncedLines, await linesOf(twin.org.id));
    assert.ok(syncedLines.some((l) => Number(l.refunded_amount) > 0 && l.refunded_quantity === 1));
    assert.ok(syncedLines.some((l) => (l.categories as string[]).includes('Maison & cuisine')));
    assert.ok(syncedLines.some((l) => Number(l.discount) > 0));
    const productReads = store.requests.filter((r) => r.route === '/wc/v3/products');
    const orderPages = store.requests.filter((r) => r.route === '/wc/v3/orders');
    assert.ok(
      productReads.length > 0 && productReads.length <= orderPages.length,
      `${productReads.length} product reads`,
    );

    // Changes in the store: new orders, a status change, a refund arriving later, a trashed order.
    store.advance(60_000);
    for (let i = 0; i < 30; i++) store.addOrder({});
    const changed = store.allOrders()[20]!;
    store.updateOrder(changed.id, { status: 'cancelled' });
    const later = store.allOrders().find((o) => o.status === 'processing' && o.refunds.length === 0)!;
    store.addRefund(later.id, { amount: '3.00' });
    store.trashOrder(store.allOrders()[30]!.id);
    const before = done.lastSuccessAt!.getTime();
    await eventually(
      'the changes synced',
      () => connection(synced.org.id),
      (c) => c!.lastSuccessAt!.getTime() > before && c!.orders === countedOrders(store).length,
    );
    // An order deleted for good (no webhook): found by the sweep a sync on request runs.
    store.deleteOrder(store.allOrders()[40]!.id);
    const now = await syncStoreNow(service.db, setup(), synced.org.id, store.url, () => undefined);
    if (now.ran) assert.equal(now.error, undefined);
    await eventually(
      'the deleted order removed',
      () => connection(synced.org.id),
      (c) => c!.orders === countedOrders(store).length && !c!.running,
    );
    const twinAfter = await importedTwin('Importée après changements', store);
    assertSameAnswers(await answers(service, synced.key), await answers(service, twinAfter.key));
  });

  test('a backfill of over a thousand orders leaves statistics that count the organization’s lines', async () => {
    // PGlite runs no autovacuum and a first backfill leaves no dead row: without a refresh after
    // the pages, the planner never learnt of these orders (a server's autovacuum comes later).
    const large = await startStore();
    try {
      large.addOrders(1200, 11);
      const synced = await service.addOrganization('Grande boutique', []);
      await connectTo(service, synced.org.id, large);
      await syncedWith(synced.org.id, large);
      const [plan] = await service.db.query<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>(
        'EXPLAIN (FORMAT JSON) SELECT 1 FROM order_lines WHERE organization_id = $1',
        [synced.org.id],
      );
      const [lines] = await service.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM order_lines WHERE organization_id = $1',
        [synced.org.id],
      );
      const estimated = plan!['QUERY PLAN'][0]!.Plan['Plan Rows'];
      assert.ok(lines!.n > 1000, `${lines!.n} lines`);
      assert.ok(estimated * 10 >= lines!.n, `the planner counts ${estimated} of ${lines!.n} lines`);
    } finally {
      await large.close();
    }
  });

  test('webhooks: signed deliveries bring an order up to date; unsigned, forged, repeated or late ones change nothing wrong', async () => {
    const hooks = await startStore();
    const quiet = await quietService();
    try {
      hooks.addOrders(120, 3);
      const { org, key } = await quiet.addOrganization('Webhooks', []);
      const connected = await connectTo(quiet, org.id, hooks);
      const target = `${quiet.baseUrl}${connected.webhookPath}`;
      const synced = () => connectionsOf(quiet.db, org.id).then((c) => c[0]!);
      await eventually('backfilled', synced, (c) => c.phase === 'incremental' && !c.running);
      const orders = () => answers(quiet, key).then((a) => a[0]);

      assert.equal((await hooks.deliverPing(target, 5)).status, 200);
      const fresh = hooks.addOrder({ status: 'completed' });
      const forged = await hooks.deliver(target, 'order.created', fresh.id, 'pas-le-bon-secret');
      assert.equal(forged.status, 401);
      assert.equal(
        (
          await hooks.deliver(target, 'order.created', fresh.id, connected.webhookSecret!, {
            omitSignature: true,
          })
        ).status,
        401,
      );
      const unknown = await hooks.deliver(
        `${quiet.baseUrl}/webhooks/woocommerce/00000000-0000-4000-8000-000000000000`,
        'order.created',
        fresh.id,
        connected.webhookSecret!,
      );
      assert.equal(unknown.status, 404);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const before = hooks.allOrders().length - 1;
      assert.equal((await synced()).orders, before, 'refused deliveries change nothing');

      const created = await hooks.deliver(target, 'order.created', fresh.id, connected.webhookSecret!);
      assert.equal(created.status, 202);
      await eventually('the new order counted', synced, (c) => c.orders === before + 1, 10_000);

      // Out of order: the update arrives first, the stale "created" payload after, twice.
      const stale = JSON.stringify({ ...fresh, status: 'completed' });
      hooks.updateOrder(fresh.id, { status: 'refunded' });
      assert.equal(
        (await hooks.deliver(target, 'order.updated', fresh.id, connected.webhookSecret!)).status,
        202,
      );
      for (let i = 0; i < 2; i++) {
        assert.equal(
          (await hooks.deliver(target, 'order.created', fresh.id, connected.webhookSecret!, { body: stale }))
            .status,
          202,
        );
      }
      const deleted = hooks.allOrders()[3]!;
      hooks.deleteOrder(deleted.id);
      assert.equal(
        (await hooks.deliver(target, 'order.deleted', deleted.id, connected.webhookSecret!)).status,
        202,
      );
      await eventually('the deletion counted', synced, (c) => c.orders === before, 10_000);
      await eventually(
        'no delivery left',
        () =>
          quiet.db.query('SELECT 1 FROM store_order_refetches WHERE connection_id = $1', [
            connected.connectionId,
          ]),
        (rows) => rows.length === 0,
        10_000,
      );
      const twin = await (async () => {
        const t = await quiet.addOrganization('Webhooks importée', []);
        await importOrderRecords(quiet.db, t.org.id, expectedLines(hooks));
        return t;
      })();
      assert.deepEqual(await orders(), (await answers(quiet, twin.key))[0]);
      assert.equal(hooks.requests.filter((r) => r.method !== 'GET').length, 0);
    } finally {
      await hooks.close();
    }
  });

  test('a store that fails: 429 and 5xx retried, down mid-backfill shows the reason, resumes from its page, nothing twice', async () => {
    const flaky = await startStore();
    try {
      flaky.addOrders(800, 11);
      flaky.failNext(1, 429, { retryAfterSeconds: 1 });
      flaky.failNext(2, 503);
      const { org } = await service.addOrganization('Capricieuse', []);
      await connectTo(service, org.id, flaky);
      flaky.slowDown(20);
      const state = () => connectionsOf(service.db, org.id).then((c) => c[0]!);
      await eventually('some pages written', state, (c) => c.orders >= 300);
      await flaky.goDown();
      // Every try fails now: the pass ends in error, with the reason in French, the cursor kept.
      const stopped = await eventually('the failure recorded', state, (c) => c.failures >= 1 && !c.running);
      if (process.env.DEBUG_LOGS)
        console.log(
          'STOPPED',
          new Date().toISOString(),
          JSON.stringify(stopped.nextSyncAt),
          stopped.failures,
          stopped.lastError,
        );
      assert.equal(stopped.phase, 'backfill');
      assert.match(stopped.lastError ?? '', /injoignable|indisponible|répond/);
      assert.ok(stopped.orders > 0 && stopped.orders < flaky.allOrders().length);
      const resumeFrom = Number(stopped.backfillCursor);
      assert.ok(resumeFrom > 1, `cursor ${stopped.backfillCursor}`);
      await eventually('marked in error after repeated failures', state, (c) => c.failures >= 3, 30_000);
      flaky.resetRecording();
      flaky.slowDown(0);
      await flaky.comeBack();
      const ok = await syncedWith(org.id, flaky);
      const pages = flaky.requests
        .filter(
          (r) =>
            r.path.endsWith('/wc/v3/orders') &&
            r.status === 200 &&
            !('_fields' in r.query) &&
            !('modified_after' in r.query),
        )
        .map((r) => Number(r.query.page ?? 1));
      assert.equal(Math.min(...pages), resumeFrom, 'resumed at the page it stopped at, not from the start');
      assert.equal(ok?.orders, flaky.allOrders().length);
      const healed = await eventually('the error cleared', state, (c) => c.failures === 0);
      assert.equal(healed.lastError, null);
    } finally {
      await flaky.close();
    }
  });

  test('two instances: each store synced by one at a time, a killed instance’s lease taken over, nothing imported twice', async () => {
    const shared = await startStore();
    const second = await buildApp(service.config, { db: service.db, logger: false, storeCa: shared.ca });
    const third = await buildApp(service.config, { db: service.db, logger: false, storeCa: shared.ca });
    try {
      await second.ready();
      await third.ready();
      // Four pages of up to a hundred: the holder is killed after its first, the others read the rest.
      shared.addOrders(320, 21);
      shared.slowDown(5);
      const { org } = await service.addOrganization('Deux instances', []);
      await connectTo(service, org.id, shared);
      const state = () => connectionsOf(service.db, org.id).then((c) => c[0]!);
      // The instance holding the store is "killed" mid-backfill: its lease is taken from it (as if
      // it had run out), and another instance takes over. The page it was reading is the cursor
      // saved with its last write, the only page the next holder may read again.
      await eventually(
        'a first page written',
        state,
        (c) => c.orders > 0 && c.phase === 'backfill' && c.running,
      );
      const [killed] = await service.db.query<{ backfill_cursor: string }>(
        `UPDATE store_connections SET lease_owner = gen_random_uuid(), lease_until = now() + interval '3 seconds'
         WHERE organization_id = $1 RETURNING backfill_cursor`,
        [org.id],
      );
      const inFlight = killed!.backfill_cursor;
      const done = await eventually(
        'synced by the other instances',
        state,
        (c) => c.phase === 'incremental' && !c.running,
      );
      assert.equal(done.orders, shared.allOrders().length);
      assert.equal(shared.maxConcurrentRequests, 1, 'never two requests at once to the store');
      const pages = shared.requests
        .filter(
          (r) =>
            r.path.endsWith('/wc/v3/orders') &&
            r.query.per_page === '100' &&
            !('modified_after' in r.query) &&
            !('_fields' in r.query),
        )
        .map((r) => r.query.page ?? '1');
      const readAgain = pages.filter((page, i) => pages.indexOf(page) !== i);
      assert.ok(
        readAgain.every((page) => page === inFlight) && readAgain.length <= 1,
        `no page of the backfill read twice but the killed holder's page ${inFlight}: ${readAgain.join(', ')}`,
      );
      const [jobs] = await service.db.query<{ imported: string; updated: string }>(
        `SELECT sum(imported) AS imported, sum(updated) AS updated FROM import_jobs WHERE organization_id = $1 AND origin = 'connector'`,
        [org.id],
      );
      assert.equal(Number(jobs!.imported), shared.allOrders().length);
      assert.equal(Number(jobs!.updated), 0, 'no order written twice');
    } finally {
      await second.close();
      await third.close();
      await shared.close();
    }
  });

  test('secrets: never in logs, URLs or the database in clear; only the last 4 characters shown', async () => {
    const { org } = await service.addOrganization('Secrets', []);
    const key = await createApiKey(service.db, org.id, 'x');
    void key;
    const secretStore = await startStore();
    try {
      await connectTo(service, org.id, secretStore);
      await syncedWith(org.id, secretStore);
      const dump =
        JSON.stringify(await service.db.query('SELECT * FROM store_connections')) +
        JSON.stringify(await service.db.query('SELECT * FROM import_jobs'));
      const text = [dump, ...logLines].join('\n');
      for (const secret of [
        secretStore.consumerSecret,
        secretStore.consumerKey,
        store.consumerSecret,
        store.consumerKey,
      ]) {
        assert.ok(!text.includes(secret), 'a credential in the database or the logs');
        assert.ok(!text.includes(Buffer.from(secret).toString('base64')), 'a credential, base64');
      }
      for (const request of [...secretStore.requests, ...store.requests].filter((r) =>
        r.route?.startsWith('/wc/v3'),
      )) {
        assert.equal(request.method, 'GET');
        assert.ok(
          !('consumer_secret' in request.query) && !('consumer_key' in request.query),
          'keys never in a URL',
        );
        // Only the first probe of a connection goes without the keys (they never follow a redirect).
        if (request.query.per_page !== '1') assert.equal(request.auth, 'basic');
        assert.notEqual(request.auth, 'query');
      }
      const [row] = await connectionsOf(service.db, org.id);
      assert.equal(row!.secretHint, secretStore.consumerSecret.slice(-4));
    } finally {
      await secretStore.close();
    }
  });

  test('disconnecting stops syncing; with removal the store’s orders go and first orders are recomputed', async () => {
    const a = await startStore();
    try {
      a.addOrders(150, 31); // two pages
      const { org, key } = await service.addOrganization('Déconnexion', []);
      // The same customers also bought in another store, imported from a file.
      const other = expectedLines(a)
        .slice(0, 50)
        .map((line, i) => ({
          ...line,
          store: 'https://autre.example',
          id: `o${i}`,
          created_at: '2026-11-01T10:00:00Z',
        }));
      await importOrderRecords(service.db, org.id, other);
      await connectTo(service, org.id, a);
      await syncedWith(org.id, a);
      const done = await disconnectStore(service.db, org.id, a.url, { removeOrders: true });
      assert.equal(done.removedOrders, a.allOrders().length);
      assert.deepEqual(await connectionsOf(service.db, org.id), []);
      const twin = await service.addOrganization('Déconnexion importée', other);
      assertSameAnswers(await answers(service, key), await answers(service, twin.key));
      const kept = await service.addOrganization('Conservée', []);
      await connectTo(service, kept.org.id, a);
      await syncedWith(kept.org.id, a);
      assert.equal(
        (await disconnectStore(service.db, kept.org.id, a.url, { removeOrders: false })).removedOrders,
        0,
      );
      const [{ n } = { n: 0 }] = await service.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM orders WHERE organization_id = $1',
        [kept.org.id],
      );
      assert.equal(n, a.allOrders().length, 'orders kept');
    } finally {
      await a.close();
    }
  });

  test('a repeated webhook delivery while a pass deletes the deliveries it read: both go through (lock order)', async () => {
    const hooks = await startStore();
    const quiet = await quietService();
    try {
      const { org } = await quiet.addOrganization('Livraisons répétées', []);
      await connectTo(quiet, org.id, hooks);
      const synced = () => connectionsOf(quiet.db, org.id).then((c) => c[0]!);
      await eventually('backfilled', synced, (c) => c.phase === 'incremental' && !c.running);
      const { id } = await synced();
      assert.equal(await queueRefetch(quiet.db, id, '42'), true);
      // A pass writing what it read, as the worker does: the connection's row (fence), then the
      // deliveries it read. The same order delivered again meanwhile used to lock its queued row,
      // then wait for the connection's: a deadlock, the delivery answered 500.
      let delivered: Promise<unknown> | undefined;
      await quiet.db.transaction(async (tx) => {
        await tx.query('SELECT 1 FROM store_connections WHERE id = $1 FOR UPDATE', [id]);
        delivered = queueRefetch(quiet.db, id, '42').catch((error: unknown) => error);
        await new Promise((resolve) => setTimeout(resolve, 300)); // the delivery reaches its wait
        await tx.query(`DELETE FROM store_order_refetches WHERE connection_id = $1 AND external_id = '42'`, [
          id,
        ]);
      });
      // Queued again once the pass committed (the worker may take it at once: not checked here).
      assert.equal(await delivered, true);
    } finally {
      await hooks.close();
    }
  });

  test('a store disconnected with its orders while a first import is to write some: neither fails, no deadlock (lock order)', async () => {
    // On a server, a first import holds the organization's row while it writes its orders batch
    // after batch. A disconnect deleted the store, then waited for that row (data version); the
    // import, reaching its lines of that store, waited for the deleted store: a deadlock, one of the
    // two aborted. Now the disconnect locks the organization's row before it touches the store.
    const connected = await startStore();
    try {
      const { org } = await service.addOrganization('Déconnexion pendant un import', []);
      await connectTo(service, org.id, connected);
      // The backfill (no order) and its first sweep done: the import finds an organization
      // without orders (on a server: written while read), and no sweep is due for an hour.
      await eventually(
        'the empty store synced',
        () => connection(org.id),
        (c) => c !== undefined && c.phase === 'incremental' && !c.running && c.sweptAt !== null,
      );
      const count = async (table: string) => {
        const [row] = await service.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1`,
          [org.id],
        );
        return row?.n ?? 0;
      };
      assert.equal(await count('orders'), 0);
      const other = 'https://autre.example';
      // The connected store's orders come last, earlier than the other store's: first orders.
      const late = [1, 3, 5, 7].map((c) => `c${c}@example.fr`).concat('seul@example.fr');
      let disconnected: Promise<unknown> | undefined;
      let settled = false;
      let writing: boolean | undefined;
      let waited: boolean | undefined;
      // On a server, two batches: the import is writing its orders when the disconnect comes. The
      // embedded engine merges once the file is read, whatever its size: a hundred lines (25
      // customers of the other store, as below) are enough there.
      const early = engine === 'postgres' ? 2 * STAGING_BATCH : 100;
      async function* lines() {
        for (let i = 1; i <= early; i++)
          yield orderLine(
            `b${i}`,
            '2026-03-01T00:00:00Z',
            i % 2 ? `c${i % 50}@example.fr` : undefined,
            other,
          );
        if (engine === 'postgres') writing = await ordersBeingWritten(service.db);
        disconnected = disconnectStore(service.db, org.id, connected.url, { removeOrders: true })
          .catch((error: unknown) => error)
          .finally(() => (settled = true));
        await new Promise((resolve) => setTimeout(resolve, 300)); // the disconnect reaches its wait
        waited = !settled;
        for (const [i, customer] of late.entries())
          yield orderLine(`a${i}`, '2026-01-01T00:00:00Z', customer, connected.url);
      }
      const result = await importOrderRecords(service.db, org.id, lines());
      const outcome = await disconnected;
      assert.deepEqual(
        [result.imported, result.updated, result.refused],
        [early + late.length, 0, false],
        JSON.stringify(result.errors.slice(0, 3)),
      );
      assert.ok(!(outcome instanceof Error), `the disconnect failed: ${String(outcome)}`);
      assert.deepEqual(await connectionsOf(service.db, org.id), []);
      const firstOrders = await service.db.query<{ day: string; n: number }>(
        `SELECT to_char(first_order_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n
         FROM customer_first_orders WHERE organization_id = $1 GROUP BY 1 ORDER BY 1`,
        [org.id],
      );
      if (engine === 'postgres') {
        assert.equal(writing, true, 'the import was writing into orders');
        assert.equal(waited, true, 'the disconnect waited for the import’s transaction');
        // It went on once the import committed: the store and its orders removed, first orders
        // back on the other store's.
        assert.deepEqual(outcome, { address: connected.url, removedOrders: late.length });
        assert.equal(await count('orders'), early);
        assert.equal(await count('stores'), 1);
        assert.deepEqual(firstOrders, [{ day: '2026-03-01', n: 25 }]);
      } else {
        // The embedded engine merges once the file is read, in a transaction after the
        // disconnect's: the store had no order then; the import brought it back with its orders.
        assert.deepEqual(outcome, { address: connected.url, removedOrders: 0 });
        assert.equal(await count('orders'), early + late.length);
        assert.equal(await count('stores'), 2);
        assert.deepEqual(firstOrders, [
          { day: '2026-01-01', n: late.length },
          { day: '2026-03-01', n: 25 - 4 },
        ]);
      }
    } finally {
      await connected.close();
    }
  });
});
