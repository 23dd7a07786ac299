// The project's bound (no request holds the event loop more than 100 ms) under bursts of the
// widest compared answer, against a server already running (the demo of `npm start`, 46,000
// orders over two years): BURSTS bursts of PARALLEL requests for the widest answer compared with
// the previous year (10 metrics by date, store, country, customer type and status, limit=100000,
// the demo's two years), each request with an X-Forwarded-For of its own, while GET /healthz is
// probed every PROBE_MS. Prints per burst: the statuses, the slowest /healthz probes, the time
// the probing process and the server waited for a CPU meanwhile (Linux's schedstat), and the
// server's RSS before and after. A server started with
// NODE_OPTIONS="--import ./dist/bench/event-loop-watch.js" also tells its event loop's longest gap
// and its garbage collections during each burst.
// Usage: node dist/bench/compare-bursts.js <base URL> <API key> [server pid] [bursts] [parallel]
import os from 'node:os';
import fs from 'node:fs';
import { rssMb, schedMs } from '../test/helpers/watched-server.js';
import { watchFile } from './event-loop-watch-file.js';

const [baseUrl = 'http://127.0.0.1:3000', key = '', pidArgument, burstsArgument, parallelArgument] =
  process.argv.slice(2);
const pid = pidArgument ? Number(pidArgument) : undefined;
const BURSTS = Number(burstsArgument ?? 4);
const PARALLEL = Number(parallelArgument ?? 40);
const PROBE_MS = Number(process.env.PROBE_MS ?? 20);

const METRICS =
  'orders,gross_sales,net_revenue,taxes,shipping,items_sold,average_order_value,unique_customers,new_customers,returning_customers';
const day = (d: Date) => d.toISOString().slice(0, 10);
const today = new Date();
const twoYearsAgo = new Date(
  Date.UTC(today.getUTCFullYear() - 2, today.getUTCMonth(), today.getUTCDate() + 1),
);
const WIDEST_COMPARED =
  `/api/reports/tabular?metrics=${METRICS}&dimensions=date,store,country,customer_type,status` +
  `&from=${day(twoYearsAgo)}&to=${day(today)}&compare=previous_year&limit=`;

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** GET /healthz every PROBE_MS while `work` runs: each probe's time, and the CPU waits beside it. */
async function probing<T>(work: () => Promise<T>) {
  const probes: { ms: number; waitedMs: number }[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const before = [schedMs(process.pid), ...(pid ? [schedMs(pid)] : [])];
      const at = performance.now();
      await fetch(`${baseUrl}/healthz`)
        .then((r) => r.arrayBuffer())
        .catch(() => undefined);
      const ms = performance.now() - at;
      const after = [schedMs(process.pid), ...(pid ? [schedMs(pid)] : [])];
      const waitedMs = after.reduce((sum, s, i) => sum + s.wait - (before[i]?.wait ?? 0), 0);
      probes.push({ ms, waitedMs });
      await new Promise((r) => setTimeout(r, PROBE_MS));
    }
  })();
  try {
    return { result: await work(), probes };
  } finally {
    running = false;
    await loop;
  }
}

const burst = (n: number) =>
  Promise.all(
    Array.from({ length: PARALLEL }, async (_, i) => {
      try {
        const response = await fetch(`${baseUrl}${WIDEST_COMPARED}${100_000 - n}`, {
          headers: {
            authorization: `Bearer ${key}`,
            'x-forwarded-for': `198.51.100.${(n * PARALLEL + i) % 250}`,
          },
        });
        await response.arrayBuffer();
        return response.status;
      } catch {
        return 0; // no answer (a connection cut)
      }
    }),
  );

console.log(`${WIDEST_COMPARED}100000 (then 99999, … a burst: not from the cache)`);
console.log(`load average before: ${load()}`);
/** The watched server's figures since the last call (bench/event-loop-watch.ts), if it is watched. */
async function loopFigures(): Promise<string> {
  if (!pid || !fs.existsSync(watchFile(pid))) return '';
  fs.rmSync(watchFile(pid), { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; !fs.existsSync(watchFile(pid)) && waited < 5000; waited += 50)
    await new Promise((r) => setTimeout(r, 50));
  return fs.existsSync(watchFile(pid)) ? fs.readFileSync(watchFile(pid), 'utf8').trim() : '';
}

let worst = 0;
for (let n = 0; n < BURSTS; n++) {
  await loopFigures();
  const rssBefore = pid ? rssMb(pid) : NaN;
  const started = performance.now();
  const { result: statuses, probes } = await probing(() => burst(n));
  const count = (s: number) => statuses.filter((x) => x === s).length;
  const slowest = [...probes].sort((a, b) => b.ms - a.ms).slice(0, 3);
  worst = Math.max(worst, slowest[0]?.ms ?? 0);
  console.log(
    `burst ${n + 1}: ${((performance.now() - started) / 1000).toFixed(1)} s, ${count(200)} × 200, ${count(503)} × 503, ` +
      `${statuses.length - count(200) - count(503)} other; ${probes.length} /healthz probes, slowest ` +
      slowest.map((p) => `${p.ms.toFixed(0)} ms (CPU wait ${p.waitedMs.toFixed(0)})`).join(', ') +
      (pid ? `; RSS ${rssBefore.toFixed(0)} → ${rssMb(pid).toFixed(0)} MB` : '') +
      `; load ${load()}`,
  );
  const inside = await loopFigures();
  if (inside) console.log(`  ${inside}`);
  await new Promise((r) => setTimeout(r, 1000));
}
console.log(`slowest /healthz over all bursts: ${worst.toFixed(0)} ms`);
