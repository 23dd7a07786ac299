// Cached answers at the speed of the framework (issue 9, item 5): the cached path of the API
// (authentication with its K4 database check, R1 rate limit, C1 cache hit) under 16 connections,
// on each engine, against a bare `node:http` server answering the same bytes in the same run.
// One organization with realistic data is imported through the CLI; the server runs as in
// production (LOG_LEVEL info unless set, logs to a file, the columnar engine's snapshot built
// before measuring); one request warms the cache, a first run of half the duration (not counted)
// warms the process up (V8 compiles PGlite's WebAssembly and the hot JavaScript in background
// threads for several seconds after a start), then autocannon asks the same URL for N s.
// Usage: npm run bench:cached -- [orders, default 300000] [seconds, default 10]
//   BENCH_ENGINES=embedded,postgres,postgres+redis (default: all three)
//   BENCH_PROFILE=dir: the server runs under `node --cpu-prof --cpu-prof-dir=dir`
// The machine is shared (server, database, Redis and the load generator on the same cores), so
// read the ratio to bare http rather than the absolute figures, and the load average printed.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { METRICS } from '../src/catalog.js';
import { generateDemoOrders } from '../src/demo/generate.js';
import { BIN, cliJson, freePort } from '../test/helpers/processes.js';
import { startRedis, type TestRedis } from '../test/helpers/redis.js';

const orders = Number(process.argv[2] ?? 300_000);
const seconds = Number(process.argv[3] ?? 10);
if (!(Number.isInteger(orders) && orders >= 1000 && seconds > 0))
  throw new Error('usage: bench:cached [orders ≥ 1000] [seconds > 0]');
type Engine = 'embedded' | 'postgres' | 'postgres+redis';
const engines = (process.env.BENCH_ENGINES ?? 'embedded,postgres,postgres+redis').split(',') as Engine[];
const profileDir = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : undefined;
const logLevel = process.env.LOG_LEVEL ?? 'info';
const CONNECTIONS = 16;
const DAYS = 1095;

const today = new Date().toISOString().slice(0, 10);
const from = new Date(Date.parse(`${today}T00:00:00Z`) - 729 * 86_400_000).toISOString().slice(0, 10);
// Q1 of bench/reports.ts: totals of every metric over two years, in Europe/Paris.
const CACHED =
  `/api/reports/tabular?metrics=${METRICS.map((m) => m.id).join(',')}` +
  `&from=${from}&to=${today}&timezone=${encodeURIComponent('Europe/Paris')}`;

interface TempPostgres {
  url: string;
  stop(): void;
}
const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-cached-'));

interface Child {
  baseUrl: string;
  /** CPU seconds the process has used so far (all its threads: PGlite's worker too). */
  cpuSeconds(): number;
  log: string;
  stop(): Promise<number | null>;
}

/** A process that listens on `port`, its output in a file (not piped into this process). */
async function spawnListening(args: string[], env: Record<string, string>, name: string): Promise<Child> {
  const port = await freePort();
  const log = path.join(dir, `${name}.log`);
  const out = fs.openSync(log, 'w');
  const child: ChildProcess = spawn(process.execPath, args, {
    env: { ...process.env, DEMO: '0', ...env, PORT: String(port) },
    cwd: ROOT,
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  for (const started = Date.now(); ;) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${fs.readFileSync(log, 'utf8')}`);
    try {
      await fetch(`${baseUrl}/healthz`);
      break;
    } catch {
      if (Date.now() - started > 120_000) throw new Error(`${name} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const pid = child.pid;
  return {
    baseUrl,
    log,
    cpuSeconds: () => {
      // Fields 14 and 15 of /proc/<pid>/stat, after the parenthesised command name: user, system.
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ
    },
    stop: () => (child.kill('SIGTERM'), exited),
  };
}

/** The reference: Node's http module answering the same status, headers and body, nothing else. */
const BARE = `
const http = require('node:http');
const body = Buffer.from(process.env.BODY, 'base64');
const headers = JSON.parse(process.env.HEADERS);
http.createServer((req, res) => { res.writeHead(200, headers); res.end(body); })
  .listen(Number(process.env.PORT), '127.0.0.1');`;

interface Run {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  load: string;
  /** Server CPU time per request (user + system, every thread), microseconds. */
  cpuUs: number;
}

async function cannon(label: string, target: Child, pathname: string, key: string): Promise<Run> {
  const url = `${target.baseUrl}${pathname}`;
  const headers = { authorization: `Bearer ${key}` };
  await autocannon({ url, connections: CONNECTIONS, duration: Math.max(2, seconds / 2), headers });
  const cpuBefore = target.cpuSeconds();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    headers,
  });
  return {
    label,
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuUs: ((target.cpuSeconds() - cpuBefore) * 1e6) / result.requests.total,
    load: fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  };
}

