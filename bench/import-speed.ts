// Import speed (issue 9, item 6): times `sales-metrics import` of an N-line NDJSON file end to end,
// the real command in its own process, against each engine (embedded PGlite in a DATA_DIR, then a
// throwaway PostgreSQL server), while `sales-metrics serve` runs on the same database and a client
// asks its API every 50 ms: the longest of those answers is how long a user waits at worst during
// the import. Prints orders/s, the command's peak RSS (GNU time) and the load average around it,
// since the figures depend on what else the machine runs.
// Usage: npm run build && node dist/bench/import-speed.js [orders=1000000] [engines=embedded,postgres]
//   IMPORT_FILE=path reuses (or writes once) the generated file between runs (path.lines: with lines).
//   BENCH_LINES=both (default) imports the orders without lines, then the same orders with their
//   lines (issue 27: about 2.5 a order, the demo's catalogues), each into an organization of its
//   own, in the same run; BENCH_LINES=with or without imports only one of them.
//   BENCH_REIMPORT=1 imports the file a second time into the same organization (I2: every order
//   named again), measured the same way; BENCH_REIMPORT=path imports that file instead (say, the
//   same orders with other amounts: every order rewritten).
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateDemoOrders } from '../src/demo/generate.js';
import { BIN, runCli, startServer, type ServerProcess } from '../test/helpers/processes.js';

const target = Number(process.argv[2] ?? 1_000_000);
const engines = (process.argv[3] ?? 'embedded,postgres').split(',');
if (!(Number.isInteger(target) && target >= 1000)) throw new Error('usage: import-speed [orders ≥ 1000]');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-import-speed-'));
const file = process.env.IMPORT_FILE ?? path.join(dir, 'orders.ndjson');
const linesFile = `${file}.lines`;
const LINES = process.env.BENCH_LINES ?? 'both';
const files: [string, string][] = [
  ...(LINES === 'with' ? [] : ([['without lines', file]] as [string, string][])),
  ...(LINES === 'without' ? [] : ([['with lines', linesFile]] as [string, string][])),
];
const REIMPORT = process.env.BENCH_REIMPORT;
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function generate(file: string, lines: boolean): Promise<number> {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  const out = fs.createWriteStream(file);
  let written = 0;
  // A little more than needed a day, cut at `target` lines: exactly N orders over about 3 years.
  for (const order of generateDemoOrders({
    endDate: new Date().toISOString().slice(0, 10),
    days: 1095,
    ordersPerDay: (target / 1095) * 1.1,
    lines,
  })) {
    if (written === target) break;
    if (!out.write(`${JSON.stringify(order)}\n`)) await new Promise((r) => out.once('drain', r));
    written++;
  }
  await new Promise((r) => out.end(r));
  return written;
}

const TICKS_PER_S = 100; // USER_HZ on Linux

/** CPU seconds of a process and of its children it has reaped (/proc/PID/stat). */
function cpuSecondsOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime are fields 14–17, i.e. 11–14 after the command name.
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0) / TICKS_PER_S;
}

/** The process whose command line contains every one of `parts`, and whose environment `env`. */
function findProcess(parts: string[], env?: string): number | undefined {
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!parts.every((part) => cmdline.includes(part))) continue;
      if (env !== undefined && !fs.readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(env))
        continue;
      return Number(name);
    } catch {
      // gone, or not ours
    }
  }
  return undefined;
}

/** `sales-metrics import` under GNU time: its exit code, output, seconds and peak RSS (MiB). */
function timedImport(env: Record<string, string>, slug: string, file: string) {
  return new Promise<{
    code: number;
    stdout: string;
    stderr: string;
    seconds: number;
    rssMiB: number;
    cpuSeconds: number;
  }>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      '/usr/bin/time',
      ['-f', 'PEAK_RSS_KB=%M CPU_S=%U+%S', process.execPath, BIN, 'import', '--org', slug, file, '--json'],
      { env: { ...process.env, ...env } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const kb = Number(/PEAK_RSS_KB=(\d+)/.exec(stderr)?.[1] ?? NaN);
      const cpu = /CPU_S=([\d.]+)\+([\d.]+)/.exec(stderr);
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        seconds: (performance.now() - started) / 1000,
        rssMiB: kb / 1024,
        cpuSeconds: Number(cpu?.[1] ?? NaN) + Number(cpu?.[2] ?? NaN),
      });
    });
  });
}

/**
 * `database` names the process that does the database's work: the server hosting PGlite, or the
 * PostgreSQL postmaster, whose reaped children are the backends of the import's connections.
 */
