// Ten million orders in one organization (issue 19, item 5): generated orders (three years,
// src/demo/generate.ts as bench/live.ts makes them) imported into a throwaway PostgreSQL server,
// the real `sales-metrics serve`, then, timed from outside through HTTP with the load average
// beside every figure:
// - the import (1,000,000 orders a file, through the real `sales-metrics import`);
// - the first snapshot: its build time and bytes (the server's own log), the server's RSS;
// - warm Q1 (the ten metrics' totals over two years) and Q2 (the ten metrics by day over two
//   years, Europe/Paris), uncached (a new `limit` each time, never the same cache key, C1):
//   p50 / p95;
// - a restart on the same database: time until it listens, the first Q1 and the first Q2 (from
//   the start of the process and their own latency), the snapshot file's size and read time.
// Usage: npm run bench:big
//   BIG_ORDERS (default 10000000), BIG_ASKS (questions of each kind once warm, 20),
//   BIG_KEEP_DIR (a folder that keeps the database, its API key and the snapshot file between
//   runs: the import is made once, later runs start from the data; without it, a temporary folder
//   removed at the end), BIG_PROFILE_DIR (the server runs under `node --cpu-prof`, profiles
//   written there when it stops), BIG_ENGINE (postgres, the default, or embedded: PGlite in
//   BIG_KEEP_DIR/embedded).
// A smoke run: BIG_ORDERS=20000 BIG_ASKS=5 npm run bench:big
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { METRICS } from '../src/catalog.js';
import { generateDemoOrders } from '../src/demo/generate.js';
import { BIN, cliJson, startServer, type ServerProcess } from '../test/helpers/processes.js';

const int = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!(Number.isInteger(value) && value > 0)) throw new Error(`${name}: a whole number, got ${value}`);
  return value;
};
const ORDERS = int('BIG_ORDERS', 10_000_000);
const ASKS = int('BIG_ASKS', 20);
const ENGINE = process.env.BIG_ENGINE ?? 'postgres';
const PROFILE_DIR = process.env.BIG_PROFILE_DIR;
const CHUNK = 1_000_000;
const keep = process.env.BIG_KEEP_DIR ? path.resolve(process.env.BIG_KEEP_DIR) : undefined;
const dir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sm-big-'));
fs.mkdirSync(dir, { recursive: true });

const today = new Date().toISOString().slice(0, 10);
const from = new Date(Date.parse(`${today}T00:00:00Z`) - 729 * 86_400_000).toISOString().slice(0, 10);
const ALL = METRICS.map((m) => m.id).join(',');
const QUERIES = {
  Q1: `metrics=${ALL}&from=${from}&to=${today}&timezone=Europe%2FParis`,
  Q2: `metrics=${ALL}&dimensions=date&from=${from}&to=${today}&timezone=Europe%2FParis`,
};
type Query = keyof typeof QUERIES;
let asked = 0; // each question asks another limit: never the same cache key (C1)

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
const percentile = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (n: number) => (Number.isNaN(n) ? '–' : n >= 100 ? n.toFixed(0) : n.toFixed(1));
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const results: string[] = [];
/** A figure, printed now and again in the summary, with the load average. */
const figure = (line: string) => {
  const full = `${line}  [load ${loadavg()}]`;
  log(full);
  results.push(full);
};

// ---- the database, kept in BIG_KEEP_DIR ---------------------------------------------------------------
interface State {
  orders: number;
  slug: string;
  key: string;
  secret: string;
}
const stateFile = path.join(dir, 'bench-big.json');
let postgres: { url: string; stop(): void } | undefined;
let env: Record<string, string>;
if (ENGINE === 'postgres') {
  const scripts = fileURLToPath(new URL('../../scripts/', import.meta.url));
  const { startTempPostgres } = (await import(
    pathToFileURL(path.join(scripts, 'temp-postgres.js')).href
  )) as {
    startTempPostgres(options?: { dir?: string }): Promise<{ url: string; stop(): void } | undefined>;
  };
  postgres = await startTempPostgres({ dir: path.join(dir, 'postgres') });
  if (!postgres) throw new Error('no PostgreSQL server binaries (apt-get install postgresql)');
  env = { DATABASE_URL: postgres.url };
} else {
  env = { DATA_DIR: path.join(dir, 'embedded') };
}

