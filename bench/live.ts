// Reports while orders keep arriving (issue 19, item 7): one organization of N generated orders
// (three years) in each engine (embedded PGlite in a DATA_DIR, then a throwaway PostgreSQL
// server), the real `sales-metrics serve`, and uncached Q2 (all ten metrics by day over two
// years, Europe/Paris) asked through HTTP one after the other, a new `limit` each time so that the
// response cache (C1) never answers. Phases (LIVE_PHASES), each timed from outside:
// - quiet: nothing is imported meanwhile;
// - slow, fast: two arrival rates, 6 orders every 3 s (5 new, 1 refunded), then 20 orders a
//   second in batches of 1–5, each in two arrival modes (LIVE_ARRIVALS): cli, the real
//   `sales-metrics import` of a small file per batch; process, long-lived importers
//   (bench/live-importer.ts) through the same ingest code, as a store's orders arrive inside a
//   server. Importers (LIVE_IMPORTERS, default 2) each take every batch waiting: a batch that
//   arrives while they are busy waits, and its lag (arrival to the end of its import) says so;
// - trickle: LIVE_TRICKLE_S seconds at 20 orders a second (process), the server's RSS and
//   snapshot memory sampled every 30 s;
// - restart: `serve` stopped and started again on the same database, Q2 asked as soon as it
//   listens: when it listens, its first answer, and from when the p95 of the answers (over a
//   window of 10) stays within 2× of the quiet p95, all timed from the start of the process.
// Prints p50, p95, max and the share over 250 ms of each phase's answers, the imports' own
// latency, the CPU the server, the importers and the machine used, and the load average.
// Since issue 27 the orders carry the demo catalogues' lines (the live ones one line each, a refund
// refunding its lines), and LIVE_QUERY chooses the question: Q2 (default), L1 (`product` × the
// six line metrics over two years) or L2 (the top ten products by net sales); for L1 and L2 an
// in-memory scan of the generated lines (bench/reference-scan.ts) is timed, and the quiet phase's
// median printed as a ratio to it (issue 27's target: within 3×).
// Usage: npm run bench:live [-- --orders N]
//   LIVE_ORDERS (default 1000000; --orders wins), LIVE_QUERY (Q2, L1, L2), LIVE_QUIET_S (30), LIVE_PHASE_S (60, each live rate and mode),
//   LIVE_RESTART_S (60), LIVE_TRICKLE_S (0), LIVE_ENGINES (embedded,postgres), LIVE_PHASES
//   (quiet,slow,fast,trickle,restart), LIVE_ARRIVALS (cli,process), LIVE_IMPORTERS (2),
//   LIVE_PAUSE_MS (pause between two questions, 100), LIVE_KEEP (a folder keeping the generated
//   organizations between runs), LIVE_DATABASE_URL (an existing PostgreSQL database),
//   LIVE_SERVER_LOG, LIVE_SERVER_NODE_ARGS (e.g. --cpu-prof). A smoke run: LIVE_ORDERS=20000
//   LIVE_QUIET_S=5 LIVE_PHASE_S=8 LIVE_RESTART_S=8 npm run bench:live
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { METRICS } from '../src/catalog.js';
import { DEFAULT_DEMO_STORES, generateDemoOrders, type DemoOrder } from '../src/demo/generate.js';
import { BIN, cliJson, startServer, type ServerProcess } from '../test/helpers/processes.js';
import { ReferenceLines } from './reference-scan.js';

