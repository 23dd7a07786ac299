// The first minutes of a new organization (issue 28, item 4), measured from outside as a user
// meets them: a fresh data folder (or a fresh PostgreSQL cluster), N generated orders imported
// with the CLI, `sales-metrics serve`, and uncached reports asked at once and every 250 ms without
// waiting for the previous answer: all ten metrics over two years, as totals and by day in turn
// (Europe/Paris). Beside it, in this process, an in-memory scan of the same orders
// (reference-scan.ts) gives the floor of each question in the same run.
// Prints: when the server listened, the first answer, the fast path (the server's `built` or
// `loaded` event), the latencies while the snapshot built and after (p50/p95, 503s), warm
// latencies asked one at a time, and the server's RSS (peak and at the end).
// With `--lines`, the orders come with their lines as the demo's do (about 2.5 an order, section
// 15), which the snapshot's build reads too; a refusal's code is counted (SNAPSHOT_BUILDING,
// DATABASE_UNAVAILABLE, SERVICE_BUSY).
// With `--no-file`, the snapshot files the import saved are deleted before `serve`: the server
// builds from the database, as on a first start without a saved file (issue 28, item 2). With
// `--keep DIR`, the data folders (and the NDJSON file) live in DIR and are imported once: a later
// run with the same --orders and --lines reuses them (on PostgreSQL only with COLD_DATABASE_URL,
// the same database each time).
// Usage: npm run bench:cold -- [--engine embedded|postgres|both] [--orders N] [--seconds S] [--lines] [--no-file] [--keep DIR]
//   COLD_DATABASE_URL: an empty PostgreSQL database to use instead of a throwaway cluster.
//   COLD_SERVER_NODE_ARGS: node options of the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`.
//   COLD_SERVER_LOG: a file to write each server's log to (`.embedded`, `.postgres` appended).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { METRICS } from '../src/catalog.js';
import { generateDemoOrders } from '../src/demo/generate.js';
import { cliJson, startServer, type ServerProcess } from '../test/helpers/processes.js';
import { localDays, ReferenceOrders } from './reference-scan.js';

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    orders: { type: 'string', default: '300000' },
    seconds: { type: 'string', default: '20' },
    lines: { type: 'boolean', default: false },
    'no-file': { type: 'boolean', default: false },
    keep: { type: 'string' },
  },
});
const ORDERS = Number(args.orders);
const SECONDS = Number(args.seconds);
if (!(Number.isInteger(ORDERS) && ORDERS >= 1000)) throw new Error('--orders: a whole number ≥ 1000');
if (!(SECONDS > 0)) throw new Error('--seconds: a positive number');
const ENGINES = args.engine === 'both' ? ['embedded', 'postgres'] : [String(args.engine)];
if (!ENGINES.every((e) => e === 'embedded' || e === 'postgres'))
  throw new Error('--engine: embedded, postgres or both');
const KEEP = args.keep ? path.resolve(args.keep) : undefined;
/** What a kept data folder was imported with: a run asking for other data imports into another. */
const DATA_NAME = `${ORDERS}${args.lines ? '-lines' : ''}`;
const SERVER_NODE_ARGS = (process.env.COLD_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);

const TICK_MS = 250;
const WARM_RUNS = 9;
const DAYS = 1095;
const ZONE = 'Europe/Paris';
const today = new Date().toISOString().slice(0, 10);
const from = new Date(Date.parse(`${today}T00:00:00Z`) - 729 * 86_400_000).toISOString().slice(0, 10);
const period = `metrics=${METRICS.map((m) => m.id).join(',')}&from=${from}&to=${today}&timezone=${encodeURIComponent(ZONE)}`;
type Kind = 'totals' | 'by day';
const QUESTIONS: Record<Kind, string> = { totals: period, 'by day': `${period}&dimensions=date` };
const KINDS: Kind[] = ['totals', 'by day'];
let asked = 0; // each question asks another limit: never the same cache key (C1)

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
const percentile = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (n: number) => (Number.isNaN(n) ? '–' : n >= 100 ? n.toFixed(0) : n.toFixed(1));
/** A /proc/PID/status figure in MB (VmRSS, VmHWM). */
const procMb = (pid: number, field: string): number => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
};