function cliImport(slug: string, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'import', '--org', slug, file, '--json'], {
      env: { ...process.env, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`import: ${stderr}`))));
  });
}

/** Generates ORDERS orders a file of CHUNK at a time, each file imported while the next is written. */
async function importOrders(slug: string): Promise<void> {
  const started = performance.now();
  let importing: Promise<void> = Promise.resolve();
  let written = 0;
  let chunk = 0;
  let out: fs.WriteStream | undefined;
  const close = async (): Promise<void> => {
    if (!out) return;
    const stream = out;
    out = undefined;
    await new Promise((r) => stream.end(r));
    const file = stream.path as string;
    await importing;
    importing = cliImport(slug, file).then(() => {
      fs.rmSync(file);
      log(`imported ${file} (${written.toLocaleString('en')} written), load ${loadavg()}`);
    });
  };
  for (const order of generateDemoOrders({
    endDate: today,
    days: 1095,
    ordersPerDay: (ORDERS / 1095) * 1.1,
  })) {
    if (written === ORDERS) break;
    out ??= fs.createWriteStream(path.join(dir, `orders-${chunk++}.ndjson`));
    if (!out.write(`${JSON.stringify(order)}\n`)) await new Promise((r) => out!.once('drain', r));
    if (++written % CHUNK === 0) await close();
  }
  await close();
  await importing;
  figure(
    `import: ${written.toLocaleString('en')} orders generated and imported in ${((performance.now() - started) / 1000).toFixed(0)} s (${Math.round(written / ((performance.now() - started) / 1000)).toLocaleString('en')} orders/s)`,
  );
}

async function prepare(): Promise<State> {
  if (fs.existsSync(stateFile)) {
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as State;
    log(`using the ${state.orders.toLocaleString('en')} orders already imported in ${dir}`);
    return state;
  }
  const secret = crypto.randomBytes(32).toString('hex');
  const cli = cliJson({ ...env, SECRET_KEY: secret });
  await cli('migrate');
  const { slug } = (await cli('org', 'create', '--name', 'Big')) as { slug: string };
  await cli('subscription', 'set', '--org', slug, '--state', 'active');
  const key = String((await cli('key', 'create', '--org', slug, '--name', 'big')).key);
  env = { ...env, SECRET_KEY: secret };
  await importOrders(slug);
  const state = { orders: ORDERS, slug, key, secret };
  fs.writeFileSync(stateFile, JSON.stringify(state), { mode: 0o600 });
  return state;
}

// ---- questions ------------------------------------------------------------------------------------------
async function ask(
  server: ServerProcess,
  key: string,
  query: Query,
): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const response = await fetch(
    `${server.baseUrl}/api/reports/tabular?${QUERIES[query]}&limit=${100_000 - (asked++ % 90_000)}`,
    { headers: { authorization: `Bearer ${key}` } },
  );
  await response.arrayBuffer();
  return { ms: performance.now() - started, status: response.status };
}