const int = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!(Number.isInteger(value) && value >= 0)) throw new Error(`${name}: a whole number, got ${value}`);
  return value;
};
const ordersFlag = process.argv.indexOf('--orders');
const ORDERS = ordersFlag >= 0 ? Number(process.argv[ordersFlag + 1]) : int('LIVE_ORDERS', 1_000_000);
if (!(Number.isInteger(ORDERS) && ORDERS >= 1000)) throw new Error('--orders: a whole number ≥ 1000');
const QUIET_S = int('LIVE_QUIET_S', 30);
const PHASE_S = int('LIVE_PHASE_S', 60);
const RESTART_S = int('LIVE_RESTART_S', 60);
const IMPORTERS = Math.max(1, int('LIVE_IMPORTERS', 2));
const PAUSE_MS = int('LIVE_PAUSE_MS', 100);
const ENGINES = (process.env.LIVE_ENGINES ?? 'embedded,postgres').split(',');
/** Which phases run: quiet, slow (6 orders / 3 s), fast (20 orders/s), trickle, restart. */
const PHASES = (process.env.LIVE_PHASES ?? 'quiet,slow,fast,trickle,restart').split(',');
/** How batches arrive: cli (a `sales-metrics import` process each), process (long-lived importers). */
const ARRIVALS = (process.env.LIVE_ARRIVALS ?? 'cli,process').split(',') as Arrival[];
/** The long trickle at 20 orders/s (long-lived importers) whose snapshot memory is sampled; 0: none. */
const TRICKLE_S = int('LIVE_TRICKLE_S', 0);
/** A folder where the generated organization is kept between runs and used again (skips the import). */
const KEEP = process.env.LIVE_KEEP;
/** An existing PostgreSQL database to use instead of a throwaway server (kept with LIVE_KEEP). */
const DATABASE_URL = process.env.LIVE_DATABASE_URL;
/** A file to write the first server's log to (its snapshot events: deltas, compactions). */
const SERVER_LOG = process.env.LIVE_SERVER_LOG;
/** Node options of the first server alone, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const SERVER_NODE_ARGS = (process.env.LIVE_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
type Arrival = 'cli' | 'process';
const SLOW_MS = 250;
const WINDOW = 10; // answers in the restart's sliding p95

const today = new Date().toISOString().slice(0, 10);
const from = new Date(Date.parse(`${today}T00:00:00Z`) - 729 * 86_400_000).toISOString().slice(0, 10);
const period = `from=${from}&to=${today}&timezone=Europe%2FParis`;
const LINE_METRICS = [
  'units_sold',
  'units_refunded',
  'product_gross_sales',
  'product_discounts',
  'product_refunds',
  'product_net_sales',
];
const QUERIES: Record<string, string> = {
  Q2: `metrics=${METRICS.filter((m) => m.grain === 'order')
    .map((m) => m.id)
    .join(',')}&dimensions=date&${period}`,
  L1: `metrics=${LINE_METRICS.join(',')}&dimensions=product&${period}`,
  L2: `dimensions=product&sort=-product_net_sales&${period}`,
};
const QUERY_NAME = process.env.LIVE_QUERY ?? 'Q2';
if (QUERIES[QUERY_NAME] === undefined)
  throw new Error(`LIVE_QUERY: one of ${Object.keys(QUERIES).join(', ')}`);
let asked = 0; // each question asks another limit: never the same cache key (C1)

/** The n-th permutation of the line metrics (Lehmer code): the top ten's cache key, its limit fixed. */
function metricsPermutation(n: number): string {
  const left = [...LINE_METRICS];
  const picked: string[] = [];
  for (let k = left.length; k > 0; k--) {
    picked.push(left.splice(n % k, 1)[0]!);
    n = Math.floor(n / k);
  }
  return picked.join(',');
}

