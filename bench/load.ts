// Bounded HTTP load test on loopback: the real server on a throwaway PostgreSQL and Redis, one
// instance then three, each driven by autocannon with a cached and an uncached report workload.
// Usage: npm run build && node dist/bench/load.js [seconds per scenario, default 10]
// Server, database, Redis and load generator share this machine, so the figures are a floor
// for what the service does, not a capacity figure.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { generateDemoOrders } from '../src/demo/generate.js';
import { cliJson, type ServerProcess, startServer } from '../test/helpers/processes.js';
import { startRedis, type TestRedis } from '../test/helpers/redis.js';

const seconds = Number(process.argv[2] ?? 10);
if (!(seconds > 0)) throw new Error('usage: node dist/bench/load.js [seconds per scenario > 0]');

interface TempPostgres {
  url: string;
  stop(): void;
}
// aggregateResult merges the encoded HDR histograms of several runs (missing from @types).
const aggregate = (autocannon as unknown as { aggregateResult(r: unknown[], o: object): autocannon.Result })
  .aggregateResult;

const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
const CACHED = '/api/reports/tabular?metrics=orders,net_revenue,unique_customers&dimensions=store';
const DAY_MS = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) =>
  new Date(Date.parse(`${today}T00:00:00Z`) - n * DAY_MS).toISOString().slice(0, 10);

let counter = 0;
/** A daily report never asked before in this run (random 30–90 day window in the two generated
 * years, counter in `limit`): the one-minute cache is keyed on the resolved query, so it never
 * answers. limit ≥ 1000 > 90 rows, so no answer is truncated. */
function uncachedPath(): string {
  const length = 30 + Math.floor(Math.random() * 61);
  const end = Math.floor(Math.random() * (730 - length));
  counter += 1;
  return (
    `/api/reports/tabular?dimensions=date&metrics=orders,net_revenue,new_customers` +
    `&from=${daysAgo(end + length - 1)}&to=${daysAgo(end)}&limit=${1000 + (counter % 99_000)}`
  );
}

type Workload = 'cached' | 'uncached';
/** One raw autocannon run (histograms kept encoded so that runs can be merged afterwards). */
function cannon(baseUrl: string, key: string, workload: Workload, connections: number): Promise<unknown> {
  return autocannon({
    url: baseUrl,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${key}` },
    skipAggregateResult: true,
    requests:
      workload === 'cached'
        ? [{ path: CACHED }]
        : [{ setupRequest: (request) => ({ ...request, path: uncachedPath() }) }],
  });
}

interface Row {
  label: string;
  instances: number;
  rps: number;
  result: autocannon.Result;
}
const rows: Row[] = [];
const perInstance: string[] = [];
const rate = (r: autocannon.Result) => r.requests.total / r.duration;
const codes = (r: autocannon.Result) =>
  Object.entries(r.statusCodeStats ?? {})
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, { count }]) => `${code}×${count ?? 0}`)
    .join(' ');

/** Drives every server in parallel, one autocannon each; latencies merged from the histograms. */
async function scenario(label: string, servers: ServerProcess[], key: string, workload: Workload) {
  const connections = servers.length === 1 ? 20 : 7;
  const raws = await Promise.all(servers.map((s) => cannon(s.baseUrl, key, workload, connections)));
  const each = raws.map((raw) => aggregate([raw], { url: servers[0]!.baseUrl }));
  // A copy: aggregateResult adds the other runs' status counts into the first run's objects.
  const result = aggregate(structuredClone(raws), { url: servers[0]!.baseUrl });
  rows.push({
    label: `${label} ${workload}`,
    instances: servers.length,
    rps: each.reduce((s, r) => s + rate(r), 0),
    result,
  });
  if (servers.length > 1)
    each.forEach((r, i) =>
      perInstance.push(
        `  ${label} ${workload} instance ${i + 1}: ${rate(r).toFixed(0)} req/s, p50 ${r.latency.p50} ms, ` +
          `p99 ${r.latency.p99} ms, max ${r.latency.max} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
      ),
    );
}

async function warmUp(servers: ServerProcess[], key: string) {
  for (const s of servers)
    for (const url of [CACHED, uncachedPath()]) {
      const response = await fetch(`${s.baseUrl}${url}`, { headers: { authorization: `Bearer ${key}` } });
      if (response.status !== 200)
        throw new Error(`warm-up ${url}: ${response.status} ${await response.text()}`);
    }
}

