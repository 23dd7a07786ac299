// Issue 29, item 2: what one organization's burst of heavy reports does to another's. Two
// organizations of N generated orders (two years) on a fresh embedded database, served by
// `sales-metrics serve` in its own process (rate limits out of the way); the quiet organization
// asks its uncached report by day one request after the other, alone, then while the noisy one
// runs four clients back to back asking its widest answers (five dimensions, limit 100,000) and
// two-year comparisons (from a thread of their own), and so on in turns for a few rounds (the machine is shared: phases in
// turns see the same load). Prints the quiet organization's p50/p95 in each phase with the load
// average, their ratio by round and over all rounds, and the noisy answers served; then the noisy
// clients alone for a phase, so that what fairness costs the noisy organization shows (its
// answers a second alone and beside the quiet one).
// Usage: npm run build --silent && node dist/bench/tenants-fairness.js [orders per organization, default 100000] [seconds per phase, default 20] [rounds, default 3]
// With BENCH_CPU_PROF=<directory>, the server runs under `node --cpu-prof` and writes its profile there.
// With BENCH_SERVER_NODE_ARGS="<flags>", the server's node runs with them (say
// `--max-semi-space-size=64`), the bench's own processes without.
// With BENCH_NOISY_CLIENTS=<n>, the noisy organization runs n clients instead of four.
// With BENCH_DATABASE_URL=<a PostgreSQL server's URL>, a database of its own is created there for
// the run (and dropped after) instead of the embedded one.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Worker } from 'node:worker_threads';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { generateDemoOrders } from '../src/demo/generate.js';
import { createApiKey } from '../src/auth/api-keys.js';
import { createOrganization, setSubscription } from '../src/domain/organizations.js';
import { importOrderRecords } from '../src/ingest/import.js';
import { freePort, startServer } from '../test/helpers/processes.js';