async function waitForSnapshot(log: string): Promise<void> {
  if (!['info', 'debug', 'trace'].includes(logLevel))
    return void (await new Promise((r) => setTimeout(r, 5_000)));
  for (const started = Date.now(); Date.now() - started < 600_000;) {
    const text = fs.readFileSync(log, 'utf8');
    if (/"event":"(built|loaded|unsupported|failed)"/.test(text)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('no report snapshot within 10 minutes');
}

async function measure(label: string, env: Record<string, string>, key: string): Promise<Run[]> {
  const execArgv = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, label)}`] : [];
  const server = await spawnListening(
    [...execArgv, BIN, 'serve'],
    { ...env, HOST: '127.0.0.1', LOG_LEVEL: logLevel, RATE_LIMIT_MAX: '1000000000' },
    label,
  );
  try {
    const warm = await fetch(`${server.baseUrl}${CACHED}`, { headers: { authorization: `Bearer ${key}` } });
    const body = Buffer.from(await warm.arrayBuffer());
    if (warm.status !== 200) throw new Error(`warm-up: ${warm.status} ${body.toString()}`);
    await waitForSnapshot(server.log);
    // The answer is cached for 60 s (C1): warm it again just before the run.
    await fetch(`${server.baseUrl}${CACHED}`, { headers: { authorization: `Bearer ${key}` } });
    const headers: Record<string, string> = {};
    warm.headers.forEach((value, name) => {
      if (!['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name))
        headers[name] = value;
    });
    const served = await cannon(`${label} cached`, server, CACHED, key);
    const bare = await spawnListening(
      ['-e', BARE],
      { BODY: body.toString('base64'), HEADERS: JSON.stringify(headers) },
      `${label}-bare`,
    );
    try {
      const reference = await cannon(`${label} bare http`, bare, CACHED, key);
      console.log(`  response: ${body.length} bytes, ${Object.keys(headers).length} headers`);
      return [served, reference];
    } finally {
      await bare.stop();
    }
  } finally {
    const code = await server.stop();
    const lines = fs.readFileSync(server.log, 'utf8').split('\n').filter(Boolean).length;
    console.log(`  server exit ${code}, ${lines} log lines`);
  }
}

async function prepare(env: Record<string, string>, file: string): Promise<string> {
  const cli = cliJson(env);
  await cli('migrate');
  await cli('org', 'create', '--name', 'Bench');
  await cli('subscription', 'set', '--org', 'bench', '--state', 'active');
  const started = performance.now();
  const imported = await cli('import', '--org', 'bench', file);
  console.log(
    `  imported ${JSON.stringify(imported)} in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  return String((await cli('key', 'create', '--org', 'bench', '--name', 'bench')).key);
}

const runs: Run[] = [];
let postgres: TempPostgres | undefined;
let redis: TestRedis | undefined;
try {
  const file = path.join(dir, 'orders.ndjson');
  const out = fs.createWriteStream(file);
  let count = 0;
  for (const order of generateDemoOrders({ endDate: today, days: DAYS, ordersPerDay: orders / DAYS })) {
    count++;
    if (!out.write(`${JSON.stringify(order)}\n`)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
  console.log(`Generated ${count.toLocaleString('en')} orders over ${DAYS} days`);

  if (engines.includes('embedded')) {
    console.log('[embedded]');
    const env = { DATA_DIR: path.join(dir, 'data') };
    runs.push(...(await measure('embedded', env, await prepare(env, file))));
  }
  if (engines.some((e) => e.startsWith('postgres'))) {
    const { startTempPostgres } = (await import(
      pathToFileURL(path.join(SCRIPTS, 'temp-postgres.js')).href
    )) as {
      startTempPostgres(): Promise<TempPostgres | undefined>;
    };
    postgres = await startTempPostgres();
    if (!postgres) throw new Error('no PostgreSQL server binaries (apt-get install postgresql)');
    const env = { DATABASE_URL: postgres.url, SECRET_KEY: crypto.randomBytes(32).toString('hex') };
    console.log('[postgres]');
    const key = await prepare(env, file);
    if (engines.includes('postgres')) runs.push(...(await measure('postgres', env, key)));
    if (engines.includes('postgres+redis')) {
      redis = await startRedis();
      console.log('[postgres+redis]');
      runs.push(...(await measure('postgres+redis', { ...env, REDIS_URL: redis.url }, key)));
    }
  }
} finally {
  await redis?.stop().catch((error: unknown) => console.error('redis stop:', error));
  try {
    postgres?.stop();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const cpus = os.cpus();
console.log(`\nMachine: ${cpus.length} × ${cpus[0]?.model ?? '?'}, Node ${process.version}`);
console.log(
  `${orders.toLocaleString('en')} orders in one organization; ${CONNECTIONS} connections, ${seconds} s a run; ` +
    `LOG_LEVEL=${logLevel}${profileDir ? '; under --cpu-prof' : ''}\nURL: ${CACHED}\n`,
);
const header = [
  'run',
  'req/s',
  'p50 ms',
  'p99 ms',
  'vs bare',
  'CPU µs/req',
  'non-2xx',
  'errors',
  'loadavg after',
];
const table = runs.map((r, i) => {
  const bare = r.label.endsWith('bare http') ? undefined : runs[i + 1];
  return [
    r.label,
    r.rps.toFixed(0),
    String(r.p50),
    String(r.p99),
    bare ? `${((100 * r.rps) / bare.rps).toFixed(0)} %` : '',
    r.cpuUs.toFixed(0),
    String(r.non2xx),
    String(r.errors),
    r.load,
  ];
});
const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i]!.length)));
for (const line of [header, widths.map((w) => '-'.repeat(w)), ...table])
  console.log(
    line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '),
  );
if (runs.some((r) => r.non2xx || r.errors)) process.exitCode = 1;
