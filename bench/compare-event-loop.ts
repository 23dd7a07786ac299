// Issue 26, item 6: the widest compared answer must not hold the event loop. An organization of N
// orders (default 60,000; 40 stores, 15 countries, 5 statuses, two years) in an embedded
// database, the service in this process; then, on the columnar engine and on the SQL engine, the
// widest answer (10 metrics by date, store, country, customer type and status, limit=100000),
// with and without compare=previous_year, JSON and CSV, a new offset each time (no cache), while
// GET /healthz is probed every 10 ms. Prints, per answer: its time and size, the longest
// synchronous stretch of the event loop (main thread CPU time between two turns, and wall time),
// and /healthz's p99 and max.
// Usage: npm run build --silent && node dist/bench/compare-event-loop.js [orders]
import os from 'node:os';
import { longestStretch } from '../test/helpers/event-loop-stretch.js';
import { startSqlEngineApp, startTestService } from '../test/helpers/service.js';
import { wideOrders, WIDEST } from '../test/helpers/wide-orders.js';

const target = Number(process.argv[2] ?? 60_000);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ??
  NaN;

const service = await startTestService({ RATE_LIMIT_MAX: '100000', ANSWER_MEMORY_MB: '1024' });
const sqlApp = await startSqlEngineApp(service);
try {
  let started = performance.now();
  const { key } = await service.addOrganization('Bench event loop', wideOrders(target));
  console.log(`Imported ${target} orders in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  // The columnar snapshot built once, outside the figures.
  await service.get(`/api/reports/tabular?metrics=orders`, key);
  await new Promise((r) => setTimeout(r, 3000));
  console.log(`load average: ${load()}`);
  console.log(
    'engine   | compare        | format | ms    | MB   | longest stretch CPU / wall ms | /healthz p99 / max ms',
  );
  let offset = 0;
  for (const [engine, baseUrl] of [
    ['columnar', service.baseUrl],
    ['sql', sqlApp.baseUrl],
  ] as const)
    for (const compare of ['', '&compare=previous_year'])
      for (const format of ['json', 'csv']) {
        const health: number[] = [];
        let running = true;
        const probes = (async () => {
          while (running) {
            const at = performance.now();
            // A kept-alive connection the server closed meanwhile: counted as its time, tried again.
            await fetch(`${baseUrl}/healthz`)
              .then((r) => r.arrayBuffer())
              .catch(() => undefined);
            health.push(performance.now() - at);
            await new Promise((r) => setTimeout(r, 10));
          }
        })();
        started = performance.now();
        const {
          result: bytes,
          longestMs,
          longestWallMs,
        } = await longestStretch(async () => {
          const url = `${baseUrl}/api/reports/tabular?${WIDEST}&offset=${offset++}&format=${format}${compare}`;
          const ask = () => fetch(url, { headers: { authorization: `Bearer ${key}` } });
          // A kept-alive connection the server closed just then: asked once more.
          const response = await ask().catch(ask);
          if (response.status !== 200) throw new Error(`${response.status}: ${await response.text()}`);
          return (await response.arrayBuffer()).byteLength;
        });
        const ms = performance.now() - started;
        running = false;
        await probes;
        console.log(
          `${engine.padEnd(8)} | ${(compare ? 'previous_year' : 'none').padEnd(14)} | ${format.padEnd(6)} | ${ms.toFixed(0).padStart(5)} | ${(bytes / 1e6).toFixed(1).padStart(4)} | ${longestMs.toFixed(0).padStart(5)} / ${longestWallMs.toFixed(0).padStart(5)} | ${percentile(health, 99).toFixed(0)} / ${Math.max(...health).toFixed(0)}`,
        );
      }
  console.log(`load average: ${load()}`);
} finally {
  await sqlApp.close();
  await service.cleanup();
}