const ORDERS = Number(process.argv[2] ?? 100_000);
const SECONDS = Number(process.argv[3] ?? 20);
const ROUNDS = Number(process.argv[4] ?? 3);
/** The noisy organization's clients asking back to back (BENCH_NOISY_CLIENTS, default 4). */
const NOISY_CLIENTS = Number(process.env.BENCH_NOISY_CLIENTS ?? 4);
const DAYS = 730;
const today = new Date().toISOString().slice(0, 10);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-tenants-'));
const serverUrl = process.env.BENCH_DATABASE_URL;
const database = serverUrl ? `fairness_${process.pid}` : undefined;
/** On a PostgreSQL server, a database of the run's own (`sql` runs on the server's default one). */
const onServer = async (sql: string) => {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  await client.query(sql).finally(() => client.end());
};
const databaseEnv: Record<string, string> = {};
if (serverUrl && database) {
  await onServer(`CREATE DATABASE ${database}`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  databaseEnv.DATABASE_URL = url.href;
  databaseEnv.SECRET_KEY = crypto.randomBytes(32).toString('hex'); // required beside DATABASE_URL
}
console.log(`engine: ${database ? 'PostgreSQL' : 'embedded'}; load ${load()}`);
const keys: string[] = [];
{
  const db = await openDatabase(loadConfig({ DATA_DIR: dir, ...databaseEnv }), { role: 'server' });
  await migrate(db);
  for (const name of ['Bruyante', 'Calme']) {
    const org = await createOrganization(db, { name });
    await setSubscription(db, org.id, 'active');
    const started = performance.now();
    const orders = generateDemoOrders({ endDate: today, days: DAYS, ordersPerDay: ORDERS / DAYS });
    const result = await importOrderRecords(db, org.id, orders);
    console.log(
      `${name}: ${result.imported.toLocaleString('en')} orders imported in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    keys.push((await createApiKey(db, org.id, 'bench')).key);
  }
  await db.close();
}
const [noisyKey, quietKey] = keys as [string, string];
const profileDir = process.env.BENCH_CPU_PROF;
const metricsPort = await freePort();
const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
const server = await startServer(
  {
    DATA_DIR: dir,
    RATE_LIMIT_MAX: '1000000',
    LOG_LEVEL: 'warn',
    METRICS_PORT: String(metricsPort),
    ...databaseEnv,
  },
  120_000,
  [
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
  ],
);
let asked = 0;
const get = async (query: string, key: string) => {
  const response = await fetch(
    `${server.baseUrl}/api/reports/tabular?${query}&limit=${100_000 - 2 * ++asked}`,
    {
      headers: { authorization: `Bearer ${key}` },
    },
  );
  await response.arrayBuffer();
  return response.status;
};
const from = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
const quietReport = `metrics=orders,net_revenue&dimensions=date&from=${from(365)}&to=${today}`;
const widest = `metrics=orders,net_revenue,gross_sales&dimensions=date,store,country,status,customer_type&from=${from(729)}&to=${today}`;
const compared = `metrics=orders,net_revenue,new_customers&dimensions=date,country&from=${from(365)}&to=${today}&compare=previous_year`;

/** A figure of the server's /metrics (its default Node.js metrics: GC, event-loop delay); 0 before any. */
const sampled = (text: string, name: string) =>
  Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? 0) * 1000;
const GC_KINDS = ['major', 'minor', 'incremental'];

/**
 * The quiet organization's uncached reports, one after the other, for the phase's length; with
 * what the server's own figures say of the phase (GC time by kind, event-loop delay: the
 * prom-client histogram starts again at each scrape).
 */
async function quietPhase(): Promise<number[]> {
  const before = await (await fetch(metricsUrl)).text();
  const ms: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  while (performance.now() < end) {
    const at = performance.now();
    const status = await get(quietReport, quietKey);
    if (status === 200) ms.push(performance.now() - at);
  }
  const after = await (await fetch(metricsUrl)).text();
  const gc = GC_KINDS.map((kind) => {
    const name = `nodejs_gc_duration_seconds_sum\\{kind="${kind}"\\}`;
    return `${kind} ${(sampled(after, name) - sampled(before, name)).toFixed(0)}`;
  });
  console.log(
    `  server: GC ms ${gc.join(', ')}; event-loop delay p99 ${sampled(after, 'nodejs_eventloop_lag_p99_seconds').toFixed(0)} ms, max ${sampled(after, 'nodejs_eventloop_lag_max_seconds').toFixed(0)} ms`,
  );
  return ms;
}

let noisyAsked = 0;

/**
 * The noisy organization's four clients, back to back, while `quiet` runs (by default the quiet
 * organization's phase, else a wait of the phase's length), in a thread of their own
 * (bench/tenants-noisy-clients.ts); statuses counted.
 */
async function besideNoisy(
  statuses: Record<string, number>,
  quiet: () => Promise<number[]> = quietPhase,
): Promise<number[]> {
  const noisy = new Worker(new URL('./tenants-noisy-clients.js', import.meta.url), {
    workerData: {
      baseUrl: server.baseUrl,
      key: noisyKey,
      queries: [widest, compared],
      clients: NOISY_CLIENTS,
      askedBefore: noisyAsked,
    },
  });
  const done = new Promise<{ statuses: Record<string, number>; asked: number }>((resolve, reject) => {
    noisy.once('message', resolve);
    noisy.once('error', reject);
  });
  const ms = await quiet();
  noisy.postMessage('stop');
  const result = await done;
  await noisy.terminate();
  noisyAsked = result.asked;
  for (const [status, count] of Object.entries(result.statuses))
    statuses[status] = (statuses[status] ?? 0) + count;
  return ms;
}

const figures = (ms: number[]) =>
  `${ms.length} reports, p50 ${percentile(ms, 50).toFixed(0)} ms, p95 ${percentile(ms, 95).toFixed(0)} ms`;

try {
  // Both snapshots built before timing: until then answers come from SQL, or 503 SNAPSHOT_BUILDING
  // (on a loaded machine a 300,000-order build takes minutes; three tries were not enough).
  // Held snapshots are read from /metrics, the operator's view.
  const held = async () =>
    Number(/^sales_metrics_snapshots (\d+)/m.exec(await (await fetch(metricsUrl)).text())?.[1] ?? 0);
  while ((await held()) < 2) {
    await Promise.all([get(quietReport, quietKey), get(widest, noisyKey)]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  // A round not counted: the first phases ran slower (code not yet optimized by the JIT).
  await quietPhase();
  await besideNoisy({});
  // Alone and beside the noisy one in turns, so that both see the same load of the shared machine.
  const [alone, noisy]: [number[], number[]] = [[], []];
  const noisyStatuses: Record<string, number> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    const quiet = await quietPhase();
    console.log(`round ${round}, quiet alone: ${figures(quiet)} (load ${load()})`);
    const shared = await besideNoisy(noisyStatuses);
    console.log(`round ${round}, quiet beside the noisy one: ${figures(shared)} (load ${load()})`);
    console.log(`round ${round}, p95 ratio: ${(percentile(shared, 95) / percentile(quiet, 95)).toFixed(1)}×`);
    alone.push(...quiet);
    noisy.push(...shared);
  }
  console.log(`all rounds, quiet alone: ${figures(alone)}`);
  console.log(
    `all rounds, quiet beside the noisy one: ${figures(noisy)}; noisy answers by status ${JSON.stringify(noisyStatuses)}`,
  );
  console.log(`p95 ratio noisy/alone: ${(percentile(noisy, 95) / percentile(alone, 95)).toFixed(1)}×`);
  const noisyAlone: Record<string, number> = {};
  await besideNoisy(noisyAlone, async () => {
    await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
    return [];
  });
  const perSecond = (statuses: Record<string, number>, seconds: number) =>
    ((statuses['200'] ?? 0) / seconds).toFixed(1);
  console.log(
    `noisy answers a second: ${perSecond(noisyStatuses, SECONDS * ROUNDS)} beside the quiet one, ${perSecond(noisyAlone, SECONDS)} alone (load ${load()})`,
  );
} finally {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  if (database) await onServer(`DROP DATABASE ${database}`);
}