/** The n-th question: another limit each time, or for the top ten another order of its metrics. */
function question(n: number): string {
  if (QUERY_NAME === 'L2') return `${QUERIES.L2}&metrics=${metricsPermutation(n % 720)}&limit=10`;
  return `${QUERIES[QUERY_NAME]}&limit=${100_000 - (n % 90_000)}`;
}

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const percentile = (values: number[], p: number) => {
  const s = sorted(values);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (n: number) => (Number.isNaN(n) ? '–' : n >= 100 ? n.toFixed(0) : n.toFixed(1));

// ---- data: the file, and recent orders kept to refund later -----------------------------------------
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-live-'));
const file = path.join(dir, 'orders.ndjson');
const RECENT = 20_000;
const recent: DemoOrder[] = [];
const referenceLines = new ReferenceLines(Math.ceil(ORDERS * 3));
/** Every engine's organization kept from an earlier run: no file to generate (refunds take live orders). */
const allKept = KEEP !== undefined && ENGINES.every((e) => fs.existsSync(path.join(KEEP, `${e}.json`)));
if (!allKept) {
  const started = performance.now();
  const out = fs.createWriteStream(file);
  let written = 0;
  for (const order of generateDemoOrders({
    endDate: today,
    days: 1095,
    ordersPerDay: (ORDERS / 1095) * 1.1,
    lines: true,
  })) {
    if (written === ORDERS) break;
    if (!out.write(`${JSON.stringify(order)}\n`)) await new Promise((r) => out.once('drain', r));
    written++;
    referenceLines.add(order);
    if (order.status === 'completed') {
      recent.push(order);
      if (recent.length > 2 * RECENT) recent.splice(0, RECENT);
    }
  }
  await new Promise((r) => out.end(r));
  log(
    `generated ${written.toLocaleString('en')} orders (${(fs.statSync(file).size / 2 ** 20).toFixed(0)} MB) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

/** The in-memory scan of the line question over the generated lines, median of 7 (ms); NaN for Q2. */
const scanMs = ((): number => {
  if (QUERY_NAME === 'Q2' || referenceLines.lines === 0) return NaN;
  const times: number[] = [];
  for (let run = 0; run < 7; run++) {
    const started = performance.now();
    if (QUERY_NAME === 'L1') referenceLines.byProduct(from, today);
    else referenceLines.topTen(from, today);
    times.push(performance.now() - started);
  }
  const scan = percentile(times, 50);
  log(
    `in-memory scan of ${QUERY_NAME} over ${referenceLines.lines.toLocaleString('en')} lines: ${ms(scan)} ms`,
  );
  return scan;
})();

let liveId = 0;
/** A new order, placed now. */
function newOrder(): DemoOrder {
  liveId++;
  return {
    store: DEFAULT_DEMO_STORES[liveId % DEFAULT_DEMO_STORES.length]!,
    id: `live-${process.pid}-${liveId}`,
    created_at: new Date().toISOString(),
    status: 'completed',
    billing_country: 'FR',
    customer_email: `live.${liveId % 500}@example.org`,
    items: 1 + (liveId % 3),
    total: '59.90',
    tax_total: '9.98',
    shipping_total: '4.90',
    fee_total: '0.00',
    refund_total: '0.00',
    refund_tax: '0.00',
    refund_shipping: '0.00',
    lines: [
      {
        line_id: '1',
        product_id: 'live',
        sku: 'LIVE-1',
        product_name: 'Article du jour',
        categories: ['Direct'],
        quantity: 1,
        subtotal: '45.02',
        discount: '0.00',
        refunded_quantity: 0,
        refunded_amount: '0.00',
      },
    ],
  };
}

/** One of the recent orders, refunded in full. */
/** Orders placed in this run, refunded once they are surely in (LIVE_KEEP: none generated). */
const placed: DemoOrder[] = [];

function refunded(): DemoOrder {
  const order = recent.pop() ?? (placed.length > 200 ? placed.shift() : undefined) ?? newOrder();
  return {
    ...order,
    status: 'refunded',
    refund_total: order.total,
    refund_tax: order.tax_total,
    refund_shipping: order.shipping_total,
    // L1: refunded whole, each line too.
    lines: order.lines?.map((line) => ({
      ...line,
      refunded_quantity: line.quantity,
      refunded_amount: (
        (Math.round(Number(line.subtotal) * 100) - Math.round(Number(line.discount) * 100)) /
        100
      ).toFixed(2),
    })),
  };
}

// ---- questions ---------------------------------------------------------------------------------------
interface Answer {
  /** ms since the phase's origin, at the answer. */
  at: number;
  ms: number;
  ok: boolean;
}

async function askQ2(server: ServerProcess, key: string): Promise<{ ms: number; ok: boolean }> {
  const started = performance.now();
  try {
    const response = await fetch(`${server.baseUrl}/api/reports/tabular?${question(asked++)}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    await response.arrayBuffer();
    return { ms: performance.now() - started, ok: response.status === 200 };
  } catch {
    return { ms: performance.now() - started, ok: false };
  }
}

/** Asks Q2 one question after the other (LIVE_PAUSE_MS between them) until `running()` is false. */
async function askWhile(server: ServerProcess, key: string, origin: number, running: () => boolean) {
  const answers: Answer[] = [];
  while (running()) {
    const answer = await askQ2(server, key);
    answers.push({ at: performance.now() - origin, ...answer });
    await sleep(PAUSE_MS);
  }
  return answers;
}

// ---- the trickle ---------------------------------------------------------------------------------------
interface Import {
  orders: number;
  ms: number;
  /** Each order's wait from its arrival to the end of its import. */
  lags: number[];
  /** The command failed (its orders are not in): counted, and the trickle goes on. */
  failed: boolean;
}

function cliImport(env: Record<string, string>, slug: string, path_: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'import', '--org', slug, path_, '--json'], {
      env: { ...process.env, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`import: ${stderr}`))));
  });
}

