// Reports at user scale (issue 9): generates N orders over three years, imports them through the
// CLI into each engine (embedded PGlite, then a throwaway PostgreSQL 15 server), times the
// snapshot's build on a server with the columnar engine (with the server's RSS and its /healthz
// latency meanwhile), and measures the four reference queries through HTTP on that server and on
// one with the SQL engine alone, comparing every answer between the two byte for byte. For Q1, Q2
// and Q4, an in-memory scan of the same orders in this process computes the same answer
// (reference-scan.ts): its time, in the same run, is the physical floor the columnar engine is
// held to (issue 9's target: within 2× of it), and its figures must be the engines', to the cent.
// Since issue 27 the orders carry the demo catalogues' lines (refunds, multi-category products), and
// two line queries join them: L1, `product` × the six line metrics over two years, and L2, the
// top ten products by net sales; the scan of the same lines is their floor (issue 27: within 3×).
// Usage: npm run bench:reports [-- --orders N] [--queries L1,L2] [--engines embedded,postgres]
// (N defaults to 1000000; a bare N works too; all six queries and both engines by default).
// REPORTS_SERVER_NODE_ARGS: node options of the columnar servers (the first one and the one
// restarted), e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof --trace-gc`; REPORTS_SERVER_LOG: a path
// prefix where their output is written (`<prefix>-embedded-first.log`, `…-restarted.log`).
// `--keep DIR` (embedded only): the database is kept in DIR and used again by the next run with
// the same `--orders` on the same day (no import: the same generated orders); the snapshot is
// built again each run. `--no-sql`: the SQL engine's server is left out. Each answer's CPU time on the server's main thread and its time waiting
// for a CPU (/proc/PID/schedstat) are printed beside it: on a shared machine, a slow answer is one
// or the other.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { METRICS } from '../src/catalog.js';
import { generateDemoOrders } from '../src/demo/generate.js';
import { cliJson, type ServerProcess, startServer } from '../test/helpers/processes.js';
import {
  localDays,
  ReferenceLines,
  ReferenceOrders,
  type ReferenceLineRow,
  type ReferenceRow,
} from './reference-scan.js';

const ordersFlag = process.argv.indexOf('--orders');
const target = Number(
  (ordersFlag >= 0 ? process.argv[ordersFlag + 1] : process.argv.find((a) => /^\d+$/.test(a))) ?? 1_000_000,
);
if (!(Number.isInteger(target) && target >= 1000))
  throw new Error('usage: bench:reports [--orders N ≥ 1000] [--queries L1,L2] [--engines embedded,postgres]');
/** `--queries L1,L2`: only those (the six by default); `--engines postgres`: only that one. */
const listFlag = (flag: string): string[] | undefined => {
  const at = process.argv.indexOf(flag);
  return at >= 0 ? (process.argv[at + 1] ?? '').split(',') : undefined;
};
const onlyQueries = listFlag('--queries');
const engines = listFlag('--engines') ?? ['embedded', 'postgres'];
/** `--no-sql`: the SQL engine's server is not asked (its L1 takes some 40 s at 1M orders embedded). */
const withSql = !process.argv.includes('--no-sql');
const keepFlag = process.argv.indexOf('--keep');
/** A folder keeping the embedded database between runs (--keep DIR). */
const KEEP = keepFlag >= 0 ? path.resolve(process.argv[keepFlag + 1] ?? '') : undefined;
/** Node options of the columnar servers (profiling: --cpu-prof, --trace-gc). */
const SERVER_NODE_ARGS = (process.env.REPORTS_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** Writes a columnar server's output (its snapshot events, --trace-gc's lines) when asked. */
function keepLog(server: ServerProcess, engine: string, which: string): void {
  const prefix = process.env.REPORTS_SERVER_LOG;
  if (prefix) fs.writeFileSync(`${prefix}-${engine}-${which}.log`, server.output());
}

const DAYS = 1095;
const ZONE = 'Europe/Paris';
const SQL_RUNS = 3;
const COLUMNAR_RUNS = 7;
const today = new Date().toISOString().slice(0, 10);
const from = new Date(Date.parse(`${today}T00:00:00Z`) - 729 * 86_400_000).toISOString().slice(0, 10);
// The reference's ten (section 15 added line metrics to the catalogue; L1 and L2 ask for those).
const ALL = METRICS.filter((m) => m.grain === 'order')
  .map((m) => m.id)
  .join(',');
