// Deltas (issue 19): an organization of N generated orders (three years) in a throwaway database,
// its columnar snapshot built, then 15 small imports (5 new orders and 1 refund each), each
// followed by the 10-metric report by day over two years (Q2 of bench/reports.ts, in process, no
// HTTP, no cache); then a second engine started on the saved snapshot file, as after a restart.
// Prints the delta and report latencies, the file's size and the restart's timeline, and checks
// the last answer against the SQL engine.
// Usage: npm run build && TEST_ENGINE=postgres TEST_DATABASE_URL=… node dist/bench/deltas.js [orders=300000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { METRICS } from '../src/catalog.js';
import { generateDemoOrders, type DemoOrder } from '../src/demo/generate.js';
import { createOrganization } from '../src/domain/organizations.js';
import { importOrderRecords } from '../src/ingest/import.js';
import { ColumnarReportEngine, type SnapshotEvent } from '../src/metrics/columnar/columnar-engine.js';
import { SqlReportEngine } from '../src/metrics/engine.js';
import { NO_EXTENSIONS } from '../src/query/parse.js';
import { planReport } from '../src/query/plan.js';
import { openTestDatabase } from '../test/helpers/database.js';

const target = Number(process.argv[2] ?? 300_000);
if (!(Number.isInteger(target) && target >= 1000)) throw new Error('usage: deltas [orders ≥ 1000]');
const ms = (from: number) => Math.round(performance.now() - from);
const summary = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  return `p50 ${Math.round(sorted[sorted.length >> 1] ?? 0)} ms, max ${Math.round(sorted.at(-1) ?? 0)} ms`;
};

const { db, cleanup } = await openTestDatabase();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-deltas-'));
try {
  const organization = await createOrganization(db, { name: 'Deltas' });
  const today = new Date().toISOString().slice(0, 10);
  const records: DemoOrder[] = [];
  for (const order of generateDemoOrders({
    endDate: today,
    days: 1095,
    ordersPerDay: target / 1095,
    seed: 3,
  })) {
    records.push(order);
    if (records.length >= target) break;
  }
  let started = performance.now();
  await importOrderRecords(db, organization.id, records);
  console.log(`${db.engine}: ${records.length} orders imported in ${ms(started)} ms`);
  const events: SnapshotEvent[] = [];
  const options = { memoryBudgetBytes: 4 * 2 ** 30, buildWaitMs: 3_600_000, snapshotDir: dir };
  const sql = new SqlReportEngine(db);
  const engine = new ColumnarReportEngine(db, sql, { ...options, onEvent: (e) => events.push(e) });
  const from = new Date(Date.now() - 729 * 86_400_000).toISOString().slice(0, 10);
  const plan = planReport(
    {
      dimensions: ['date'],
      metrics: METRICS.map((m) => m.id),
      from,
      to: today,
      timezone: 'Europe/Paris',
      limit: 100_000,
      ...NO_EXTENSIONS,
    },
    organization,
  );
  started = performance.now();
  await engine.run(plan);
  console.log(`first report, building the snapshot: ${ms(started)} ms`);
  const quiet: number[] = [];
  for (let i = 0; i < 7; i++) {
    started = performance.now();
    await engine.run(plan);
    quiet.push(performance.now() - started);
  }
  const live: number[] = [];
  const imports: number[] = [];
  for (let i = 0; i < 15; i++) {
    const now = new Date().toISOString();
    const batch: object[] = records
      .slice(i * 6, i * 6 + 5)
      .map((o, k) => ({ ...o, id: `live-${i}-${k}`, created_at: now }));
    const refunded = records[1000 + i] as DemoOrder;
    batch.push({ ...refunded, refund_total: refunded.total });
    started = performance.now();
    await importOrderRecords(db, organization.id, batch);
    imports.push(performance.now() - started);
    started = performance.now();
    await engine.run(plan);
    live.push(performance.now() - started);
  }
  const deltas = events.flatMap((e) => (e.event === 'updated' ? [e.ms] : []));
  const same = JSON.stringify(await engine.run(plan)) === JSON.stringify(await sql.run(plan));
  console.log(`report quiet: ${summary(quiet)}; after each 6-order import: ${summary(live)}`);
  console.log(`imports (in process): ${summary(imports)}; deltas: ${deltas.length}, ${summary(deltas)}`);
  console.log(`last answer ${same ? 'identical to' : 'DIFFERENT FROM'} the SQL engine's`);
  for (let i = 0; i < 600 && !events.some((e) => e.event === 'saved'); i++) await sleep(100);
  const saved = events.find((e) => e.event === 'saved');
  const bytes = fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
  console.log(`snapshot file: ${(bytes / 1e6).toFixed(1)} MB, written in ${saved?.ms ?? '?'} ms`);
  const restart: SnapshotEvent[] = [];
  const restarted = new ColumnarReportEngine(db, sql, { ...options, onEvent: (e) => restart.push(e) });
  started = performance.now();
  await restarted.run(plan);
  const steps = restart.map((e) => `${e.event}${'ms' in e ? ` ${e.ms} ms` : ''}`).join(', ');
  console.log(`after a restart: first report ${ms(started)} ms (${steps})`);
  started = performance.now();
  await restarted.run(plan);
  console.log(
    `second report ${ms(started)} ms; snapshot memory ${Math.round(restarted.memoryInUse / 1e6)} MB`,
  );
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  await cleanup();
}