// ---- data: one NDJSON file, and the same orders as columns for the in-memory scan ----------------
if (KEEP) fs.mkdirSync(KEEP, { recursive: true });
const dir = KEEP ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sm-cold-'));
const file = path.join(dir, `orders-${DATA_NAME}.ndjson`);
/** A kept import: what the run needs to ask the server, and the SECRET_KEY that hashed its key. */
interface Imported {
  key: string;
  secretKey: string;
  importSeconds: number;
}
const importedFile = (engine: string) => path.join(dir, `imported-${engine}-${DATA_NAME}.json`);
const SECRET_KEY =
  KEEP && fs.existsSync(importedFile('postgres'))
    ? (JSON.parse(fs.readFileSync(importedFile('postgres'), 'utf8')) as Imported).secretKey
    : crypto.randomBytes(32).toString('hex');
const reference = new ReferenceOrders(Math.ceil(ORDERS * 1.05));
let lineCount = 0;
{
  const out = fs.createWriteStream(file);
  let written = 0;
  for (const order of generateDemoOrders({
    endDate: today,
    days: DAYS,
    ordersPerDay: (ORDERS / DAYS) * 1.1,
    lines: args.lines,
  })) {
    if (written === ORDERS) break;
    lineCount += order.lines?.length ?? 0;
    if (!out.write(`${JSON.stringify(order)}\n`)) await new Promise((r) => out.once('drain', r));
    reference.add(order);
    written++;
  }
  await new Promise((r) => out.end(r));
  reference.sortByTime();
}
const days = localDays(from, today, ZONE);
const SCANS: Record<Kind, () => unknown> = {
  totals: () => reference.scan(from, today, undefined),
  'by day': () => reference.scan(from, today, days),
};
const scanMs = {} as Record<Kind, number>;
for (const kind of KINDS) {
  const times: number[] = [];
  for (let run = 0; run < 7; run++) {
    const started = performance.now();
    SCANS[kind]();
    times.push(performance.now() - started);
  }
  scanMs[kind] = percentile(times, 50);
}
log(
  `${reference.orders.toLocaleString('en')} orders (${lineCount.toLocaleString('en')} lines) generated; in-memory scan p50: totals ${ms(scanMs.totals)} ms, by day ${ms(scanMs['by day'])} ms`,
);

// ---- questions ---------------------------------------------------------------------------------------
interface Answer {
  kind: Kind;
  /** ms from `serve` to the question, and to its answer. */
  sent: number;
  at: number;
  ms: number;
  status: number;
  /** A refusal's E3 code. */
  code?: string;
}