const LINE_METRICS = [
  'units_sold',
  'units_refunded',
  'product_gross_sales',
  'product_discounts',
  'product_refunds',
  'product_net_sales',
];
const period = `from=${from}&to=${today}&timezone=${encodeURIComponent(ZONE)}`;
const QUERIES: Record<string, string> = {
  Q1: `metrics=${ALL}&${period}`,
  Q2: `metrics=${ALL}&dimensions=date&${period}`,
  Q3: `metrics=${ALL}&dimensions=date,store,country,customer_type,status&${period}`,
  Q4: `metrics=orders,gross_sales&dimensions=date&${period}`,
  L1: `metrics=${LINE_METRICS}&dimensions=product&${period}`,
  L2: `metrics=${LINE_METRICS}&dimensions=product&sort=-product_net_sales&${period}`,
};
for (const name of Object.keys(QUERIES)) if (onlyQueries && !onlyQueries.includes(name)) delete QUERIES[name];
/** L2 is a top ten: its `limit` stays 10 (the cache is kept out by the order of its metrics instead). */
const TOP_TEN = 'L2';
// Each run on a server asks with another `limit`, so the response cache (C1), keyed on the resolved
// query, never answers; run n asks the same on both servers, so their answers compare.
const limitFor = (run: number) => 100_000 - run;
/** Run n's query string: L2 keeps its limit of 10 and rotates its metrics' order instead (C1's key). */
function asked(name: string, run: number): string {
  if (name !== TOP_TEN) return `${QUERIES[name]}&limit=${limitFor(run)}`;
  const metrics = metricsPermutation(run).join(',');
  return `${QUERIES[name]!.replace(`metrics=${LINE_METRICS.join(',')}`, `metrics=${metrics}`)}&limit=10`;
}

/**
 * The run-th of the 720 orders of the line metrics (Lehmer code). A rotation has only six: the
 * seventh run on a server asked the first one's question again and the cache (C1) answered it.
 */
