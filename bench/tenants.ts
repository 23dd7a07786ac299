// Issue 29, items 3 and 5: many organizations of long-tailed sizes on PostgreSQL and Redis,
// served by several `sales-metrics serve` instances behind the HAProxy recipe of
// deploy/haproxy.cfg (consistent hashing on the API key) and, beside it, the same instances
// behind a round-robin balancer. Requests are drawn with Zipf popularity (the larger an
// organization, the more it is asked), at a fixed rate of uncached daily reports (a new window
// or limit each time: the cache never answers), while orders keep arriving for a few
// organizations. Each scenario starts its instances afresh and prints p50/p95/p99 per size class,
// RSS, snapshot bytes, builds and evictions per instance (from each instance's /metrics) and the
// database's CPU (the PostgreSQL processes' own counters). Then, on three instances with
// consistent hashing, one instance is killed and another added: p95 before, during and after.
// Last, memory that holds (item 3): two instances whose REPORT_MEMORY_MB is a fraction of the
// working set, builds and evictions counted in each half of the run.
//
// Usage: npm run bench:tenants -- [organizations, default 1000] [largest, default 1000000]
//        [seconds per scenario, default 180] [requests per second, default 20]
// Sizes: one organization of `largest` orders, 1 % of them of largest/10, 10 % of largest/100,
// the rest between 10 and min(1000, largest/100), log-uniform.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { generateDemoOrders, DEFAULT_DEMO_STORES, type DemoOrder } from '../src/demo/generate.js';
import { createApiKey } from '../src/auth/api-keys.js';
import { createOrganization, setSubscription } from '../src/domain/organizations.js';
import { importOrderRecords } from '../src/ingest/import.js';
import { freePort, startServer, type ServerProcess } from '../test/helpers/processes.js';
import { startRedis, type TestRedis } from '../test/helpers/redis.js';
import { parseExposition, samplesOf, valueOf } from '../test/helpers/prometheus-text.js';
import { mulberry32 } from '../test/helpers/seeded-random.js';

const ORGS = Number(process.argv[2] ?? 1000);
const LARGEST = Number(process.argv[3] ?? 1_000_000);
const SECONDS = Number(process.argv[4] ?? 180);
const RATE = Number(process.argv[5] ?? 20);
const IN_FLIGHT = 200;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DAY_MS = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);
const random = mulberry32(29);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

interface Tenant {
  name: string;
  id: string;
  key: string;
  orders: number;
  sizeClass: string;
}

/** The long tail: one largest, 1 % large, 10 % medium, the rest small (log-uniform). */
function sizes(): { orders: number; sizeClass: string }[] {
  const large = Math.max(1, Math.round(ORGS / 100));
  const medium = Math.max(1, Math.round(ORGS / 10));
  const smallMax = Math.max(10, Math.min(1000, LARGEST / 100));
  const out = [{ orders: LARGEST, sizeClass: `1 × ${LARGEST.toLocaleString('en')}` }];
  for (let i = 0; i < large; i++)
    out.push({ orders: LARGEST / 10, sizeClass: `${large} × ${(LARGEST / 10).toLocaleString('en')}` });
  for (let i = 0; i < medium; i++)
    out.push({ orders: LARGEST / 100, sizeClass: `${medium} × ${(LARGEST / 100).toLocaleString('en')}` });
  const small = ORGS - out.length;
  for (let i = 0; i < small; i++)
    out.push({
      orders: Math.round(Math.exp(Math.log(10) + random() * (Math.log(smallMax) - Math.log(10)))),
      sizeClass: `${small} × 10–${smallMax.toLocaleString('en')}`,
    });
  return out;
}