function report(imported: unknown, loadBefore: number[]) {
  const cpus = os.cpus();
  const load = (l: number[]) => l.map((n) => n.toFixed(2)).join(' ');
  console.log(`\nMachine: ${cpus.length} × ${cpus[0]?.model ?? '?'}, Node ${process.version}`);
  console.log(`Load average (1, 5, 15 min) before: ${load(loadBefore)}, after: ${load(os.loadavg())}`);
  console.log('Server instances, PostgreSQL, Redis and the load generator all share this machine.');
  console.log(`Data: ${JSON.stringify(imported)}; ${seconds} s per run; A: 20 connections, B: 3 × 7.`);
  console.log(
    `cached: ${CACHED}\nuncached: daily report, random 30–90 day window, a new query each request\n`,
  );
  const header = 'scenario|inst|req/s|p50 ms|p90 ms|p99 ms|max ms|requests|non-2xx|errors/timeouts'.split(
    '|',
  );
  const table = rows.map(({ label, instances, rps, result: r }) => [
    label,
    String(instances),
    rps.toFixed(0),
    ...[r.latency.p50, r.latency.p90, r.latency.p99, r.latency.max].map(String),
    String(r.requests.total),
    r.non2xx ? `${r.non2xx} (${codes(r)})` : '0',
    `${r.errors}/${r.timeouts}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i]!.length)));
  for (const line of [header, widths.map((w) => '-'.repeat(w)), ...table])
    console.log(line.map((cell, i) => (i ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  '));
  console.log('\nB per instance (the B rows merge the three latency histograms):');
  for (const line of perInstance) console.log(line);
}

const loadBefore = os.loadavg();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-load-'));
const { startTempPostgres } = (await import(pathToFileURL(path.join(SCRIPTS, 'temp-postgres.js')).href)) as {
  startTempPostgres(): Promise<TempPostgres | undefined>;
};
let postgres: TempPostgres | undefined;
let redis: TestRedis | undefined;
const servers: ServerProcess[] = [];
try {
  postgres = await startTempPostgres();
  if (!postgres) throw new Error('no PostgreSQL server binaries (apt-get install postgresql)');
  redis = await startRedis();
  // A limit no run can reach: the test measures serving, not R1's 429s (any 429 stays visible).
  // SECRET_KEY is required with DATABASE_URL; a fresh one for this throwaway database.
  const env = {
    DATABASE_URL: postgres.url,
    SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    REDIS_URL: redis.url,
    RATE_LIMIT_MAX: '1000000000',
    LOG_LEVEL: 'warn',
  };
  const cli = cliJson(env);
  await cli('migrate');
  await cli('org', 'create', '--name', 'Load');
  await cli('subscription', 'set', '--org', 'load', '--state', 'active');
  const file = path.join(dir, 'orders.ndjson');
  const out = fs.createWriteStream(file);
  for (const order of generateDemoOrders({ endDate: today, ordersPerDay: 70 }))
    if (!out.write(`${JSON.stringify(order)}\n`)) await new Promise((r) => out.once('drain', r));
  await new Promise((r) => out.end(r));
  const imported = await cli('import', '--org', 'load', file);
  const key = String((await cli('key', 'create', '--org', 'load', '--name', 'bench')).key);

  servers.push(await startServer({ ...env, HOST: '127.0.0.1' }));
  await warmUp(servers, key);
  await scenario('A', servers, key, 'cached');
  await scenario('A', servers, key, 'uncached');

  // Two more instances next to the first: three processes sharing PostgreSQL and Redis.
  const more = await Promise.allSettled([1, 2].map(() => startServer({ ...env, HOST: '127.0.0.1' })));
  for (const s of more) if (s.status === 'fulfilled') servers.push(s.value);
  for (const s of more) if (s.status === 'rejected') throw s.reason;
  await warmUp(servers, key);
  await scenario('B', servers, key, 'cached');
  await scenario('B', servers, key, 'uncached');

  report(imported, loadBefore);
} finally {
  const exits = await Promise.all(servers.map((s) => s.stop()));
  const logs = servers.flatMap((s) => s.output().split('\n')).filter((l) => l.trim() !== '');
  if (logs.length)
    console.log(`\nServer log lines at level warn or above: ${logs.length}\n${logs.slice(0, 5).join('\n')}`);
  if (exits.some((code) => code !== 0)) console.log(`Server exit codes: ${exits.join(', ')}`);
  await redis?.stop().catch((error: unknown) => console.error('redis stop:', error));
  try {
    postgres?.stop();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