/** A long-lived importer (bench/live-importer.ts): one batch a line in, one answer a line out. */
function processImporter(env: Record<string, string>, slug: string) {
  const script = fileURLToPath(new URL('./live-importer.js', import.meta.url));
  const child = spawn(process.execPath, [script, slug], { env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = readline.createInterface({ input: child.stdout });
  const answers: ((line: string) => void)[] = [];
  lines.on('line', (line) => answers.shift()?.(line));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    async import(orders: DemoOrder[]): Promise<void> {
      const answer = new Promise<string>((resolve) => answers.push(resolve));
      child.stdin.write(`${JSON.stringify(orders)}\n`);
      const line = await Promise.race([answer, closed.then(() => `exited: ${stderr}`)]);
      if (line !== 'ok') throw new Error(line);
    },
    async close(): Promise<void> {
      child.stdin.end();
      await closed; // reaped: its CPU time is in the bench's cutime/cstime from here on
    },
  };
}

/**
 * Orders arriving in batches (`next` gives the next batch's size and the wait before it) for
 * `seconds`, imported by IMPORTERS workers, each a `sales-metrics import` process a batch (cli) or
 * one long-lived importer (process), each import noted in `imports` as it ends; resolves once every
 * order is in.
 */
async function trickle(
  env: Record<string, string>,
  slug: string,
  seconds: number,
  next: (n: number) => { size: number; waitMs: number },
  arrival: Arrival,
  imports: Import[],
): Promise<void> {
  const waiting: { order: DemoOrder; arrived: number }[] = [];
  let arriving = true;
  let files = 0;
  const worker = async () => {
    const importer = arrival === 'process' ? processImporter(env, slug) : undefined;
    while (arriving || waiting.length > 0) {
      if (waiting.length === 0) {
        await sleep(10);
        continue;
      }
      const batch = waiting.splice(0);
      const batchFile = path.join(dir, `live-${files++}.ndjson`);
      if (!importer) fs.writeFileSync(batchFile, batch.map((b) => `${JSON.stringify(b.order)}\n`).join(''));
      const started = performance.now();
      const error = await (
        importer ? importer.import(batch.map((b) => b.order)) : cliImport(env, slug, batchFile)
      ).then(
        () => undefined,
        (e: unknown) => String(e).slice(0, 300),
      );
      const ended = performance.now();
      if (!importer) fs.rmSync(batchFile);
      if (error !== undefined) log(`an import failed after ${ms(ended - started)} ms: ${error}`);
      imports.push({
        orders: batch.length,
        ms: ended - started,
        lags: batch.map((b) => ended - b.arrived),
        failed: error !== undefined,
      });
    }
    await importer?.close();
  };
  const workers = Array.from({ length: IMPORTERS }, worker);
  const end = performance.now() + seconds * 1000;
  for (let n = 0; performance.now() < end; n++) {
    const { size, waitMs } = next(n);
    const arrived = performance.now();
    for (let i = 0; i < size; i++)
      waiting.push({ order: n % 6 === 5 && i === 0 ? refunded() : newOrder(), arrived });
    placed.push(
      ...waiting
        .slice(-size)
        .map((w) => w.order)
        .filter((o) => o.status === 'completed'),
    );
    await sleep(waitMs);
  }
  arriving = false;
  await Promise.all(workers);
}

const fast = () => {
  const size = 1 + Math.floor(Math.random() * 5);
  return { size, waitMs: (size / 20) * 1000 };
};
const RATES = [
  { phase: 'slow', name: '6 orders / 3 s', next: () => ({ size: 6, waitMs: 3000 }) },
  { phase: 'fast', name: '20 orders/s, batches of 1–5', next: fast },
];

// ---- CPU and memory, from /proc ----------------------------------------------------------------------
const TICKS = 100; // USER_HZ on Linux
/** utime+stime (and cutime+cstime: children reaped) of a process, in seconds. */
function cpuOf(pid: number | 'self'): { own: number; children: number } {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ').map(Number);
  return { own: (fields[11]! + fields[12]!) / TICKS, children: (fields[13]! + fields[14]!) / TICKS };
}
/** Busy and total seconds of all cores together since boot. */
function machineCpu(): { busy: number; total: number } {
  const values = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const total = values.slice(0, 8).reduce((x, y) => x + y, 0) / TICKS;
  return { busy: total - (values[3]! + values[4]!) / TICKS, total };
}
const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
/** The snapshot memory the server last logged (its snapshot events carry their bytes). */
function snapshotMb(server: ServerProcess): number {
  const events = server
    .stdout()
    .split('\n')
    .filter((l) => l.includes('"report snapshot"'));
  for (const line of events.reverse()) {
    const bytes = (JSON.parse(line) as { bytes?: number }).bytes;
    if (bytes !== undefined) return bytes / 2 ** 20;
  }
  return NaN;
}

// ---- one engine ----------------------------------------------------------------------------------------
interface Phase {
  engine: string;
  name: string;
  answers: Answer[];
  imports: Import[];
  load: string;
  seconds: number;
  /** CPU seconds over the phase: the server, the importers (reaped children), every core together. */
  cpu: { server: number; importers: number; machineBusy: number; machineTotal: number };
  /** Over a long trickle: seconds, server RSS and snapshot memory (MB). */
  memory: { at: number; rss: number; snapshot: number }[];
}
interface Restart {
  engine: string;
  listeningMs: number;
  first?: Answer;
  /** ms after the start from which every window's p95 is within 2× of the quiet p95. */
  settledMs?: number;
  answers: Answer[];
}
const phases: Phase[] = [];
const restarts: Restart[] = [];

function progress(label: string, origin: number, answers: () => number, imports: () => number) {
  const timer = setInterval(
    () =>
      log(
        `${label}: ${((performance.now() - origin) / 1000).toFixed(0)} s, ${answers()} answers, ${imports()} imports, load ${loadavg()}`,
      ),
    10_000,
  );
  return () => clearInterval(timer);
}

async function measurePhase(
  engine: string,
  name: string,
  server: ServerProcess,
  key: string,
  during: (imports: Import[]) => Promise<void>,
  sampleEveryS = 0,
): Promise<Phase> {
  const before = loadavg();
  log(`[${engine}] ${name}…`);
  const origin = performance.now();
  const [server0, self0, machine0] = [cpuOf(server.pid), cpuOf('self'), machineCpu()];
  let running = true;
  const answers: Answer[] = [];
  const imports: Import[] = []; // filled as the phase's imports end, for the progress line too
  const memory: Phase['memory'] = [];
  const sample = () => {
    const at = (performance.now() - origin) / 1000;
    memory.push({ at, rss: rssMb(server.pid), snapshot: snapshotMb(server) });
    const last = memory.at(-1)!;
    log(
      `[${engine}] ${name}: ${at.toFixed(0)} s, server RSS ${last.rss.toFixed(0)} MB, snapshot ${last.snapshot.toFixed(1)} MB`,
    );
  };
  const sampler = sampleEveryS > 0 ? setInterval(sample, sampleEveryS * 1000) : undefined;
  if (sampler) sample();
  const stop = progress(
    `[${engine}] ${name}`,
    origin,
    () => answers.length,
    () => imports.length,
  );
  const asking = (async () => {
    while (running) {
      const answer = await askQ2(server, key);
      answers.push({ at: performance.now() - origin, ...answer });
      await sleep(PAUSE_MS);
    }
  })();
  try {
    await during(imports);
  } finally {
    running = false;
    await asking;
    stop();
    if (sampler) {
      clearInterval(sampler);
      sample();
    }
  }
  const [server1, self1, machine1] = [cpuOf(server.pid), cpuOf('self'), machineCpu()];
  const phase: Phase = {
    engine,
    name,
    answers,
    imports,
    load: `${before} → ${loadavg()}`,
    seconds: (performance.now() - origin) / 1000,
    cpu: {
      server: server1.own - server0.own,
      importers: self1.children - self0.children,
      machineBusy: machine1.busy - machine0.busy,
      machineTotal: machine1.total - machine0.total,
    },
    memory,
  };
  log(`[${engine}] ${name}: ${summary(phase)}`);
  phases.push(phase);
  return phase;
}

function summary(phase: Phase): string {
  const times = phase.answers.map((a) => a.ms);
  return `p50 ${ms(percentile(times, 50))} ms, p95 ${ms(percentile(times, 95))} ms, max ${ms(Math.max(...times))} ms, ${times.length} answers`;
}

/** Triggers the first snapshot with a one-day question, then waits until Q2 answers fast 5 times running. */
async function warmUp(engine: string, server: ServerProcess, key: string): Promise<void> {
  const started = performance.now();
  await fetch(
    `${server.baseUrl}/api/reports/tabular?metrics=orders&from=${today}&to=${today}&timezone=UTC&limit=1`,
    {
      headers: { authorization: `Bearer ${key}` },
    },
  ).then((r) => r.arrayBuffer());
  const ready = () => /"event":"(built|loaded)"/.test(server.stdout());
  while (!ready() && performance.now() - started < 300_000) await sleep(500);
  let fast = 0;
  while (fast < 5 && performance.now() - started < 600_000) {
    // L1 and L2 (section 15): five answers, whatever their time.
    fast = (await askQ2(server, key)).ms < 500 || QUERY_NAME !== 'Q2' ? fast + 1 : 0;
  }
  log(`[${engine}] warm after ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

async function measureRestart(
  engine: string,
  serverEnv: Record<string, string>,
  key: string,
  warmP95: number,
): Promise<ServerProcess> {
  log(`[${engine}] restart…`);
  const origin = performance.now();
  const server = await startServer(serverEnv);
  const listeningMs = performance.now() - origin;
  // Asked for LIVE_RESTART_S once it listens (the embedded engine's start alone takes seconds).
  const until = performance.now() + RESTART_S * 1000;
  const answers = await askWhile(server, key, origin, () => performance.now() < until);
  const restart: Restart = { engine, listeningMs, answers, first: answers.find((a) => a.ok) };
  // The first answer from which every window of WINDOW answers has its p95 within 2× of warm.
  for (let i = answers.length - WINDOW; i >= 0; i--) {
    const window = answers.slice(i, i + WINDOW);
    if (
      !window.every((a) => a.ok) ||
      percentile(
        window.map((a) => a.ms),
        95,
      ) >
        2 * warmP95
    )
      break;
    restart.settledMs = answers[i]!.at;
  }
  restarts.push(restart);
  log(
    `[${engine}] restart: listening after ${ms(listeningMs)} ms, first ${QUERY_NAME} ${restart.first ? `at ${ms(restart.first.at)} ms (${ms(restart.first.ms)} ms)` : 'never'}, ` +
      `p95 within 2× of warm after ${restart.settledMs === undefined ? 'never' : `${ms(restart.settledMs)} ms`}`,
  );
  return server;
}

/** The organization to measure: generated and imported, or kept from an earlier run (LIVE_KEEP). */
async function prepare(engine: string, env: Record<string, string>): Promise<{ slug: string; key: string }> {
  const kept = KEEP ? path.join(KEEP, `${engine}.json`) : undefined;
  if (kept && fs.existsSync(kept))
    return JSON.parse(fs.readFileSync(kept, 'utf8')) as { slug: string; key: string };
  const cli = cliJson(env);
  await cli('migrate');
  const { slug } = (await cli('org', 'create', '--name', 'Live')) as { slug: string };
  await cli('subscription', 'set', '--org', slug, '--state', 'active');
  const key = String((await cli('key', 'create', '--org', slug, '--name', 'live')).key);
  log(`[${engine}] importing ${ORDERS.toLocaleString('en')} orders…`);
  const started = performance.now();
  await cli('import', '--org', slug, file);
  log(`[${engine}] imported in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (kept) fs.writeFileSync(kept, JSON.stringify({ slug, key }));
  return { slug, key };
}

async function bench(engine: string, env: Record<string, string>): Promise<void> {
  const { slug, key } = await prepare(engine, env);
  // debug: the server logs each delta with the snapshot's bytes (the long trickle's memory).
  // RESPONSE_CACHE_MB: every question asks another limit, so the response cache (C1) keeps each
  // answer (about 150 KB) until its 256 MB are full: over a long trickle, the server's RSS would
  // grow by what the cache holds, not by what the engine does (LIVE_RESPONSE_CACHE_MB, 16).
  const serverEnv = {
    ...env,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'debug',
    RATE_LIMIT_MAX: '1000000000',
    RESPONSE_CACHE_MB: String(int('LIVE_RESPONSE_CACHE_MB', 16)),
  };
  let server = await startServer(serverEnv, undefined, SERVER_NODE_ARGS);
  try {
    await warmUp(engine, server, key);
    const quiet = PHASES.includes('quiet')
      ? await measurePhase(engine, 'quiet', server, key, async () => {
          await sleep(QUIET_S * 1000);
        })
      : undefined;
    for (const rate of RATES.filter((r) => PHASES.includes(r.phase)))
      for (const arrival of ARRIVALS)
        await measurePhase(engine, `live, ${rate.name} (${arrival})`, server, key, (imports) =>
          trickle(env, slug, PHASE_S, rate.next, arrival, imports),
        );
    if (PHASES.includes('trickle') && TRICKLE_S > 0)
      await measurePhase(
        engine,
        `trickle, 20 orders/s for ${TRICKLE_S} s (process)`,
        server,
        key,
        (imports) => trickle(env, slug, TRICKLE_S, fast, 'process', imports),
        30,
      );
    await server.stop();
    if (SERVER_LOG) fs.writeFileSync(`${SERVER_LOG}.${engine}`, server.stdout());
    if (PHASES.includes('restart') && quiet) {
      const warmP95 = percentile(
        quiet.answers.map((a) => a.ms),
        95,
      );
      server = await measureRestart(engine, serverEnv, key, warmP95);
    }
  } finally {
    await server.stop();
  }
}

// ---- run -------------------------------------------------------------------------------------------------
log(
  `load average ${loadavg()}; ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`,
);
/** A secret key kept beside the kept organization (customer hashes depend on it). */
function secretKey(): string {
  const kept = KEEP ? path.join(KEEP, 'postgres-secret') : undefined;
  if (kept && fs.existsSync(kept)) return fs.readFileSync(kept, 'utf8');
  const secret = crypto.randomBytes(32).toString('hex');
  if (kept) fs.writeFileSync(kept, secret);
  return secret;
}

try {
  if (KEEP) fs.mkdirSync(KEEP, { recursive: true });
  if (ENGINES.includes('embedded'))
    await bench('embedded', { DATA_DIR: path.join(KEEP ?? dir, 'embedded-data') });
  if (ENGINES.includes('postgres') && DATABASE_URL) {
    await bench('postgres', { DATABASE_URL, SECRET_KEY: secretKey() });
  } else if (ENGINES.includes('postgres')) {
    const scripts = fileURLToPath(new URL('../../scripts/', import.meta.url));
    const { startTempPostgres } = (await import(
      pathToFileURL(path.join(scripts, 'temp-postgres.js')).href
    )) as {
      startTempPostgres(): Promise<{ url: string; stop(): void } | undefined>;
    };
    const postgres = await startTempPostgres();
    if (!postgres) throw new Error('no PostgreSQL server binaries (apt-get install postgresql)');
    try {
      await bench('postgres', { DATABASE_URL: postgres.url, SECRET_KEY: secretKey() });
    } finally {
      postgres.stop();
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

// ---- figures ----------------------------------------------------------------------------------------------
console.log(
  `\n${ORDERS.toLocaleString('en')} orders over three years, uncached ${QUERY_NAME} (${QUERY_NAME === 'Q2' ? '10 metrics by day' : QUERY_NAME === 'L1' ? 'product × 6 line metrics' : 'top ten products by net sales'}, two years, Europe/Paris) ` +
    `one after the other, ${PAUSE_MS} ms apart; quiet ${QUIET_S} s, each rate ${PHASE_S} s, ${IMPORTERS} importers\n`,
);
const table = (header: string[], rows: string[][]) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const line of [header, widths.map((w) => '-'.repeat(w)), ...rows])
    console.log(
      line.map((cell, i) => (i > 1 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  '),
    );
  console.log('');
};
if (!Number.isNaN(scanMs))
  for (const p of phases.filter((q) => q.name === 'quiet'))
    console.log(
      `${p.engine}: ${QUERY_NAME} quiet p50 ${ms(
        percentile(
          p.answers.map((a) => a.ms),
          50,
        ),
      )} ms = ` +
        `${(
          percentile(
            p.answers.map((a) => a.ms),
            50,
          ) / scanMs
        ).toFixed(1)}× the in-memory scan (${ms(scanMs)} ms)\n`,
    );
table(
  [
    'engine',
    'phase',
    'answers',
    'p50 ms',
    'p95 ms',
    'max ms',
    `> ${SLOW_MS} ms`,
    'failed',
    'p95 / quiet p95',
    'load average',
  ],
  phases.map((p) => {
    const times = p.answers.map((a) => a.ms);
    const quiet = phases.find((q) => q.engine === p.engine && q.name === 'quiet');
    const quietP95 = percentile(quiet?.answers.map((a) => a.ms) ?? [], 95);
    return [
      p.engine,
      p.name,
      String(times.length),
      ms(percentile(times, 50)),
      ms(percentile(times, 95)),
      ms(Math.max(...times)),
      `${((100 * times.filter((t) => t > SLOW_MS).length) / Math.max(times.length, 1)).toFixed(0)} %`,
      String(p.answers.filter((a) => !a.ok).length),
      `${(percentile(times, 95) / quietP95).toFixed(1)}×`,
      p.load,
    ];
  }),
);
table(
  [
    'engine',
    'rate',
    'imports',
    'failed',
    'orders each',
    'import p50 ms',
    'p95 ms',
    'max ms',
    'order lag p95 ms',
    'lag max ms',
  ],
  phases
    .filter((p) => p.imports.length > 0)
    .map((p) => {
      const times = p.imports.map((i) => i.ms);
      const lags = p.imports.flatMap((i) => i.lags);
      return [
        p.engine,
        p.name.replace('live, ', ''),
        String(p.imports.length),
        String(p.imports.filter((i) => i.failed).length),
        (lags.length / p.imports.length).toFixed(1),
        ms(percentile(times, 50)),
        ms(percentile(times, 95)),
        ms(Math.max(...times)),
        ms(percentile(lags, 95)),
        ms(Math.max(...lags)),
      ];
    }),
);
// Who used the machine (2 cores: 200 % at most): slow reports beside a full machine are not the engine's.
const share = (seconds: number, phase: Phase) => `${((100 * seconds) / phase.seconds).toFixed(0)} %`;
table(
  ['engine', 'phase', 'seconds', 'server CPU', 'importers CPU', 'machine busy', 'load average'],
  phases.map((p) => [
    p.engine,
    p.name,
    p.seconds.toFixed(0),
    share(p.cpu.server, p),
    share(p.cpu.importers, p),
    `${((100 * p.cpu.machineBusy) / Math.max(p.cpu.machineTotal, 1)).toFixed(0)} % of ${os.cpus().length} cores`,
    p.load,
  ]),
);
for (const p of phases.filter((q) => q.memory.length > 0))
  table(
    ['engine', 'phase', 'at s', 'server RSS MB', 'snapshot MB'],
    p.memory.map((m) => [p.engine, p.name, m.at.toFixed(0), m.rss.toFixed(0), m.snapshot.toFixed(1)]),
  );
table(
  [
    'engine',
    'restart',
    'listening',
    `first ${QUERY_NAME} at`,
    'its latency',
    'p95 ≤ 2× warm from',
    'answers',
  ],
  restarts.map((r) => [
    r.engine,
    'serve started again',
    `${ms(r.listeningMs)} ms`,
    r.first ? `${ms(r.first.at)} ms` : 'never',
    r.first ? `${ms(r.first.ms)} ms` : '–',
    r.settledMs === undefined ? 'never' : `${ms(r.settledMs)} ms`,
    String(r.answers.length),
  ]),
);
