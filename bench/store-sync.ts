// A store's backfill, end to end, on one engine: the stand-in WooCommerce (HTTPS, 100 orders a
// page, refunds read per refunded order) then the stand-in Shopify (GraphQL, 14 orders a page,
// refunded or large orders read alone, the cost bucket of Shopify Plus: 1,000 points a second) on
// loopback, the server's own sync worker, the embedded database or a PostgreSQL server
// (DATABASE_URL). Prints, per platform, the orders per second, the server's event loop delay and
// the /healthz latency during the backfill against the same figures idle, and RSS.
// Shopify is measured twice: its history by one bulk operation (the default), then page by page
// (`shopify-pages`: the stand-in refuses the bulk query, as when one is already running).
// `shopify-faults` (issue 26 item 3): Shopify by bulk operation twice in the same run, without
// faults then with a few (once the file is being read: a 429 with Retry-After 1, two 500s and
// four answers past the client's 5 s timeout: one request fails four times, so does its pass),
// for orders a second with and without faults; a line on stderr at each change says where the
// backfill is (orders, failures, the next try) to see where the time goes.
// Usage: npm run build && node dist/bench/store-sync.js [orders≈20000] [store latency ms per request]
//   [woocommerce|shopify|shopify-pages|shopify-faults|both (default: the first three)]
// PostgreSQL: DATABASE_URL=postgres://… node dist/bench/store-sync.js 5000 0 both
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { createOrganization } from '../src/domain/organizations.js';
import { connectStore } from '../src/domain/store-connections.js';
import { connectionsOf } from '../src/ingest/connectors/connections.js';
import { storeSyncSetup } from '../src/ingest/connectors/registry.js';
import { FakeShopify } from '../test/helpers/fake-shopify.js';
import { FakeWooCommerce } from '../test/helpers/fake-woocommerce.js';
import { countedShopifyOrders } from '../test/helpers/shopify-expectations.js';

const target = Number(process.argv[2] ?? 20_000);
const latencyMs = Number(process.argv[3] ?? 0);
const mode = process.argv[4] ?? 'both';
const platforms =
  mode === 'both'
    ? ['woocommerce', 'shopify', 'shopify-pages']
    : mode === 'shopify-faults'
      ? ['shopify', 'shopify-faults']
      : [mode];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-bench-sync-'));
const config = loadConfig({
  ...(process.env.DATABASE_URL
    ? {
        DATABASE_URL: process.env.DATABASE_URL,
        SECRET_KEY: process.env.SECRET_KEY ?? crypto.randomBytes(32).toString('hex'),
      }
    : { DATA_DIR: path.join(dir, 'data') }),
  LOG_LEVEL: 'silent',
  STORE_ALLOW_PRIVATE: '1',
  STORE_SYNC_POLL_MS: '100',
  STORE_HTTP_TIMEOUT_MS: '5000',
});
const certificate = await FakeWooCommerce.generateCertificate();
const db = await openDatabase(config, { role: 'server' });
await migrate(db);
const app = await buildApp(config, { db, logger: false, storeCa: certificate.cert });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

const pct = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