function metricsPermutation(run: number): string[] {
  const left = [...LINE_METRICS];
  const picked: string[] = [];
  for (let k = left.length, n = run % 720; k > 0; n = Math.floor(n / k), k--)
    picked.push(left.splice(n % k, 1)[0]!);
  return picked;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
const rss = () => Math.round(process.memoryUsage().rss / 2 ** 20);

// ---- data: one NDJSON file, and the same orders as columns for the in-memory scan ----------------
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-reports-'));
const file = path.join(dir, 'orders.ndjson');
const perDay = target / DAYS / 1.0; // the generator's growth and seasonality average about 1
const reference = new ReferenceOrders(Math.ceil(target * 1.2));
const referenceLines = new ReferenceLines(Math.ceil(target * 3));
{
  const out = fs.createWriteStream(file);
  const started = performance.now();
  for (const order of generateDemoOrders({ endDate: today, days: DAYS, ordersPerDay: perDay, lines: true })) {
    if (!out.write(`${JSON.stringify(order)}\n`)) await new Promise((r) => out.once('drain', r));
    reference.add(order);
    referenceLines.add(order);
  }
  await new Promise((r) => out.end(r));
  reference.sortByTime();
  console.log(
    `Generated ${reference.orders.toLocaleString('en')} orders over ${DAYS} days, ${reference.customerCount.toLocaleString('en')} customers ` +
      `and ${referenceLines.lines.toLocaleString('en')} lines of ${referenceLines.productCount} products ` +
      `(${(fs.statSync(file).size / 2 ** 20).toFixed(0)} MB NDJSON) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

// The in-memory scan of each query (Q3 has none: its 100,000 rows are the serialization's test).
const days = localDays(from, today, ZONE);
const SCANS: Record<string, () => ReferenceRow[] | ReferenceLineRow[]> = {
  Q1: () => reference.scan(from, today, undefined),
  Q2: () => reference.scan(from, today, days),
  Q4: () => reference.scan(from, today, days, true),
  L1: () => referenceLines.byProduct(from, today),
  L2: () => referenceLines.topTen(from, today),
};
/** A thread's CPU time and time waiting for a CPU so far, in ms (/proc/…/schedstat, in ns). */
function threadSchedule(file: string): Schedule {
  const [cpu, waiting] = fs.readFileSync(file, 'utf8').split(' ').map(Number);
  return { cpu: (cpu ?? NaN) / 1e6, waiting: (waiting ?? NaN) / 1e6 };
}

/** The scans' median time, and their median CPU time (the load's waits left out). */
const scanned = new Map<string, { ms: number; cpu: number; rows: (ReferenceRow | ReferenceLineRow)[] }>();
for (const [name, scan] of Object.entries(SCANS)) {
  if (!(name in QUERIES)) continue;
  const times: number[] = [];
  const cpu: number[] = [];
  let rows: (ReferenceRow | ReferenceLineRow)[] = [];
  for (let run = 0; run < 7; run++) {
    // The process's CPU time (getrusage), exact to the microsecond: a running thread's own
    // schedstat is only brought up to date at the scheduler's tick (0 for a scan of 1 ms).
    const before = process.cpuUsage();
    const started = performance.now();
    rows = scan();
    times.push(performance.now() - started);
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 1000);
  }
  scanned.set(name, { ms: median(times), cpu: median(cpu), rows });
}
console.log(
  `In-memory scan of the same answers, this process: ${[...scanned].map(([name, s]) => `${name} ${ms(s.ms)} ms (CPU ${ms(s.cpu)} ms)`).join(', ')}\n`,
);

/**
 * Whether an answer has exactly the reference's rows and figures (the columns the query asks for).
 * L1's rows are matched by product (T3's order of names is the engines' to keep); the others' in order.
 */
function agreesWithScan(name: string, body: string): boolean | undefined {
  const expected = scanned.get(name)?.rows as Record<string, unknown>[] | undefined;
  if (!expected) return undefined;
  let rows = (JSON.parse(body) as { rows: Record<string, unknown>[] }).rows;
  if (name === 'L1') {
    const byName = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      String(a.product) < String(b.product) ? -1 : String(a.product) > String(b.product) ? 1 : 0;
    rows = [...rows].sort(byName);
    expected.sort(byName);
  }
  return (
    rows.length === expected.length &&
    rows.every((row, r) => Object.entries(row).every(([column, value]) => expected[r]![column] === value))
  );
}

// ---- engines ----------------------------------------------------------------------------------------
interface TempPostgres {
  url: string;
  stop(): void;
}
const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
const { startTempPostgres } = (await import(pathToFileURL(path.join(SCRIPTS, 'temp-postgres.js')).href)) as {
  startTempPostgres(): Promise<TempPostgres | undefined>;
};

interface Build {
  ms: number;
  bytes: number;
  orders: number;
  /** The server's RSS in MB before the build, at its highest during it, and 2 s after it. */
  rss: { before: number; peak: number; after: number };
  /** /healthz latencies in ms while it builds (the server's event loop). */
  healthz: { p50: number; p99: number; max: number };
}

interface Measured {
  engine: string;
  importSeconds: number;
  importRate: number;
  build?: Build;
  rows: {
    name: string;
    columnar: number;
    /** The server main thread's CPU time per answer, median (its waits for a CPU left out). */
    columnarCpu: number;
    sql: number;
    cachedRps: number;
    rowsCount: number;
    same: boolean;
    /** Whether the columnar answer has the scan's figures (undefined: no scan of this query). */
    asScan: boolean | undefined;
    /** Right after a restart of the columnar server (its snapshot read from its file): the first answer, then the median. */
    restartFirst: number;
    restart: number;
    restartCpu: number;
  }[];
}

async function ask(server: ServerProcess, key: string, query: string): Promise<{ ms: number; body: string }> {
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}/api/reports/tabular?${query}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const body = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${body.slice(0, 300)}`);
  return { ms: elapsed, body };
}

/**
 * An answer, asking again each second while the server says 503 (its snapshot being built or
 * read, or the embedded database's one session held by the build): the wait counts in the time.
 */
async function askPatiently(
  server: ServerProcess,
  key: string,
  query: string,
): Promise<{ ms: number; body: string }> {
  const started = performance.now();
  for (;;) {
    const response = await fetch(`${server.baseUrl}/api/reports/tabular?${query}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const body = await response.text();
    if (response.status === 200) return { ms: performance.now() - started, body };
    if (response.status !== 503 || performance.now() - started > 600_000)
      throw new Error(`${query}: ${response.status} ${body.slice(0, 300)}`);
    const code = (JSON.parse(body) as { code?: string }).code;
    // At most a second: SNAPSHOT_BUILDING's Retry-After was seen at 309 s for a build of 14 s.
    console.log(`  (503 ${code}, Retry-After ${response.headers.get('retry-after')} s: asked again in 1 s)`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The server's resident memory in MB (/proc/PID/status). */
function serverRssMb(server: ServerProcess): number {
  const status = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ??
  NaN;

/**
 * Starts the snapshot build and waits for it, probing /healthz and the server's RSS every 20 ms
 * meanwhile. The request that starts it asks for one day, which SQL answers at once: a heavy
 * report answered by SQL during the build would hold the embedded database's one session and
 * delay the build by its own length (Q1 takes about 8 s there).
 */
async function timeBuild(server: ServerProcess, key: string): Promise<Build> {
  const rssBefore = serverRssMb(server);
  const latencies: number[] = [];
  let rssPeak = rssBefore;
  let building = true;
  const probes = (async () => {
    while (building) {
      const started = performance.now();
      await (await fetch(`${server.baseUrl}/healthz`)).arrayBuffer();
      latencies.push(performance.now() - started);
      rssPeak = Math.max(rssPeak, serverRssMb(server));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  let built: Awaited<ReturnType<typeof waitForSnapshot>>;
  try {
    await askPatiently(server, key, `metrics=orders&from=${today}&to=${today}&timezone=UTC&limit=1`);
    built = await waitForSnapshot(server);
  } finally {
    building = false;
    await probes;
  }
  await new Promise((r) => setTimeout(r, 2000)); // the garbage collector's turn
  return {
    ...built,
    rss: { before: rssBefore, peak: rssPeak, after: serverRssMb(server) },
    healthz: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies) },
  };
}

async function waitForSnapshot(server: ServerProcess, timeoutMs = 600_000) {
  const started = Date.now();
  for (;;) {
    for (const line of server.stdout().split('\n')) {
      if (!line.includes('"report snapshot"')) continue;
      const event = JSON.parse(line) as {
        event: string;
        ms: number;
        bytes: number;
        orders: number;
        reason?: string;
      };
      if (event.event === 'built' || event.event === 'loaded')
        return { ms: event.ms, bytes: event.bytes, orders: event.orders };
      if (event.event === 'unsupported') throw new Error(`snapshot unsupported: ${event.reason}`);
    }
    if (Date.now() - started > timeoutMs) throw new Error('no snapshot built');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function cachedRps(server: ServerProcess, key: string, query: string): Promise<number> {
  await ask(server, key, query);
  const result = await autocannon({
    url: `${server.baseUrl}/api/reports/tabular?${query}`,
    connections: 16,
    duration: 5,
    headers: { authorization: `Bearer ${key}` },
  });
  if (result.non2xx || result.errors)
    throw new Error(`cached run: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.total / result.duration;
}

/** Answers' times, and the server main thread's CPU time and wait for a CPU during each. */
function printSchedule(engine: string, name: string, which: string, times: number[], cpu: Schedule[]): void {
  console.log(
    `[${engine}] ${name} ${which}: ${times.map(ms).join(', ')} ms; main thread on a CPU ` +
      `${cpu.map((c) => ms(c.cpu)).join(', ')} ms, waiting for one ${cpu.map((c) => ms(c.waiting)).join(', ')} ms`,
  );
}

interface Imported {
  key: string;
  importSeconds: number;
  orders: number;
  day: string;
}

/** The organization, imported, or as a run with the same orders kept it (--keep, embedded). */
async function imported(engine: string, env: Record<string, string>, kept?: string): Promise<Imported> {
  if (kept && fs.existsSync(kept)) {
    const earlier = JSON.parse(fs.readFileSync(kept, 'utf8')) as Imported;
    if (earlier.orders === reference.orders && earlier.day === today) {
      console.log(`[${engine}] the organization kept in ${path.dirname(kept)}: not imported again`);
      return earlier;
    }
    throw new Error(`--keep: ${kept} holds another run's orders; remove the folder`);
  }
  const cli = cliJson(env);
  await cli('migrate');
  await cli('org', 'create', '--name', 'Bench');
  await cli('subscription', 'set', '--org', 'bench', '--state', 'active');
  const key = String((await cli('key', 'create', '--org', 'bench', '--name', 'bench')).key);
  process.stdout.write(`[${engine}] importing… `);
  const started = performance.now();
  await cli('import', '--org', 'bench', file);
  const importSeconds = (performance.now() - started) / 1000;
  console.log(`${importSeconds.toFixed(0)} s`);
  const done = { key, importSeconds, orders: reference.orders, day: today };
  if (kept) fs.writeFileSync(kept, JSON.stringify(done));
  return done;
}

interface Schedule {
  cpu: number;
  waiting: number;
}

/** The server's main thread: CPU time and time waiting for a CPU so far. */
const schedule = (server: ServerProcess): Schedule => threadSchedule(`/proc/${server.pid}/schedstat`);

const spent = (before: Schedule, after: Schedule): Schedule => ({
  cpu: after.cpu - before.cpu,
  waiting: after.waiting - before.waiting,
});

async function bench(
  engine: 'embedded' | 'postgres',
  env: Record<string, string>,
  snapshots = path.join(dir, `snapshots-${engine}`),
  kept?: string,
): Promise<Measured> {
  const { key, importSeconds } = await imported(engine, env, kept);
  fs.rmSync(snapshots, { recursive: true, force: true }); // the first server builds its snapshot
  const measured: Measured = {
    engine,
    importSeconds,
    importRate: reference.orders / importSeconds,
    rows: [],
  };
  const serverEnv = {
    ...env,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000000',
    REPORT_SNAPSHOT_DIR: snapshots,
  };

  const answers = new Map<string, string>();
  const columnar = await startServer(
    { ...serverEnv, REPORT_ENGINE: 'columnar' },
    undefined,
    SERVER_NODE_ARGS,
  );
  try {
    measured.build = await timeBuild(columnar, key);
    console.log(`[${engine}] snapshot: ${JSON.stringify(measured.build)}`);
    for (const name of Object.keys(QUERIES)) {
      const times: number[] = [];
      const cpu: Schedule[] = [];
      for (let run = 0; run < COLUMNAR_RUNS; run++) {
        const before = schedule(columnar);
        const answer = await ask(columnar, key, asked(name, run));
        cpu.push(spent(before, schedule(columnar)));
        times.push(answer.ms);
        if (run === 0) answers.set(name, answer.body);
      }
      printSchedule(engine, name, 'first server', times, cpu);
      const rps = await cachedRps(columnar, key, asked(name, 0));
      measured.rows.push({
        name,
        columnar: median(times),
        columnarCpu: median(cpu.map((c) => c.cpu)),
        sql: NaN,
        cachedRps: rps,
        rowsCount: (JSON.parse(answers.get(name)!) as { rows?: unknown[] }).rows?.length ?? 0,
        same: false,
        asScan: agreesWithScan(name, answers.get(name)!),
        restartFirst: NaN,
        restart: NaN,
        restartCpu: NaN,
      });
      console.log(`[${engine}] ${name} columnar ${ms(median(times))} ms, cached ${rps.toFixed(0)} req/s`);
    }
  } finally {
    await columnar.stop();
    keepLog(columnar, engine, 'first');
  }
  // Right after a restart: the snapshot saved by the first server is read back from its file; the
  // first answer of each query is asked as soon as the server listens (other `limit`s: uncached).
  const restarted = await startServer(
    { ...serverEnv, REPORT_ENGINE: 'columnar' },
    undefined,
    SERVER_NODE_ARGS,
  );
  try {
    for (const row of measured.rows) {
      const times: number[] = [];
      const cpu: Schedule[] = [];
      for (let run = 0; run < COLUMNAR_RUNS; run++) {
        const before = schedule(restarted);
        times.push((await askPatiently(restarted, key, asked(row.name, run + COLUMNAR_RUNS))).ms);
        cpu.push(spent(before, schedule(restarted)));
      }
      printSchedule(engine, row.name, 'restarted', times, cpu);
      [row.restartFirst, row.restart] = [times[0]!, median(times)];
      row.restartCpu = median(cpu.slice(1).map((c) => c.cpu)); // the first one reads the file
      console.log(
        `[${engine}] ${row.name} after a restart: first ${ms(times[0]!)} ms, median ${ms(row.restart)} ms`,
      );
    }
  } finally {
    await restarted.stop();
    keepLog(restarted, engine, 'restarted');
  }
  if (!withSql) return measured;
  const sql = await startServer({ ...serverEnv, REPORT_ENGINE: 'sql' });
  try {
    for (const row of measured.rows) {
      const times: number[] = [];
      let body = '';
      try {
        for (let run = 0; run < SQL_RUNS; run++) {
          const answer = await ask(sql, key, asked(row.name, run));
          times.push(answer.ms);
          if (run === 0) body = answer.body;
        }
      } catch (error) {
        // Seen at 1M orders with lines on the embedded database: the SQL server closed the socket.
        console.log(`[${engine}] ${row.name} sql failed: ${String(error)}\n${sql.output().slice(-2000)}`);
        times.push(NaN);
      }
      row.sql = median(times);
      row.same = body === answers.get(row.name); // byte for byte
      console.log(`[${engine}] ${row.name} sql ${ms(row.sql)} ms, same answer: ${row.same}`);
    }
  } finally {
    await sql.stop();
  }
  return measured;
}

const results: Measured[] = [];
let postgres: TempPostgres | undefined;
try {
  if (engines.includes('embedded'))
    results.push(
      KEEP
        ? await bench(
            'embedded',
            { DATA_DIR: path.join(KEEP, 'data') },
            path.join(KEEP, 'snapshots-embedded'),
            path.join(KEEP, 'embedded.json'),
          )
        : await bench('embedded', { DATA_DIR: path.join(dir, 'data') }),
    );
  if (engines.includes('postgres')) {
    postgres = await startTempPostgres();
    if (!postgres) throw new Error('no PostgreSQL server binaries (apt-get install postgresql)');
    results.push(
      await bench('postgres', {
        DATABASE_URL: postgres.url,
        SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      }),
    );
  }
} finally {
  postgres?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

const cpus = os.cpus();
console.log(
  `\nMachine: ${cpus.length} × ${cpus[0]?.model ?? '?'}, Node ${process.version}; bench process RSS ${rss()} MB`,
);
console.log(
  `${reference.orders.toLocaleString('en')} orders, the two years ending ${today}, ${ZONE}; uncached medians over ${COLUMNAR_RUNS} (columnar) and ${SQL_RUNS} (SQL) runs; cached: 16 connections, 5 s\n`,
);
const header = [
  'engine',
  'query',
  'rows',
  'columnar ms',
  'SQL ms',
  'SQL/columnar',
  'scan ms',
  'columnar/scan',
  'SQL/scan',
  'cached req/s',
  'restart: 1st ms',
  'restart ms',
  'restart/scan',
  'CPU: columnar/scan',
  'CPU: restart/scan',
  'same answer',
  "scan's figures",
];
/** CPU times and their ratio: the server's main thread per answer against the scan's (medians). */
const cpuRatio = (server: number, scan: number) =>
  `${ms(server)}/${ms(scan)} = ${(server / scan).toFixed(1)}×`;
const table = results.flatMap((r) =>
  r.rows.map((row) => [
    r.engine,
    row.name,
    String(row.rowsCount),
    ms(row.columnar),
    ms(row.sql),
    `${(row.sql / row.columnar).toFixed(0)}×`,
    scanned.has(row.name) ? ms(scanned.get(row.name)!.ms) : '–',
    scanned.has(row.name) ? `${(row.columnar / scanned.get(row.name)!.ms).toFixed(1)}×` : '–',
    scanned.has(row.name) ? `${(row.sql / scanned.get(row.name)!.ms).toFixed(1)}×` : '–',
    row.cachedRps.toFixed(0),
    ms(row.restartFirst),
    ms(row.restart),
    scanned.has(row.name) ? `${(row.restart / scanned.get(row.name)!.ms).toFixed(1)}×` : '–',
    scanned.has(row.name) ? cpuRatio(row.columnarCpu, scanned.get(row.name)!.cpu) : '–',
    scanned.has(row.name) ? cpuRatio(row.restartCpu, scanned.get(row.name)!.cpu) : '–',
    Number.isNaN(row.sql) ? '–' : row.same ? 'yes' : 'NO',
    row.asScan === undefined ? '–' : row.asScan ? 'yes' : 'NO',
  ]),
);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i]!.length)));
for (const line of [header, widths.map((w) => '-'.repeat(w)), ...table])
  console.log(
    line.map((cell, i) => (i > 1 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  '),
  );
console.log('');
for (const r of results)
  console.log(
    `${r.engine}: import ${Math.round(r.importRate).toLocaleString('en')} orders/s (${r.importSeconds.toFixed(0)} s); snapshot ` +
      (r.build
        ? `${(r.build.ms / 1000).toFixed(1)} s, ${(r.build.bytes / 2 ** 20).toFixed(0)} MB for ${r.build.orders.toLocaleString('en')} orders; ` +
          `server RSS ${r.build.rss.before} MB before, ${r.build.rss.peak} MB at most during the build, ${r.build.rss.after} MB 2 s after; ` +
          `/healthz while it builds p50 ${ms(r.build.healthz.p50)} ms, p99 ${ms(r.build.healthz.p99)} ms, max ${ms(r.build.healthz.max)} ms`
        : 'none'),
  );
if (
  results.some((r) => r.rows.some((row) => (!row.same && !Number.isNaN(row.sql)) || row.asScan === false))
) {
  console.log('\nThe engines disagree on at least one answer, with each other or with the scan.');
  process.exitCode = 1;
}