/** The server's log lines of one snapshot event. */
const events = (server: ServerProcess, event: string): Record<string, unknown>[] =>
  server
    .stdout()
    .split('\n')
    .filter((line) => line.includes(`"event":"${event}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

async function waitFor(
  server: ServerProcess,
  event: string,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const started = performance.now();
  for (;;) {
    const [found] = events(server, event);
    if (found) return found;
    const failed = events(server, 'unsupported')[0] ?? events(server, 'failed')[0];
    if (failed) throw new Error(`snapshot: ${JSON.stringify(failed)}`);
    if (performance.now() - started > timeoutMs) throw new Error(`no "${event}" after ${timeoutMs} ms`);
    await sleep(200);
  }
}

const rss = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;

/** `node --cpu-prof` for the server when BIG_PROFILE_DIR is set (the profile is written as it stops). */
const profiled = (name: string): string[] =>
  PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${name}.cpuprofile`] : [];

function serverEnv(state: State): Record<string, string> {
  return {
    ...env,
    SECRET_KEY: state.secret,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000000',
    REPORT_SNAPSHOT_DIR: path.join(dir, 'snapshots'),
  };
}

async function warm(server: ServerProcess, key: string): Promise<void> {
  for (const query of ['Q1', 'Q2'] as const) {
    const times: number[] = [];
    const failed: number[] = [];
    for (let i = 0; i < ASKS; i++) {
      const answer = await ask(server, key, query);
      if (answer.status === 200) times.push(answer.ms);
      else failed.push(answer.status);
    }
    figure(
      `warm ${query}, uncached, ${ASKS} asked one after the other: p50 ${ms(percentile(times, 50))} ms, p95 ${ms(percentile(times, 95))} ms, max ${ms(Math.max(...times))} ms${failed.length ? `; not answered: ${failed.join(', ')}` : ''}`,
    );
  }
}

async function run(state: State): Promise<void> {
  const snapshots = path.join(dir, 'snapshots');
  fs.rmSync(snapshots, { recursive: true, force: true }); // the first build is measured each run
  let server = await startServer(serverEnv(state), 120_000, profiled('first'));
  const lastWords = (error: unknown) => {
    log(`the server's last output: ${server.output().slice(-4000)}`);
    throw error;
  };
  try {
    const asking = performance.now();
    const first = await ask(server, state.key, 'Q1'); // starts the build; SQL answers meanwhile
    figure(`first Q1 while the snapshot builds: HTTP ${first.status} in ${ms(first.ms)} ms`);
    const built = await waitFor(server, 'built', 1_800_000);
    figure(
      `first snapshot: built in ${ms(Number(built.ms))} ms (${((performance.now() - asking) / 1000).toFixed(1)} s after the first question), ${Number(built.orders).toLocaleString('en')} orders, ${mb(Number(built.bytes))}; server RSS ${mb(rss(server.pid))}`,
    );
    await waitFor(server, 'saved', 600_000);
    await warm(server, state.key);
    figure(`server RSS once warm: ${mb(rss(server.pid))}`);
  } catch (error) {
    lastWords(error);
  } finally {
    await server.stop();
  }
  const files = fs.readdirSync(snapshots).filter((f) => f.endsWith('.snapshot'));
  const fileBytes = files.reduce((sum, f) => sum + fs.statSync(path.join(snapshots, f)).size, 0);
  const origin = performance.now();
  server = await startServer(serverEnv(state), 120_000, profiled('restart'));
  try {
    figure(`restart: listening after ${ms(performance.now() - origin)} ms`);
    for (const query of ['Q1', 'Q2'] as const) {
      const answer = await ask(server, state.key, query);
      figure(
        `restart: first ${query} answered (HTTP ${answer.status}) ${ms(performance.now() - origin)} ms after the start, in ${ms(answer.ms)} ms`,
      );
    }
    const loaded = events(server, 'loaded')[0];
    figure(
      `snapshot file ${mb(fileBytes)}; ${loaded ? `read back and brought up to date in ${ms(Number(loaded.ms))} ms` : `not read back: ${events(server, 'built').length ? 'rebuilt' : 'no event'}`}; server RSS ${mb(rss(server.pid))}`,
    );
    await warm(server, state.key);
  } catch (error) {
    lastWords(error);
  } finally {
    await server.stop();
  }
}

log(
  `load average ${loadavg()}; ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${ENGINE}, ${ORDERS.toLocaleString('en')} orders, data in ${dir}`,
);
try {
  await run(await prepare());
} finally {
  postgres?.stop();
  if (!keep) fs.rmSync(dir, { recursive: true, force: true });
}
console.log(
  `\n${ENGINE}, ${ORDERS.toLocaleString('en')} orders over three years, ${os.cpus().length} cores:`,
);
for (const line of results) console.log(`  ${line}`);