/** Organizations, their two years of generated orders and one API key each; largest first. */
async function populate(env: Record<string, string>): Promise<Tenant[]> {
  const db = await openDatabase(loadConfig(env), { role: 'cli' });
  try {
    await migrate(db);
    const tenants: Tenant[] = [];
    const started = performance.now();
    for (const [i, { orders, sizeClass }] of sizes().entries()) {
      const org = await createOrganization(db, { name: `Organisation ${i + 1}` });
      await setSubscription(db, org.id, 'active');
      const records: DemoOrder[] = [];
      for (const order of generateDemoOrders({
        seed: i + 1,
        endDate: today,
        days: 730,
        ordersPerDay: (orders / 730) * 1.2,
      })) {
        if (records.length === orders) break;
        records.push(order);
      }
      await importOrderRecords(db, org.id, records);
      tenants.push({
        name: org.name,
        id: org.id,
        key: (await createApiKey(db, org.id, 'bench')).key,
        orders: records.length,
        sizeClass,
      });
    }
    const total = tenants.reduce((sum, t) => sum + t.orders, 0);
    log(
      `${tenants.length} organizations, ${total.toLocaleString('en')} orders imported in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    return tenants;
  } finally {
    await db.close();
  }
}

/** Zipf (s = 1) over organizations ranked by size: the cumulative weights, for drawing. */
function zipf(count: number): (u: number) => number {
  const cumulative: number[] = [];
  let sum = 0;
  for (let rank = 1; rank <= count; rank++) cumulative.push((sum += 1 / rank));
  return (u) => {
    const target = u * sum;
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] ?? 0) < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

let asked = 0;
/** A daily report no one asked before (random 30–365 day window in two years; counter in limit). */
function uncachedReport(): string {
  const length = 30 + Math.floor(random() * 336);
  const end = Math.floor(random() * (730 - length));
  asked++;
  return (
    `/api/reports/tabular?dimensions=date&metrics=orders,net_revenue,new_customers` +
    `&from=${daysAgo(end + length - 1)}&to=${daysAgo(end)}&limit=${1000 + (asked % 99_000)}`
  );
}

interface Answer {
  at: number;
  ms: number;
  status: number;
  sizeClass: string;
  instance: string;
}

/** The open-loop client: RATE requests a second, whatever the answers' speed (IN_FLIGHT at most). */
function drive(
  balancer: () => string,
  tenants: Tenant[],
  seconds: number,
): Promise<{ answers: Answer[]; skipped: number }> {
  const pick = zipf(tenants.length);
  const answers: Answer[] = [];
  let inFlight = 0;
  let skipped = 0;
  const pending: Promise<void>[] = [];
  const ask = async (tenant: Tenant) => {
    inFlight++;
    const at = performance.now();
    try {
      const response = await fetch(`${balancer()}${uncachedReport()}`, {
        headers: { authorization: `Bearer ${tenant.key}` },
        signal: AbortSignal.timeout(60_000),
      });
      await response.arrayBuffer();
      answers.push({
        at,
        ms: performance.now() - at,
        status: response.status,
        sizeClass: tenant.sizeClass,
        instance: response.headers.get('x-instance') ?? '?',
      });
    } catch {
      answers.push({ at, ms: performance.now() - at, status: 0, sizeClass: tenant.sizeClass, instance: '?' });
    } finally {
      inFlight--;
    }
  };
  return new Promise((resolve) => {
    const start = performance.now();
    let sent = 0;
    const tick = () => {
      const due = Math.floor(((performance.now() - start) / 1000) * RATE);
      for (; sent < due; sent++) {
        if (inFlight >= IN_FLIGHT) skipped++;
        else pending.push(ask(tenants[pick(random())]!));
      }
      if (performance.now() - start < seconds * 1000) setTimeout(tick, 10);
      else void Promise.all(pending).then(() => resolve({ answers, skipped }));
    };
    tick();
  });
}

/** Orders placed now for a few organizations (the largest, a large one, two medium), 5 a second. */
function arriving(env: Record<string, string>, tenants: Tenant[]): { stop(): Promise<number> } {
  const targets = [
    tenants[0],
    tenants[1],
    tenants[Math.round(ORGS / 100) + 1],
    tenants[Math.round(ORGS / 100) + 2],
  ].filter((t): t is Tenant => t !== undefined);
  let running = true;
  let placed = 0;
  const done = (async () => {
    const db = await openDatabase(loadConfig(env), { role: 'cli' });
    try {
      while (running) {
        const tenant = targets[placed % targets.length]!;
        placed++;
        const order: DemoOrder = {
          store: DEFAULT_DEMO_STORES[placed % DEFAULT_DEMO_STORES.length]!,
          id: `live-${process.pid}-${placed}`,
          created_at: new Date().toISOString(),
          status: 'completed',
          billing_country: 'FR',
          customer_email: `live.${placed % 500}@example.org`,
          items: 1 + (placed % 3),
          total: '59.90',
          tax_total: '9.98',
          shipping_total: '4.90',
          fee_total: '0.00',
          refund_total: '0.00',
          refund_tax: '0.00',
          refund_shipping: '0.00',
        } as DemoOrder;
        await importOrderRecords(db, tenant.id, [order]);
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await db.close();
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return placed;
    },
  };
}

interface Instance {
  name: string;
  dir: string;
  server: ServerProcess;
  metricsPort: number;
}

async function startInstance(
  env: Record<string, string>,
  name: string,
  extra: Record<string, string> = {},
): Promise<Instance> {
  const metricsPort = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `sm-tenants-${name}-`));
  const server = await startServer({
    ...env,
    DATA_DIR: dir,
    INSTANCE_NAME: name,
    METRICS_PORT: String(metricsPort),
    ...extra,
  });
  return { name, dir, server, metricsPort };
}

interface Reading {
  rss: number;
  snapshotBytes: number;
  snapshots: number;
  builds: number;
  evictions: number;
  engines: Record<string, number>;
}

async function read(instance: Instance): Promise<Reading> {
  const text = await (await fetch(`http://127.0.0.1:${instance.metricsPort}/metrics`)).text();
  const families = parseExposition(text);
  const engines: Record<string, number> = {};
  for (const sample of samplesOf(families, 'sales_metrics_report_computations_total'))
    engines[sample.labels.engine ?? '?'] = sample.value;
  return {
    rss: valueOf(families, 'process_resident_memory_bytes'),
    snapshotBytes: valueOf(families, 'sales_metrics_snapshot_bytes'),
    snapshots: valueOf(families, 'sales_metrics_snapshots'),
    builds: valueOf(families, 'sales_metrics_snapshot_builds_total', { outcome: 'built' }),
    evictions: valueOf(families, 'sales_metrics_snapshot_evictions_total'),
    engines,
  };
}

/** The PostgreSQL cluster's CPU seconds: the postmaster, its live children, and its reaped ones. */
function databaseCpuSeconds(port: string): number {
  const tick = 100; // USER_HZ on Linux
  const stat = (pid: string) => {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  };
  let postmaster: string | undefined;
  const pids = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  for (const pid of pids) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmd[0]?.endsWith('postgres') && cmd.includes('-p') && cmd[cmd.indexOf('-p') + 1] === port)
        postmaster = pid;
    } catch {
      // gone meanwhile
    }
  }
  if (!postmaster) return NaN;
  // Fields after the command: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
  const own = stat(postmaster);
  let ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(own[i]), 0);
  for (const pid of pids) {
    try {
      const fields = stat(pid);
      if (fields[1] === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks / tick;
}

/** deploy/haproxy.cfg as shipped, on loopback, in front of `instances`; round robin if asked. */
function recipe(listen: number, instances: readonly Instance[], roundRobin: boolean): string {
  let text = fs.readFileSync(path.join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
  text = text
    .replace(/^\s+bind :80$/m, `    bind 127.0.0.1:${listen}`)
    .replace(/^\s+server app\d .*\n?/gm, '');
  text = text.replace(/^\s+log stdout.*\n/m, '');
  if (roundRobin)
    text = text.replace(/^\s+balance hash .*$/m, '    balance roundrobin').replace(/^\s+hash-type .*\n/m, '');
  const servers = instances
    .map((i) => `    server ${i.name} 127.0.0.1:${new URL(i.server.baseUrl).port} check`)
    .join('\n');
  return `${text.trimEnd()}\n${servers}\n`;
}

class Balancer {
  private child: ChildProcess | undefined;
  readonly url: string;
  private constructor(
    private readonly listen: number,
    private readonly cfg: string,
  ) {
    this.url = `http://127.0.0.1:${listen}`;
  }
  static async start(instances: readonly Instance[], roundRobin: boolean): Promise<Balancer> {
    const cfg = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sm-haproxy-')), 'haproxy.cfg');
    const balancer = new Balancer(await freePort(), cfg);
    await balancer.reload(instances, roundRobin);
    return balancer;
  }
  /** A new configuration: the new process takes over, the old one finishes its requests (-sf). */
  async reload(instances: readonly Instance[], roundRobin: boolean): Promise<void> {
    fs.writeFileSync(this.cfg, recipe(this.listen, instances, roundRobin));
    const check = spawnSync('haproxy', ['-c', '-q', '-f', this.cfg], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy -c: ${check.stderr}`);
    const old = this.child;
    this.child = spawn('haproxy', ['-db', '-f', this.cfg, ...(old?.pid ? ['-sf', String(old.pid)] : [])], {
      stdio: 'ignore',
    });
    for (let i = 0; ; i++) {
      if ((await fetch(`${this.url}/healthz`).catch(() => undefined))?.ok) break;
      if (i > 200) throw new Error('haproxy did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  stop(): void {
    this.child?.kill('SIGTERM');
    fs.rmSync(path.dirname(this.cfg), { recursive: true, force: true });
  }
}

/** p50/p95/p99 of the answered requests, by size class. */
function latencies(answers: Answer[], classes: string[]): string[] {
  return classes.map((sizeClass) => {
    const mine = answers.filter((a) => a.sizeClass === sizeClass);
    const ok = mine
      .filter((a) => a.status === 200)
      .map((a) => a.ms)
      .sort((a, b) => a - b);
    const other: Record<string, number> = {};
    for (const a of mine) if (a.status !== 200) other[a.status] = (other[a.status] ?? 0) + 1;
    const rest = Object.entries(other)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
    return `    ${sizeClass.padEnd(16)} ${String(ok.length).padStart(5)} answers  p50 ${percentile(ok, 50).toFixed(0).padStart(5)}  p95 ${percentile(ok, 95).toFixed(0).padStart(5)}  p99 ${percentile(ok, 99).toFixed(0).padStart(5)} ms${rest ? `  other: ${rest}` : ''}`;
  });
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

function perInstance(instances: Instance[], before: Reading[], mid: Reading[], after: Reading[]): string[] {
  return instances.map((instance, i) => {
    const a = after[i]!;
    const b = before[i]!;
    const engines = Object.entries(a.engines)
      .map(([e, n]) => `${e} ${n - (b.engines[e] ?? 0)}`)
      .join(', ');
    const half = mid[i]!;
    return `    ${instance.name}: RSS ${mb(a.rss)} MB, snapshots ${a.snapshots} of ${mb(a.snapshotBytes)} MB, builds ${a.builds} (${half.builds} by mid-run), evictions ${a.evictions} (${half.evictions} by mid-run); answers by engine: ${engines}`;
  });
}

async function scenario(
  label: string,
  env: Record<string, string>,
  tenants: Tenant[],
  count: number,
  roundRobin: boolean,
  port: string,
  extra: Record<string, string> = {},
): Promise<{ instances: Instance[]; balancer: Balancer; held: number }> {
  const instances: Instance[] = [];
  for (let i = 0; i < count; i++) instances.push(await startInstance(env, `i${i + 1}`, extra));
  const balancer = await Balancer.start(instances, roundRobin);
  const before = await Promise.all(instances.map(read));
  const cpu = databaseCpuSeconds(port);
  const orders = arriving(env, tenants);
  const started = performance.now();
  const halfway = new Promise<Reading[]>((resolve) =>
    setTimeout(() => resolve(Promise.all(instances.map(read))), (SECONDS * 1000) / 2),
  );
  const { answers, skipped } = await drive(() => balancer.url, tenants, SECONDS);
  const mid = await halfway;
  const placed = await orders.stop();
  const elapsed = (performance.now() - started) / 1000;
  const after = await Promise.all(instances.map(read));
  const dbCpu = databaseCpuSeconds(port) - cpu;
  const classes = [...new Set(tenants.map((t) => t.sizeClass))];
  console.log(
    `\n${label}: ${answers.length} requests in ${elapsed.toFixed(0)} s (${skipped} not sent: ${IN_FLIGHT} in flight), ${placed} orders placed meanwhile, load average ${load()}`,
  );
  for (const line of latencies(answers, classes)) console.log(line);
  for (const line of perInstance(instances, before, mid, after)) console.log(line);
  console.log(
    `    database CPU: ${dbCpu.toFixed(1)} s (${((dbCpu / elapsed) * 100).toFixed(0)} % of a core)`,
  );
  return { instances, balancer, held: Math.max(...after.map((r) => r.snapshotBytes)) };
}

async function stopAll(instances: Instance[], balancer: Balancer | undefined) {
  balancer?.stop();
  await Promise.all(instances.map((i) => i.server.stop()));
  for (const i of instances) fs.rmSync(i.dir, { recursive: true, force: true });
}

/** Three instances, consistent hashing: one killed, then one added; p95 in each third. */
async function move(
  env: Record<string, string>,
  tenants: Tenant[],
  instances: Instance[],
  balancer: Balancer,
) {
  // Started beforehand, out of the configuration: adding it is the balancer's reload.
  const added = await startInstance(env, 'i4');
  const orders = arriving(env, tenants);
  const start = performance.now();
  const events: Record<string, number> = {};
  const running = drive(() => balancer.url, tenants, SECONDS);
  await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 4));
  events.killed = performance.now();
  const victim = instances[1]!;
  await victim.server.kill();
  await new Promise((r) => setTimeout(r, Math.max(0, start + (SECONDS * 1000) / 2 - performance.now())));
  const survivors = instances.filter((i) => i !== victim);
  await balancer.reload([...instances, added], false);
  events.added = performance.now();
  const { answers } = await running;
  await orders.stop();
  instances.splice(1, 1, added);
  fs.rmSync(victim.dir, { recursive: true, force: true });
  const windows: [string, number, number][] = [
    ['before the kill', start, events.killed],
    ['killed, before the new one', events.killed, events.added],
    ['after the new one is added', events.added, Infinity],
  ];
  console.log(
    `\nMove (3 instances, consistent hashing; ${victim.name} killed, i4 added to the configuration), load average ${load()}`,
  );
  for (const [what, from, to] of windows) {
    const mine = answers.filter((a) => a.at >= from && a.at < to);
    const ok = mine
      .filter((a) => a.status === 200)
      .map((a) => a.ms)
      .sort((a, b) => a - b);
    const failed = mine.length - ok.length;
    const by: Record<string, number> = {};
    for (const a of mine) by[a.instance] = (by[a.instance] ?? 0) + 1;
    console.log(
      `    ${what.padEnd(28)} ${String(mine.length).padStart(5)} requests, p50 ${percentile(ok, 50).toFixed(0)} ms, p95 ${percentile(ok, 95).toFixed(0)} ms, not 200: ${failed}; by instance ${JSON.stringify(by)}`,
    );
  }
  const readings = await Promise.all([...survivors, added].map(read));
  for (const [i, r] of readings.entries())
    console.log(
      `    ${[...survivors, added][i]!.name}: builds ${r.builds}, snapshots ${r.snapshots} of ${mb(r.snapshotBytes)} MB, RSS ${mb(r.rss)} MB`,
    );
}

const { startTempPostgres } = (await import(
  pathToFileURL(path.join(ROOT, 'scripts/temp-postgres.js')).href
)) as {
  startTempPostgres(): Promise<{ url: string; stop(): void } | undefined>;
};
console.log(
  `bench:tenants: ${ORGS} organizations, largest ${LARGEST.toLocaleString('en')}, ${SECONDS} s per scenario, ${RATE} uncached requests/s; ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; load average ${load()}`,
);
const postgres = await startTempPostgres();
if (!postgres) throw new Error('no PostgreSQL server binaries (apt-get install postgresql)');
let redis: TestRedis | undefined;
let live: { instances: Instance[]; balancer: Balancer; held: number } | undefined;
try {
  redis = await startRedis();
  const env = {
    DATABASE_URL: postgres.url,
    SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    REDIS_URL: redis.url,
    RATE_LIMIT_MAX: '1000000000',
    LOG_LEVEL: 'error',
    // The recipe's setting (docs/deployment.md): each instance keeps up to date what it holds.
    REPORT_WARM_SCOPE: process.env.BENCH_WARM_SCOPE ?? 'held',
    ...(process.env.BENCH_SERVER_ENV
      ? (JSON.parse(process.env.BENCH_SERVER_ENV) as Record<string, string>)
      : {}),
  };
  const port = new URL(postgres.url).port;
  const tenants = await populate(env);
  let held = 0;
  for (const [count, roundRobin] of [
    [2, false],
    [2, true],
    [3, false],
    [3, true],
  ] as const) {
    live = await scenario(
      `${count} instances, ${roundRobin ? 'round robin' : 'consistent hashing'}`,
      env,
      tenants,
      count,
      roundRobin,
      port,
    );
    if (count === 2 && !roundRobin) held = live.held;
    if (count === 3 && !roundRobin) await move(env, tenants, live.instances, live.balancer);
    await stopAll(live.instances, live.balancer);
    live = undefined;
  }
  // Item 3: memory smaller than the working set: a third of what an instance held above.
  const memoryMb = Number(process.env.BENCH_SMALL_MEMORY_MB ?? Math.max(1, Math.round(held / 3 / 2 ** 20)));
  live = await scenario(
    `2 instances, consistent hashing, REPORT_MEMORY_MB=${memoryMb}`,
    env,
    tenants,
    2,
    false,
    port,
    {
      REPORT_MEMORY_MB: String(memoryMb),
    },
  );
} finally {
  if (live) await stopAll(live.instances, live.balancer);
  await redis?.stop().catch(() => undefined);
  postgres.stop();
}