async function ask(server: ServerProcess, key: string, kind: Kind, origin: number): Promise<Answer> {
  const sent = performance.now() - origin;
  let status: number;
  let code: string | undefined;
  try {
    const response = await fetch(
      `${server.baseUrl}/api/reports/tabular?${QUESTIONS[kind]}&limit=${100_000 - (asked++ % 90_000)}`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    const body = await response.arrayBuffer();
    status = response.status;
    if (status !== 200) code = (JSON.parse(Buffer.from(body).toString('utf8')) as { code?: string }).code;
  } catch {
    status = -1;
  }
  const at = performance.now() - origin;
  return { kind, sent, at, ms: at - sent, status, ...(code ? { code } : {}) };
}

interface Run {
  engine: string;
  load: string;
  importSeconds: number;
  listeningMs: number;
  /** ms from `serve` to the built/loaded event, as seen in its log. */
  fastPathMs: number | undefined;
  answers: Answer[];
  warm: Record<Kind, number[]>;
  peakRssMb: number;
  endRssMb: number;
}
const runs: Run[] = [];

/** Migrates, creates the organization and its key, imports the file; once per kept data folder. */
async function imported(engine: string, env: Record<string, string>): Promise<Imported> {
  if (KEEP && fs.existsSync(importedFile(engine))) {
    log(`[${engine}] the data of ${importedFile(engine)} kept: no import`);
    return JSON.parse(fs.readFileSync(importedFile(engine), 'utf8')) as Imported;
  }
  const cli = cliJson(env);
  await cli('migrate');
  const { slug } = (await cli('org', 'create', '--name', 'Cold')) as { slug: string };
  await cli('subscription', 'set', '--org', slug, '--state', 'active');
  const key = String((await cli('key', 'create', '--org', slug, '--name', 'cold')).key);
  const importStarted = performance.now();
  await cli('import', '--org', slug, file);
  const importSeconds = (performance.now() - importStarted) / 1000;
  const done: Imported = { key, secretKey: SECRET_KEY, importSeconds };
  if (KEEP) fs.writeFileSync(importedFile(engine), JSON.stringify(done));
  return done;
}

async function measure(engine: string, env: Record<string, string>): Promise<void> {
  const { key, importSeconds } = await imported(engine, env);
  if (args['no-file']) {
    // The server's REPORT_SNAPSHOT_DIR (config.ts's default under DATA_DIR): emptied, it builds.
    const saved = path.join(env.DATA_DIR ?? '', 'report-snapshots');
    fs.rmSync(saved, { recursive: true, force: true });
    log(`[${engine}] ${saved} deleted: the server builds from the database`);
  }
  log(`[${engine}] imported in ${importSeconds.toFixed(1)} s; load average ${loadavg()}; serve…`);

  const load0 = loadavg();
  const origin = performance.now();
  // RATE_LIMIT_MAX: the questions of this run are one client's; the limit is not measured here.
  const server = await startServer(
    { ...env, HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_MAX: '1000000000' },
    120_000,
    SERVER_NODE_ARGS,
  );
  const listeningMs = performance.now() - origin;
  const pending: Promise<Answer>[] = [];
  let fastPathMs: number | undefined;
  let peakRssMb = 0;
  try {
    // At once, then every TICK_MS, whatever the answers: SECONDS from `serve`, and past the fast
    // path by 3 s at least (at most 3 minutes).
    for (let tick = 0; ; tick++) {
      const now = performance.now() - origin;
      if (fastPathMs === undefined && /"event":"(built|loaded)"/.test(server.stdout())) fastPathMs = now;
      peakRssMb = Math.max(peakRssMb, procMb(server.pid, 'VmRSS'));
      const done = now >= SECONDS * 1000 && fastPathMs !== undefined && now >= fastPathMs + 3000;
      if (done || now > 180_000) break;
      pending.push(ask(server, key, KINDS[tick % 2] as Kind, origin));
      await sleep(Math.max(0, (tick + 1) * TICK_MS + listeningMs - (performance.now() - origin)));
    }
    const answers = await Promise.all(pending);
    // Warm: one at a time, each kind in turn.
    const warm: Record<Kind, number[]> = { totals: [], 'by day': [] };
    for (let run = 0; run < WARM_RUNS; run++)
      for (const kind of KINDS) warm[kind].push((await ask(server, key, kind, origin)).ms);
    runs.push({
      engine,
      load: `${load0} → ${loadavg()}`,
      importSeconds,
      listeningMs,
      fastPathMs,
      answers,
      warm,
      peakRssMb: Math.max(peakRssMb, procMb(server.pid, 'VmHWM')),
      endRssMb: procMb(server.pid, 'VmRSS'),
    });
    const built = /"event":"(built|loaded)"[^\n]*/.exec(server.stdout())?.[0];
    log(`[${engine}] ${built ?? 'no snapshot event'}`);
  } finally {
    await server.stop();
    if (process.env.COLD_SERVER_LOG)
      fs.writeFileSync(`${process.env.COLD_SERVER_LOG}.${engine}`, server.output());
  }
}

// ---- run -------------------------------------------------------------------------------------------------
log(
  `load average ${loadavg()}; ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`,
);
try {
  if (ENGINES.includes('embedded'))
    await measure('embedded', { DATA_DIR: path.join(dir, `embedded-data-${DATA_NAME}`) });
  if (ENGINES.includes('postgres') && process.env.COLD_DATABASE_URL) {
    await measure('postgres', {
      DATABASE_URL: process.env.COLD_DATABASE_URL,
      DATA_DIR: path.join(dir, `pg-data-${DATA_NAME}`),
      SECRET_KEY,
    });
  } else if (ENGINES.includes('postgres')) {
    const scripts = fileURLToPath(new URL('../../scripts/', import.meta.url));
    const { startTempPostgres } = (await import(
      pathToFileURL(path.join(scripts, 'temp-postgres.js')).href
    )) as {
      startTempPostgres(): Promise<{ url: string; stop(): void } | undefined>;
    };
    const postgres = await startTempPostgres();
    if (!postgres) throw new Error('no PostgreSQL server binaries (apt-get install postgresql)');
    fs.rmSync(importedFile('postgres'), { force: true }); // a new cluster: nothing kept in it
    try {
      await measure('postgres', {
        DATABASE_URL: postgres.url,
        DATA_DIR: path.join(dir, 'pg-data'),
        SECRET_KEY,
      });
    } finally {
      postgres.stop();
    }
  }
} finally {
  if (!KEEP) fs.rmSync(dir, { recursive: true, force: true });
}

// ---- figures ----------------------------------------------------------------------------------------------
console.log(
  `\n${reference.orders.toLocaleString('en')} orders (${lineCount.toLocaleString('en')} lines), uncached reports (10 metrics, two years, ${ZONE}) asked every ${TICK_MS} ms from \`serve\`, totals and by day in turn\n`,
);
const table = (header: string[], rows: string[][]) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const line of [header, widths.map((w) => '-'.repeat(w)), ...rows])
    console.log(
      line.map((cell, i) => (i > 1 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  '),
    );
  console.log('');
};
table(
  [
    'engine',
    'load average',
    'import s',
    'listening ms',
    'first answer ms',
    'fast path ms',
    'peak RSS MB',
    'end RSS MB',
  ],
  runs.map((r) => [
    r.engine,
    r.load,
    r.importSeconds.toFixed(1),
    ms(r.listeningMs),
    ms(r.answers.find((a) => a.status === 200)?.at ?? NaN),
    r.fastPathMs === undefined ? 'never' : ms(r.fastPathMs),
    r.peakRssMb.toFixed(0),
    r.endRssMb.toFixed(0),
  ]),
);
table(
  [
    'engine',
    'question',
    'scan ms',
    'warm p50 / p95 ms',
    'building: asked',
    '503',
    'p50 / p95 ms',
    'first 20 s: p95 ms',
    'p95 / warm p95',
    'warm p50 / scan',
  ],
  runs.flatMap((r) =>
    KINDS.map((kind) => {
      const mine = r.answers.filter((a) => a.kind === kind);
      const building = mine.filter((a) => r.fastPathMs === undefined || a.sent < r.fastPathMs);
      const ok = (list: Answer[]) => list.filter((a) => a.status === 200).map((a) => a.ms);
      const first20 = mine.filter((a) => a.sent < 20_000).map((a) => a.ms);
      const warmP95 = percentile(r.warm[kind], 95);
      return [
        r.engine,
        kind,
        ms(scanMs[kind]),
        `${ms(percentile(r.warm[kind], 50))} / ${ms(warmP95)}`,
        String(building.length),
        String(building.filter((a) => a.status === 503).length),
        `${ms(percentile(ok(building), 50))} / ${ms(percentile(ok(building), 95))}`,
        ms(percentile(first20, 95)),
        `${(percentile(first20, 95) / warmP95).toFixed(1)}×`,
        `${(percentile(r.warm[kind], 50) / scanMs[kind]).toFixed(1)}×`,
      ];
    }),
  ),
);
for (const r of runs) {
  const codes = new Map<string, number>();
  for (const a of r.answers)
    if (a.status === 503) codes.set(a.code ?? '?', (codes.get(a.code ?? '?') ?? 0) + 1);
  if (codes.size > 0)
    console.log(`${r.engine}: 503 by code: ${[...codes].map(([code, n]) => `${code} × ${n}`).join(', ')}`);
}
const failed = runs.flatMap((r) => r.answers.filter((a) => a.status !== 200 && a.status !== 503));
if (failed.length > 0)
  console.log(`other statuses: ${failed.map((a) => `${a.kind} ${a.status} at ${ms(a.sent)} ms`).join(', ')}`);