/** Loop delay and /healthz latency while `work` runs. */
async function measure(work: () => Promise<unknown>) {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const probes = (async () => {
    while (running) {
      const started = performance.now();
      try {
        await (await fetch(`${base}/healthz`)).arrayBuffer();
        latencies.push(performance.now() - started);
      } catch {
        failures++; // a kept-alive socket the server closed meanwhile: counted, not fatal
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  histogram.enable();
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  histogram.disable();
  running = false;
  await probes;
  return {
    seconds,
    loopP99: histogram.percentile(99) / 1e6,
    loopMax: histogram.max / 1e6,
    healthP50: pct(latencies, 0.5),
    healthP99: pct(latencies, 0.99),
    healthFailures: failures,
  };
}

const idle = await measure(() => new Promise((resolve) => setTimeout(resolve, 2000)));

/**
 * Once the bulk file's second slice is asked for: a 429 (Retry-After 1), two 500s, and four
 * answers slower than the client's timeout (STORE_HTTP_TIMEOUT_MS, 5 s here), the first three
 * carrying the 429 and the 500s: one request's four attempts all fail, so its pass fails.
 */
function faultsOnceReading(shop: FakeShopify) {
  const timer = setInterval(() => {
    if (shop.bulkDownloads.length < 2) return;
    clearInterval(timer);
    shop.failNext(1, 429, '1');
    shop.failNext(2, 500);
    shop.slowNext(4, 6_000);
  }, 20);
  return () => clearInterval(timer);
}

/** The stand-in of a platform with `target` orders, and how to connect it. */
async function standIn(platform: string) {
  if (platform.startsWith('shopify')) {
    const shop = await FakeShopify.start({ certificate });
    shop.addOrders(target);
    if (platform === 'shopify-pages') shop.bulkConcurrency = 0; // the bulk query refused: page by page
    if (latencyMs > 0) shop.slowDown(latencyMs);
    return {
      url: shop.url,
      orders: countedShopifyOrders(shop).length,
      request: { platform: 'shopify', address: shop.url, consumerKey: '', consumerSecret: shop.accessToken },
      stats: () => ({
        requests: shop.requests.length,
        bulkOperations: shop.bulkRuns,
        throttled: shop.costs.filter((c) => c.throttled).length,
      }),
      faults: platform === 'shopify-faults' ? faultsOnceReading(shop) : undefined,
      close: () => shop.close(),
    };
  }
  const store = await FakeWooCommerce.start({ certificate });
  store.addOrders(target, 5);
  if (latencyMs > 0) store.slowDown(latencyMs);
  return {
    url: store.url,
    orders: store.allOrders().filter((o) => o.currency === 'EUR').length,
    request: {
      platform,
      address: store.url,
      consumerKey: store.consumerKey,
      consumerSecret: store.consumerSecret,
    },
    stats: () => ({ requests: store.requests.length, maxConcurrentRequests: store.maxConcurrentRequests }),
    close: () => store.close(),
  };
}

for (const platform of platforms) {
  const source = await standIn(platform);
  const org = await createOrganization(db, { name: `Bench sync ${platform}` });
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 200);
  const orders = source.orders;
  let lastShown = 0;
  let lastState = '';
  const begun = performance.now();
  const sync = await measure(async () => {
    await connectStore(db, storeSyncSetup(config, certificate.cert), {
      organizationId: org.id,
      ...source.request,
    });
    for (;;) {
      const [connection] = await connectionsOf(db, org.id);
      if (
        connection &&
        connection.phase === 'incremental' &&
        !connection.running &&
        connection.orders === orders
      )
        return;
      const changed = connection && `${connection.orders} ${connection.failures}` !== lastState;
      if (connection && (connection.orders - lastShown >= 5_000 || (source.faults && changed))) {
        lastShown = connection.orders;
        lastState = `${connection.orders} ${connection.failures}`;
        const at = ((performance.now() - begun) / 1000).toFixed(1);
        const next = connection.nextSyncAt
          ? Math.round((connection.nextSyncAt.getTime() - Date.now()) / 1000)
          : '-';
        process.stderr.write(
          `  ${at} s ${platform} ${connection.orders} / ${orders} commandes, échecs ${connection.failures}, prochaine passe dans ${next} s${connection.lastError ? ` (${connection.lastError})` : ''}\n`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
  clearInterval(sampler);
  if ('faults' in source) source.faults?.();
  console.log(
    JSON.stringify(
      {
        platform,
        engine: db.engine,
        loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
        orders,
        storeLatencyMs: latencyMs,
        ...source.stats(),
        seconds: Number(sync.seconds.toFixed(1)),
        ordersPerSecond: Math.round(orders / sync.seconds),
        idle: {
          loopP99Ms: idle.loopP99,
          healthP50Ms: Number(idle.healthP50.toFixed(1)),
          healthP99Ms: Number(idle.healthP99.toFixed(1)),
        },
        backfill: {
          loopP99Ms: sync.loopP99,
          loopMaxMs: sync.loopMax,
          healthP50Ms: Number(sync.healthP50.toFixed(1)),
          healthP99Ms: Number(sync.healthP99.toFixed(1)),
          healthFailures: sync.healthFailures,
        },
        peakRssMb: Math.round(peakRss / 1024 ** 2),
      },
      null,
      2,
    ),
  );
  await source.close();
}
await app.close();
await db.close();
fs.rmSync(dir, { recursive: true, force: true });