async function measure(
  engine: string,
  env: Record<string, string>,
  orders: number,
  database: () => number | undefined,
): Promise<void> {
  const server = await startServer({ ...env, RATE_LIMIT_MAX: '100000000' });
  try {
    const cli = async (...args: string[]) => {
      const result = await runCli([...args, '--json'], env);
      if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`);
      return JSON.parse(result.stdout) as Record<string, string>;
    };
    for (const [kind, file] of files) {
      const { slug } = await cli('org', 'create', '--name', `Bench ${kind}`);
      if (slug === undefined) throw new Error('no slug');
      await cli('subscription', 'set', '--org', slug, '--state', 'active');
      const { key } = await cli('key', 'create', '--org', slug, '--name', 'bench');
      const label = `${engine} (first import, ${kind})`;
      await importWhileProbing(label, file, env, slug, key, server, orders, database);
      if (REIMPORT === undefined || REIMPORT === '') continue;
      const again = REIMPORT === '1' ? file : REIMPORT;
      await importWhileProbing(
        `${engine} (re-import of ${path.basename(again)})`,
        again,
        env,
        slug,
        key,
        server,
        orders,
        database,
      );
    }
  } finally {
    await server.stop();
  }
}

/** One timed import of the file into `slug` while the API is called every 50 ms; prints its line. */
async function importWhileProbing(
  label: string,
  file: string,
  env: Record<string, string>,
  slug: string,
  key: string | undefined,
  server: ServerProcess,
  orders: number,
  database: () => number | undefined,
): Promise<void> {
  // A request that reads the database (the key's lookup), every 50 ms, for the import's duration.
  const waits: number[] = [];
  const failures: string[] = [];
  // The longest time without any answer: a request that failed (503 or a connection cut by the
  // server's 65 s timeout) ends its wait, but the user still had no figures.
  let answered = performance.now();
  let stall = 0;
  let running = true;
  const probes = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const response = await fetch(`${server.baseUrl}/api/reports/catalog`, {
          headers: { authorization: `Bearer ${key}` },
        });
        await response.arrayBuffer();
        if (response.status !== 200) failures.push(`HTTP ${response.status}`);
        else {
          const now = performance.now();
          stall = Math.max(stall, now - answered);
          answered = now;
        }
      } catch (error) {
        failures.push(String((error as Error).cause ?? error));
      }
      waits.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const databasePid = database();
  const databaseCpu = databasePid === undefined ? NaN : cpuSecondsOf(databasePid);
  const before = loadavg();
  const run = await timedImport(env, slug, file);
  const after = loadavg();
  // The CLI's connections have ended by now: their backends were reaped by the postmaster.
  await new Promise((r) => setTimeout(r, 500));
  const databaseSeconds = databasePid === undefined ? NaN : cpuSecondsOf(databasePid) - databaseCpu;
  running = false;
  await probes;
  if (run.code !== 0) throw new Error(run.stderr);
  const sorted = [...waits].sort((a, b) => a - b);
  const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? NaN;
  console.log(
    `${label}: ${orders.toLocaleString('en')} orders in ${run.seconds.toFixed(1)} s = ` +
      `${Math.round(orders / run.seconds).toLocaleString('en')} orders/s end to end, ` +
      `CLI peak RSS ${run.rssMiB.toFixed(0)} MiB, CPU ${run.cpuSeconds.toFixed(1)} s, database CPU ${databaseSeconds.toFixed(1)} s | API during import: ${waits.length} calls, ` +
      `p99 ${p99.toFixed(0)} ms, longest ${Math.max(...waits).toFixed(0)} ms, ` +
      `longest without an answer ${(Math.max(stall, performance.now() - answered) / 1000).toFixed(1)} s, ` +
      `${failures.length} failed | ` +
      `load average before ${before}, after ${after} | ${run.stdout.trim()}`,
  );
  if (failures.length > 0)
    console.log(
      `  ${failures.length} failed API calls, e.g. ${failures[0]}; server: ${server.output().slice(-600)}`,
    );
}

let orders = 0;
for (const [kind, file] of files) {
  orders = await generate(file, kind === 'with lines');
  console.log(
    `${orders.toLocaleString('en')} orders ${kind}, ${(fs.statSync(file).size / 2 ** 20).toFixed(0)} MB NDJSON; ` +
      `${os.cpus().length} cores; node ${process.version}`,
  );
}
try {
  if (engines.includes('embedded')) {
    const dataDir = path.join(dir, 'data');
    await measure('embedded', { DATA_DIR: dataDir }, orders, () =>
      findProcess(['sales-metrics.js', 'serve'], `DATA_DIR=${dataDir}`),
    );
  }
  if (engines.includes('postgres')) {
    const scripts = fileURLToPath(new URL('../../scripts/', import.meta.url));
    const { startTempPostgres } = (await import(
      pathToFileURL(path.join(scripts, 'temp-postgres.js')).href
    )) as {
      startTempPostgres: () => Promise<{ url: string; stop: () => void } | undefined>;
    };
    const postgres = await startTempPostgres();
    if (postgres === undefined) console.log('postgres: no PostgreSQL server binaries, skipped');
    else {
      try {
        const secret = crypto.randomBytes(32).toString('hex');
        const port = new URL(postgres.url).port;
        await measure('postgres', { DATABASE_URL: postgres.url, SECRET_KEY: secret }, orders, () =>
          findProcess(['postgres', '-D', `-p ${port}`]),
        );
      } finally {
        postgres.stop();
      }
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
