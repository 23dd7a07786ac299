// PC1 on the columnar engine (issue 20): what a compared report costs beside a single one on the
// same snapshot. Imports N generated orders (three years) into an embedded database, builds the
// organization's snapshot, then times the same reports with and without `compare=previous_year`
// (and previous_period), alternating runs, and prints each median and the compared/single ratio,
// with the load average beside them (the machine is shared). The SQL engine's times for one
// report of each kind are printed too, for scale.
// Usage: npm run build --silent && node --max-old-space-size=4096 dist/bench/compare.js [orders, default 1000000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { METRICS } from '../src/catalog.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { generateDemoOrders } from '../src/demo/generate.js';
import { createOrganization } from '../src/domain/organizations.js';
import { importOrderRecords } from '../src/ingest/import.js';
import { ColumnarReportEngine } from '../src/metrics/columnar/columnar-engine.js';
import { SqlReportEngine } from '../src/metrics/engine.js';
import { resolveComparison } from '../src/query/compare.js';
import { addDays } from '../src/query/dates.js';
import { NO_EXTENSIONS, type TabularQuery } from '../src/query/parse.js';
import { planReport, type ReportPlan } from '../src/query/plan.js';

const target = Number(process.argv[2] ?? 1_000_000);
if (!(Number.isInteger(target) && target >= 1000)) throw new Error('usage: compare.js [orders ≥ 1000]');
const RUNS = 7;
const DAYS = 1095;
const today = new Date().toISOString().slice(0, 10);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-compare-'));
const db = await openDatabase(loadConfig({ DATA_DIR: dir }), { role: 'server' });
try {
  await migrate(db);
  const organization = await createOrganization(db, { name: 'Bench PC1' });
  const { id } = organization;
  let started = performance.now();
  const orders = generateDemoOrders({ endDate: today, days: DAYS, ordersPerDay: target / DAYS });
  const imported = await importOrderRecords(db, id, orders);
  console.log(
    `Imported ${imported.imported.toLocaleString('en')} orders in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  const sql = new SqlReportEngine(db);
  const columnar = new ColumnarReportEngine(db, sql, {
    memoryBudgetBytes: 2 * 1024 ** 3,
    buildWaitMs: 0,
  });
  started = performance.now();
  while (!(await columnar.currentSnapshot(id, 1000)))
    if (performance.now() - started > 900_000) throw new Error('no snapshot');
  console.log(`Snapshot built in ${((performance.now() - started) / 1000).toFixed(1)} s (load ${load()})`);

  const all = METRICS.map((m) => m.id);
  const shapes: Record<
    string,
    Pick<TabularQuery, 'dimensions' | 'metrics' | 'granularity'> & { days: number }
  > = {
    'totals, all metrics, 1 year': { dimensions: [], metrics: all, granularity: 'day', days: 365 },
    'by day, all metrics, 1 year': { dimensions: ['date'], metrics: all, granularity: 'day', days: 365 },
    'by month × country × customer type, 1 year': {
      dimensions: ['date', 'country', 'customer_type'],
      metrics: ['orders', 'net_revenue', 'new_customers'],
      granularity: 'month',
      days: 365,
    },
    'by day, orders and revenue, 90 days': {
      dimensions: ['date'],
      metrics: ['orders', 'net_revenue'],
      granularity: 'day',
      days: 90,
    },
  };
  const time = async (plan: ReportPlan, engine: { run(p: ReportPlan): Promise<unknown> }) => {
    const at = performance.now();
    await engine.run(plan);
    return performance.now() - at;
  };
  console.log(
    `\n${target.toLocaleString('en')} orders, columnar engine, median of ${RUNS} runs, Europe/Paris:`,
  );
  for (const [name, shape] of Object.entries(shapes)) {
    const query: TabularQuery = {
      ...NO_EXTENSIONS,
      ...shape,
      from: addDays(today, -(shape.days - 1)),
      to: today,
      timezone: 'Europe/Paris',
      limit: 100_000,
    };
    const single = planReport(query, organization);
    const compared = (compare: string) =>
      planReport({ ...query, comparison: resolveComparison({ compare }, query) }, organization);
    const plans = {
      single,
      previous_year: compared('previous_year'),
      previous_period: compared('previous_period'),
    };
    const times: Record<string, number[]> = { single: [], previous_year: [], previous_period: [] };
    for (let run = 0; run < RUNS; run++)
      for (const [kind, plan] of Object.entries(plans)) times[kind]?.push(await time(plan, columnar));
    const [s, y, p] = [
      median(times.single ?? []),
      median(times.previous_year ?? []),
      median(times.previous_period ?? []),
    ];
    console.log(
      `  ${name}: single ${s.toFixed(1)} ms, previous_year ${y.toFixed(1)} ms (×${(y / s).toFixed(2)}), ` +
        `previous_period ${p.toFixed(1)} ms (×${(p / s).toFixed(2)}); load ${load()}`,
    );
    const [sqlSingle, sqlCompared] = [await time(single, sql), await time(plans.previous_year, sql)];
    console.log(
      `    SQL engine, one run: single ${sqlSingle.toFixed(0)} ms, previous_year ${sqlCompared.toFixed(0)} ms`,
    );
  }
} finally {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
