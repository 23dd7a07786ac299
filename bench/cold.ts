// The first minutes of a new organization (issue 28, item 4), measured from outside as a user
// meets them: a fresh data folder (or a fresh PostgreSQL cluster), N generated orders imported
// with the CLI, `sales-metrics serve`, and uncached reports asked at once and every 250 ms without
// waiting for the previous answer: all ten metrics over two years, as totals and by day in turn
// (Europe/Paris). Beside it, in this process, an in-memory scan of the same orders
// (reference-scan.ts) gives the floor of each question in the same run.
// Prints: when the server listened, the first answer, when order-grain reports are answered from
// the snapshot (the server's first `ordersBuilt`, `built` or `loaded` event: a build from the
// database has its orders before their lines), the fast path (the server's `built` or
// `loaded` event), the latencies while the snapshot built and after (p50/p95, 503s), warm
// latencies asked one at a time, and the server's RSS (peak and at the end).
// With `--lines`, the orders come with their lines as the demo's do (about 2.5 an order, section
// 15), which the snapshot's build reads too; a refusal's code is counted (SNAPSHOT_BUILDING,
// DATABASE_UNAVAILABLE, SERVICE_BUSY), and a SNAPSHOT_BUILDING refusal's Retry-After is set
// against the moment the orders were read (these questions read no line: they are answered then).
// The import is timed in its two parts (the orders written, then the snapshot prepared and saved,
// src/cli/prepare-reports.ts) with the command's peak RSS and the saved file's size. With
// `--without-file`, a second server then starts on the same database with the saved file removed:
// it builds the snapshot from the database while the same questions are asked.
// Usage: npm run bench:cold -- [--engine embedded|postgres|both] [--orders N] [--seconds S] [--lines]
//   [--without-file] [--no-file] [--keep DIR] [--all-metrics] [--burst N]
// With `--burst N`, the first tick asks N questions at once instead of one (a dashboard of many
// tiles, or many clients, opened at start): the refusals past the build's bound of waiters come at
// once, and their Retry-After is checked the same way.
// The questions ask the ten order metrics (the issue's "10 metrics"); with `--all-metrics`, every
// metric of the catalog, section 15's line metrics too (what this bench asked before 29 November:
// a question that reads the lines, answered only once they are in the snapshot).
// With `--no-file`, the snapshot files the import saved are deleted before the first `serve`: the
// server builds from the database, as on a first start without a saved file (issue 28, item 2).
// With `--keep DIR`, the data folders (and the NDJSON file) live in DIR and are imported once: a
// later run with the same --orders and --lines reuses them (on PostgreSQL only with
// COLD_DATABASE_URL, the same database each time).
//   COLD_DATABASE_URL: an empty PostgreSQL database to use instead of a throwaway cluster.
//   COLD_SERVER_NODE_ARGS: node options of the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`.
//   COLD_SERVER_LOG: a file to write each server's log to (`.embedded`, `.postgres` appended).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { METRICS, ORDER_METRIC_IDS } from '../src/catalog.js';
import { generateDemoOrders } from '../src/demo/generate.js';
import { spawn } from 'node:child_process';
import { BIN, cliJson, startServer, type ServerProcess } from '../test/helpers/processes.js';
import { localDays, ReferenceOrders } from './reference-scan.js';

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    orders: { type: 'string', default: '300000' },
    seconds: { type: 'string', default: '20' },
    lines: { type: 'boolean', default: false },
    'without-file': { type: 'boolean', default: false },
    'no-file': { type: 'boolean', default: false },
    'all-metrics': { type: 'boolean', default: false },
    keep: { type: 'string' },
    burst: { type: 'string', default: '1' },
  },
});
const ORDERS = Number(args.orders);
const SECONDS = Number(args.seconds);
const BURST = Number(args.burst);
if (!(Number.isInteger(BURST) && BURST >= 1)) throw new Error('--burst: a positive whole number');
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
const period = `metrics=${(args['all-metrics'] ? METRICS.map((m) => m.id) : ORDER_METRIC_IDS).join(',')}&from=${from}&to=${today}&timezone=${encodeURIComponent(ZONE)}`;
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
interface Kept {
  key: string;
  secretKey: string;
  imported: Imported;
  fileBytes: number;
}
const keptFile = (engine: string) => path.join(dir, `imported-${engine}-${DATA_NAME}.json`);
const SECRET_KEY =
  KEEP && fs.existsSync(keptFile('postgres'))
    ? (JSON.parse(fs.readFileSync(keptFile('postgres'), 'utf8')) as Kept).secretKey
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
  /** A refusal's Retry-After, in seconds. */
  retryAfterS?: number;
}

