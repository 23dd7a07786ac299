// A WooCommerce store's backfill, end to end, on one engine: the stand-in store (HTTPS, 100 orders a
// page, refunds read per refunded order) on loopback, the server's own sync worker, the embedded
// database or a PostgreSQL server (DATABASE_URL). Prints the orders per second, the server's event
// loop delay and the /healthz latency during the backfill against the same figures idle, and RSS.
// Usage: npm run build && node dist/bench/store-sync.js [orders≈20000] [store latency ms per request]
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
import { FakeWooCommerce } from '../test/helpers/fake-woocommerce.js';

const target = Number(process.argv[2] ?? 20_000);
const latencyMs = Number(process.argv[3] ?? 0);
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
});
const store = await FakeWooCommerce.start();
store.addOrders(target, 5);
if (latencyMs > 0) store.slowDown(latencyMs);
const db = await openDatabase(config, { role: 'server' });
await migrate(db);
const app = await buildApp(config, { db, logger: false, storeCa: store.ca });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

const pct = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

/** Loop delay and /healthz latency while `work` runs. */
async function measure(work: () => Promise<unknown>) {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  const latencies: number[] = [];
  let running = true;
  const probes = (async () => {
    while (running) {
      const started = performance.now();
      await (await fetch(`${base}/healthz`)).arrayBuffer();
      latencies.push(performance.now() - started);
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
  };
}

const idle = await measure(() => new Promise((resolve) => setTimeout(resolve, 2000)));
const org = await createOrganization(db, { name: 'Bench sync' });
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 200);
const orders = store.allOrders().filter((o) => o.currency === 'EUR').length;
let lastShown = 0;
const sync = await measure(async () => {
  await connectStore(db, storeSyncSetup(config, store.ca), {
    organizationId: org.id,
    platform: 'woocommerce',
    address: store.url,
    consumerKey: store.consumerKey,
    consumerSecret: store.consumerSecret,
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
    if (connection && connection.orders - lastShown >= 5_000) {
      lastShown = connection.orders;
      process.stderr.write(`  ${connection.orders} / ${orders} commandes\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
});
clearInterval(sampler);
const requests = store.requests.length;
console.log(
  JSON.stringify(
    {
      engine: db.engine,
      orders,
      storeLatencyMs: latencyMs,
      requests,
      seconds: Number(sync.seconds.toFixed(1)),
      ordersPerSecond: Math.round(orders / sync.seconds),
      maxConcurrentRequests: store.maxConcurrentRequests,
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
      },
      peakRssMb: Math.round(peakRss / 1024 ** 2),
    },
    null,
    2,
  ),
);
await app.close();
await db.close();
await store.close();
fs.rmSync(dir, { recursive: true, force: true });
