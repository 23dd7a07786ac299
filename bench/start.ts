// How long a start takes (issue 28, "fast from the first request"): from spawning
// `sales-metrics serve` to its port accepting a connection, and a short command (`migrate` on a
// migrated folder) from spawn to exit, on embedded data folders given as they are. With
// `--baseline DIR` (another checkout with its own dist/, e.g. an earlier commit), each start runs
// with it and with this build in turn on the same folder, so that the figures are ratios of one
// sitting on a shared machine. Beside the wall time, the CPU time of the process (all its threads,
// PGlite's worker included) when the port opened or the command ended, from /proc.
// Usage: npm run build && node dist/bench/start.js --data DIR [--data DIR2] [--runs 5] [--baseline DIR]
//   Each DIR is a DATA_DIR already migrated (`sales-metrics migrate`), with or without orders.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/processes.js';

const { values: args } = parseArgs({
  options: {
    data: { type: 'string', multiple: true, default: [] },
    runs: { type: 'string', default: '5' },
    baseline: { type: 'string' },
  },
});
const RUNS = Number(args.runs);
if (!(Number.isInteger(RUNS) && RUNS >= 1)) throw new Error('--runs: a whole number ≥ 1');
if (args.data.length === 0) throw new Error('--data DIR: at least one migrated DATA_DIR');
const THIS = fileURLToPath(new URL('../../', import.meta.url));
const BUILDS: [string, string][] = [
  ...(args.baseline ? [['baseline', path.resolve(args.baseline)] as [string, string]] : []),
  ['this build', THIS],
];
const TICKS_PER_S = 100; // USER_HZ on Linux

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** User and system CPU seconds of a live process, all its threads. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

interface Timing {
  wallMs: number;
  cpuS: number;
}

async function timeServe(root: string, dataDir: string): Promise<Timing> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(root, 'bin/sales-metrics.js'), 'serve'], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), DEMO: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (d: Buffer) => (errors += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`serve exited: ${errors}`);
      if (await accepts(port)) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    return { wallMs: performance.now() - started, cpuS: cpuSeconds(child.pid ?? 0) };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function timeMigrate(root: string, dataDir: string): Promise<Timing> {
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(root, 'bin/sales-metrics.js'), 'migrate'], {
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let cpuS = 0;
  // The last reading before the process ends: /proc has nothing once it is reaped.
  const sampler = setInterval(() => {
    try {
      cpuS = cpuSeconds(child.pid ?? 0);
    } catch {
      // ended
    }
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`migrate exited with ${code}`);
  return { wallMs: performance.now() - started, cpuS };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

function summary(label: string, timings: Timing[]): { wall: number; cpu: number } {
  const walls = timings.map((t) => t.wallMs);
  const wall = median(walls);
  const cpu = median(timings.map((t) => t.cpuS));
  console.log(
    `  ${label.padEnd(12)} wall median ${wall.toFixed(0)} ms (min ${Math.min(...walls).toFixed(0)}, max ${Math.max(...walls).toFixed(0)}), CPU median ${cpu.toFixed(2)} s — ${walls.map((w) => w.toFixed(0)).join(' ')}`,
  );
  return { wall, cpu };
}

console.log(`load average at start: ${loadavg()}; ${RUNS} runs each, builds in turn`);
for (const [what, time] of [
  ['serve → port open', timeServe],
  ['migrate (migrated folder) → exit', timeMigrate],
] as const) {
  for (const dataDir of args.data) {
    const results = new Map<string, Timing[]>(BUILDS.map(([label]) => [label, []]));
    for (let run = 0; run < RUNS; run++) {
      for (const [label, root] of run % 2 === 0 ? BUILDS : [...BUILDS].reverse()) {
        results.get(label)?.push(await time(root, dataDir));
      }
    }
    console.log(`${what}, DATA_DIR=${dataDir} (load average ${loadavg()})`);
    const figures = BUILDS.map(([label]) => summary(label, results.get(label) ?? []));
    const [before, after] = figures;
    if (before && after)
      console.log(
        `  this build / baseline: wall ${(after.wall / before.wall).toFixed(2)}, CPU ${(after.cpu / before.cpu).toFixed(2)}`,
      );
  }
}
console.log(`load average at end: ${loadavg()}`);