async function ask(server: ServerProcess, key: string, kind: Kind, origin: number): Promise<Answer> {
  const sent = performance.now() - origin;
  let status: number;
  let code: string | undefined;
  let retryAfterS: number | undefined;
  try {
    const response = await fetch(
      `${server.baseUrl}/api/reports/tabular?${QUESTIONS[kind]}&limit=${100_000 - (asked++ % 90_000)}`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    const body = await response.arrayBuffer();
    status = response.status;
    if (status !== 200) code = (JSON.parse(Buffer.from(body).toString('utf8')) as { code?: string }).code;
    const retryAfter = response.headers.get('retry-after');
    if (retryAfter !== null) retryAfterS = Number(retryAfter);
  } catch {
    status = -1;
  }
  const at = performance.now() - origin;
  return {
    kind,
    sent,
    at,
    ms: at - sent,
    status,
    ...(code ? { code } : {}),
    ...(retryAfterS !== undefined ? { retryAfterS } : {}),
  };
}

interface Run {
  engine: string;
  load: string;
  importSeconds: number;
  imported: Imported;
  fileBytes: number;
  listeningMs: number;
  /** ms from `serve` to the built/loaded event, as seen in its log. */
  fastPathMs: number | undefined;
  /** ms from `serve` to the first of ordersBuilt/built/loaded: order-grain reports from the snapshot. */
  ordersMs: number | undefined;
  answers: Answer[];
  warm: Record<Kind, number[]>;
  peakRssMb: number;
  endRssMb: number;
}
const runs: Run[] = [];

/** Migrates, creates the organization and its key, imports the file; once per kept data folder. */
async function importedInto(engine: string, env: Record<string, string>): Promise<Kept> {
  if (KEEP && fs.existsSync(keptFile(engine))) {
    log(`[${engine}] the data of ${keptFile(engine)} kept: no import`);
    return JSON.parse(fs.readFileSync(keptFile(engine), 'utf8')) as Kept;
  }
  const cli = cliJson(env);
  await cli('migrate');
  const { slug } = (await cli('org', 'create', '--name', 'Cold')) as { slug: string };
  await cli('subscription', 'set', '--org', slug, '--state', 'active');
  const key = String((await cli('key', 'create', '--org', slug, '--name', 'cold')).key);
  const imported = await timedImport(env, slug);
  const fileBytes = savedBytes(env);
  log(
    `[${engine}] imported in ${imported.seconds.toFixed(1)} s (orders ${imported.ordersSeconds.toFixed(1)} s, snapshot ${imported.prepareSeconds.toFixed(1)} s), CLI peak RSS ${imported.peakRssMb.toFixed(0)} MB, saved file ${fileBytes.toLocaleString('en')} bytes; load average ${loadavg()}`,
  );
  const kept: Kept = { key, secretKey: SECRET_KEY, imported, fileBytes };
  if (KEEP) fs.writeFileSync(keptFile(engine), JSON.stringify(kept));
  return kept;
}

async function measure(engine: string, env: Record<string, string>): Promise<void> {
  const { key, imported, fileBytes } = await importedInto(engine, env);
  if (args['no-file']) {
    fs.rmSync(snapshotDir(env), { recursive: true, force: true });
    log(`[${engine}] ${snapshotDir(env)} deleted: the server builds from the database`);
  }
  await serveAndAsk(engine, env, key, imported, args['no-file'] ? 0 : fileBytes);
  if (args['without-file']) {
    fs.rmSync(snapshotDir(env), { recursive: true, force: true });
    log(`[${engine}] saved file removed; serve again…`);
    await serveAndAsk(`${engine}, no file`, env, key, imported, 0);
  }
}

interface Imported {
  seconds: number;
  /** Until the command printed its counts: the orders written. */
  ordersSeconds: number;
  /** From then to its exit: the snapshot prepared and saved. */
  prepareSeconds: number;
  /** VmHWM of the command, read every 200 ms until it exits. */
  peakRssMb: number;
}

/** `sales-metrics import`, timed in its two parts, with its peak RSS. */
async function timedImport(env: Record<string, string>, slug: string): Promise<Imported> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'import', '--org', slug, file, '--json'], {
    env: { ...process.env, ...env },
  });
  let printedAt = NaN;
  let stderr = '';
  let peakRssMb = 0;
  child.stdout.on('data', () => (printedAt = Number.isNaN(printedAt) ? performance.now() : printedAt));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const watch = setInterval(() => {
    const hwm = procMb(child.pid ?? 0, 'VmHWM');
    if (hwm > peakRssMb) peakRssMb = hwm;
  }, 200);
  const code = await new Promise<number | null>((r) => child.on('close', r));
  clearInterval(watch);
  const ended = performance.now();
  if (code !== 0) throw new Error(`sales-metrics import: ${stderr}`);
  const prepared = /Rapports prêts[^\n]*/.exec(stderr)?.[0];
  log(prepared ?? `no snapshot prepared: ${stderr.trim().slice(-300)}`);
  return {
    seconds: (ended - started) / 1000,
    ordersSeconds: (printedAt - started) / 1000,
    prepareSeconds: (ended - printedAt) / 1000,
    peakRssMb,
  };
}

