// Event-loop delay of the server (embedded PGlite) while a large import runs through the CLI in
// another process, against the same server measured idle in the same run.
// Usage: npm run build && node dist/bench/import-event-loop.js [orders≈200000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { createApiKey } from '../src/auth/api-keys.js';
import { createOrganization, setSubscription } from '../src/domain/organizations.js';
import { generateDemoOrders } from '../src/demo/generate.js';
import { runCli } from '../test/helpers/processes.js';

const target = Number(process.argv[2] ?? 200_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-bench-'));
const config = loadConfig({
  DATA_DIR: path.join(dir, 'data'),
  LOG_LEVEL: 'silent',
  RATE_LIMIT_MAX: '1000000',
});
const db = await openDatabase(config, { role: 'server' });
await migrate(db);
const org = await createOrganization(db, { name: 'Bench' });
await setSubscription(db, org.id, 'active');
const { key } = await createApiKey(db, org.id, 'bench');
const app = await buildApp(config, { db, logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

const file = path.join(dir, 'orders.ndjson');
const out = fs.createWriteStream(file);
let written = 0;
for (const order of generateDemoOrders({ endDate: '2026-11-22', ordersPerDay: Math.round(target / 730) })) {
  if (!out.write(`${JSON.stringify(order)}\n`)) await new Promise((r) => out.once('drain', r));
  written++;
}
await new Promise((r) => out.end(r));

const pct = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

/** Probes the API every 50 ms while `work` runs; returns loop delay and request latency figures. */
async function measure(label: string, work: () => Promise<unknown>) {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  const latencies: number[] = [];
  let running = true;
  const probes = (async () => {
    while (running) {
      const started = performance.now();
      const response = await fetch(`${base}/api/reports/catalog`, {
        headers: { authorization: `Bearer ${key}` },
      });
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  histogram.enable();
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  histogram.disable();
  running = false;
  await probes;
  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  console.log(
    `${label.padEnd(34)} ${seconds.toFixed(1).padStart(6)} s | loop delay p50 ${ms(histogram.percentile(50))} ms, p99 ${ms(histogram.percentile(99))} ms, max ${ms(histogram.max)} ms | API p50 ${pct(latencies, 0.5).toFixed(1)} ms, p99 ${pct(latencies, 0.99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms (${latencies.length} calls)`,
  );
  return { result, seconds };
}

console.log(`Server on the embedded database; ${written} generated orders in ${file}\n`);
await measure('idle (reference)', () => new Promise((r) => setTimeout(r, 3000)));
const imported = await measure('CLI import in another process', () =>
  runCli(['import', '--org', org.slug, file, '--json'], { DATA_DIR: config.dataDir }),
);
const cli = imported.result as { code: number; stdout: string; stderr: string };
if (cli.code !== 0) throw new Error(cli.stderr);
console.log(`  import: ${cli.stdout.trim()} → ${Math.round(written / imported.seconds)} orders/s end to end`);
await measure('daily report over all orders', () =>
  fetch(
    `${base}/api/reports/tabular?metrics=orders,net_revenue,unique_customers,new_customers&dimensions=date&from=2024-11-23&to=2026-11-22&limit=100000`,
    {
      headers: { authorization: `Bearer ${key}` },
    },
  ).then((r) => r.json()),
);
await app.close();
await db.close();
fs.rmSync(dir, { recursive: true, force: true });