const snapshotDir = (env: Record<string, string>) => path.join(env.DATA_DIR!, 'report-snapshots');
/** The bytes of the saved snapshot files (REPORT_SNAPSHOT_DIR's default, under DATA_DIR). */
function savedBytes(env: Record<string, string>): number {
  let bytes = 0;
  const walk = (at: string): void => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true }))
      if (entry.isDirectory()) walk(path.join(at, entry.name));
      else bytes += fs.statSync(path.join(at, entry.name)).size;
  };
  if (fs.existsSync(snapshotDir(env))) walk(snapshotDir(env));
  return bytes;
}

async function serveAndAsk(
  engine: string,
  env: Record<string, string>,
  key: string,
  imported: Imported,
  fileBytes: number,
): Promise<void> {
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
  let ordersMs: number | undefined;
  let peakRssMb = 0;
  try {
    // At once, then every TICK_MS, whatever the answers: SECONDS from `serve`, and past the fast
    // path by 3 s at least (at most 3 minutes).
    for (let tick = 0; ; tick++) {
      const now = performance.now() - origin;
      if (fastPathMs === undefined && /"event":"(built|loaded)"/.test(server.stdout())) fastPathMs = now;
      if (ordersMs === undefined && /"event":"(ordersBuilt|built|loaded)"/.test(server.stdout()))
        ordersMs = now;
      peakRssMb = Math.max(peakRssMb, procMb(server.pid, 'VmRSS'));
      const done = now >= SECONDS * 1000 && fastPathMs !== undefined && now >= fastPathMs + 3000;
      if (done || now > 180_000) break;
      for (let n = tick === 0 ? BURST : 1; n > 0; n--)
        pending.push(ask(server, key, KINDS[(tick + n - 1) % 2] as Kind, origin));
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
      importSeconds: imported.seconds,
      imported,
      fileBytes,
      listeningMs,
      fastPathMs,
      ordersMs,
      answers,
      warm,
      peakRssMb: Math.max(peakRssMb, procMb(server.pid, 'VmHWM')),
      endRssMb: procMb(server.pid, 'VmRSS'),
    });
    const orders = /"event":"ordersBuilt"[^\n]*/.exec(server.stdout())?.[0];
    if (orders) log(`[${engine}] ${orders}`);
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
    fs.rmSync(keptFile('postgres'), { force: true }); // a new cluster: nothing kept in it
    try {
      await measure('postgres', {
        DATABASE_URL: postgres.url,
        DATA_DIR: path.join(dir, `pg-data-${DATA_NAME}`),
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
    'orders ready ms',
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
    r.ordersMs === undefined ? 'never' : ms(r.ordersMs),
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
table(
  [
    'engine',
    'orders s',
    'orders/s',
    'snapshot prepared s',
    'import CLI peak RSS MB',
    'saved file bytes',
    'first minute: asked',
    'non-200',
    'p50 / p95 / worst ms',
  ],
  runs.map((r) => {
    const minute = r.answers.filter((a) => a.sent < 60_000);
    const times = minute.map((a) => a.ms);
    return [
      r.engine,
      r.imported.ordersSeconds.toFixed(1),
      Math.round(reference.orders / r.imported.ordersSeconds).toLocaleString('en'),
      r.imported.prepareSeconds.toFixed(1),
      r.imported.peakRssMb.toFixed(0),
      r.fileBytes.toLocaleString('en'),
      String(minute.length),
      String(minute.filter((a) => a.status !== 200).length),
      `${ms(percentile(times, 50))} / ${ms(percentile(times, 95))} / ${ms(Math.max(...times))}`,
    ];
  }),
);
for (const r of runs) {
  const codes = new Map<string, number>();
  for (const a of r.answers)
    if (a.status === 503) codes.set(a.code ?? '?', (codes.get(a.code ?? '?') ?? 0) + 1);
  if (codes.size > 0)
    console.log(`${r.engine}: 503 by code: ${[...codes].map(([code, n]) => `${code} × ${n}`).join(', ')}`);
  // Issue 28, item 3: a SNAPSHOT_BUILDING refusal tells when to come back; these questions read no
  // line, so the right moment is when the orders are read. Early: the client comes back to another
  // refusal; late: it waits for nothing.
  const told = r.answers.filter((a) => a.code === 'SNAPSHOT_BUILDING' && a.retryAfterS !== undefined);
  if (told.length > 0 && r.ordersMs !== undefined) {
    const ordersMs = r.ordersMs;
    const off = told
      .map((a) => (a.at + (a.retryAfterS as number) * 1000 - ordersMs) / 1000)
      .sort((x, y) => x - y);
    const seconds = told.map((a) => a.retryAfterS as number).sort((x, y) => x - y);
    console.log(
      `${r.engine}: SNAPSHOT_BUILDING Retry-After ${seconds[0]}–${seconds.at(-1)} s (median ${percentile(seconds, 50)}); back at the orders ready ${off[0]!.toFixed(1)} to +${off.at(-1)!.toFixed(1)} s (median ${percentile(off, 50).toFixed(1)})`,
    );
  }
}
const failed = runs.flatMap((r) => r.answers.filter((a) => a.status !== 200 && a.status !== 503));
if (failed.length > 0)
  console.log(`other statuses: ${failed.map((a) => `${a.kind} ${a.status} at ${ms(a.sent)} ms`).join(', ')}`);
