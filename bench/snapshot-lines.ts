// The columnar snapshot with order lines (issue 27, item 2), in one process on a throwaway
// database: N demo orders imported twice, into an organization with their lines and into one
// without (the same orders), each one's snapshot built; then `product` × the six line metrics over
// two years answered from the snapshot, by the SQL engine, and by a plain scan of the same lines as
// typed arrays in this process (no HTTP, no cache). Prints the snapshot's bytes per line (the
// difference between the two snapshots over the lines), the two build times, each answer's median
// time and their ratios, and checks the three answers are equal.
// Usage: npm run build && node dist/bench/snapshot-lines.js [orders=100000]
//        (TEST_ENGINE=postgres TEST_DATABASE_URL=… for a PostgreSQL server)
import fs from 'node:fs';
import { generateDemoOrders, type DemoOrder } from '../src/demo/generate.js';
import { createOrganization } from '../src/domain/organizations.js';
import { importOrderRecords } from '../src/ingest/import.js';
import { ColumnarReportEngine, type SnapshotEvent } from '../src/metrics/columnar/columnar-engine.js';
import { executePlan } from '../src/metrics/columnar/execute.js';
import { SqlReportEngine, type ReportRows } from '../src/metrics/engine.js';
import { NO_EXTENSIONS } from '../src/query/parse.js';
import { planReport } from '../src/query/plan.js';
import { openTestDatabase } from '../test/helpers/database.js';

const target = Number(process.argv[2] ?? 100_000);
if (!(Number.isInteger(target) && target >= 1000)) throw new Error('usage: snapshot-lines [orders ≥ 1000]');
const LINE_METRICS = [
  'units_sold',
  'units_refunded',
  'product_gross_sales',
  'product_discounts',
  'product_refunds',
  'product_net_sales',
] as const;
const EXCLUDED = new Set(['pending', 'failed', 'cancelled', 'checkout-draft']); // S1's defaults
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const median = async (runs: number, work: () => Promise<unknown>): Promise<number> => {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return times.sort((x, y) => x - y)[times.length >> 1] as number;
};
const cents = (text: string): number => Math.round(Number(text) * 100);

const { db, cleanup } = await openTestDatabase();
try {
  const today = new Date().toISOString().slice(0, 10);
  const generate = (lines: boolean): DemoOrder[] => {
    const out: DemoOrder[] = [];
    for (const order of generateDemoOrders({
      endDate: today,
      days: 1095,
      ordersPerDay: target / 1095,
      seed: 3,
      lines,
    })) {
      out.push(order);
      if (out.length >= target) break;
    }
    return out;
  };
  const withLines = await createOrganization(db, { name: 'Avec lignes' });
  const without = await createOrganization(db, { name: 'Sans lignes' });
  const orders = generate(true);
  await importOrderRecords(db, withLines.id, orders);
  await importOrderRecords(db, without.id, generate(false));
  const [{ n: lineCount } = { n: 0 }] = await db.query<{ n: number }>(
    'SELECT count(*)::integer AS n FROM order_lines WHERE organization_id = $1',
    [withLines.id],
  );

  const events: SnapshotEvent[] = [];
  const sql = new SqlReportEngine(db);
  const engine = new ColumnarReportEngine(db, sql, {
    memoryBudgetBytes: 4 * 2 ** 30,
    buildWaitMs: 3_600_000,
    onEvent: (e) => events.push(e),
  });
  const build = async (id: string): Promise<{ ms: number; bytes: number }> => {
    const started = performance.now();
    await engine.prepare(id);
    const ms = performance.now() - started;
    const built = events.findLast((e) => e.event === 'built' && e.organizationId === id);
    return { ms, bytes: built && 'bytes' in built ? Number(built.bytes) : engine.memoryInUse };
  };
  const plain = await build(without.id);
  const lined = await build(withLines.id);

  const from = new Date(Date.now() - 729 * 86_400_000).toISOString().slice(0, 10);
  const plan = planReport(
    {
      dimensions: ['product'],
      metrics: [...LINE_METRICS],
      from,
      to: today,
      timezone: 'UTC',
      limit: 100_000,
      ...NO_EXTENSIONS,
    },
    withLines,
  );

  // The same lines as typed arrays, each with its order's instant and whether S1 excludes it.
  const start = Date.parse(`${from}T00:00:00Z`) / 1000;
  const end = Date.parse(`${today}T00:00:00Z`) / 1000 + 86_400;
  const names = new Map<string, number>();
  const n = orders.reduce((sum, o) => sum + (o.lines?.length ?? 0), 0);
  const [seconds, product, quantity, refundedQuantity, subtotal, discount, refunded] = [
    new Float64Array(n),
    ...Array.from({ length: 6 }, () => new Int32Array(n)),
  ] as [Float64Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];
  let l = 0;
  for (const order of orders) {
    const at = EXCLUDED.has(order.status) ? Infinity : Math.floor(Date.parse(order.created_at) / 1000);
    for (const line of order.lines ?? []) {
      let code = names.get(line.product_name);
      if (code === undefined) names.set(line.product_name, (code = names.size));
      seconds[l] = at;
      product[l] = code;
      quantity[l] = line.quantity;
      refundedQuantity[l] = line.refunded_quantity;
      subtotal[l] = cents(line.subtotal);
      discount[l] = cents(line.discount);
      refunded[l++] = cents(line.refunded_amount);
    }
  }
  const scan = (): ReportRows => {
    const sums = new Float64Array(names.size * 5);
    const seen = new Uint8Array(names.size);
    for (let k = 0; k < n; k++) {
      const t = seconds[k] as number;
      if (t < start || t >= end) continue;
      const p = product[k] as number;
      seen[p] = 1;
      sums[p * 5]! += (quantity[k] as number) - (refundedQuantity[k] as number);
      sums[p * 5 + 1]! += refundedQuantity[k] as number;
      sums[p * 5 + 2]! += subtotal[k] as number;
      sums[p * 5 + 3]! += discount[k] as number;
      sums[p * 5 + 4]! += refunded[k] as number;
    }
    const rows = [...names]
      .filter(([, p]) => seen[p] === 1)
      .sort(([x], [y]) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
      .map(([name, p]) => ({
        product: name,
        units_sold: sums[p * 5] as number,
        units_refunded: sums[p * 5 + 1] as number,
        product_gross_sales: (sums[p * 5 + 2] as number) / 100,
        product_discounts: (sums[p * 5 + 3] as number) / 100,
        product_refunds: (sums[p * 5 + 4] as number) / 100,
        product_net_sales:
          ((sums[p * 5 + 2] as number) - (sums[p * 5 + 3] as number) - (sums[p * 5 + 4] as number)) / 100,
      }));
    return { rows, truncated: false };
  };

  const fromSnapshot = await engine.run(plan);
  const fromSql = await sql.run(plan);
  const scanned = scan();
  const same = (x: ReportRows, y: ReportRows) => JSON.stringify(x) === JSON.stringify(y);
  if (!same(fromSnapshot, fromSql)) throw new Error('the snapshot and SQL answers differ');
  if (!same(fromSnapshot, scanned)) throw new Error('the snapshot and the scan answers differ');
  const snapshotMs = await median(7, () => engine.run(plan));
  const sqlMs = await median(3, () => sql.run(plan));
  const scanMs = await median(7, async () => scan());
  // The pass alone, without the request's read of the data version (X1: one query each request).
  const snapshot = await engine.currentSnapshot(withLines.id);
  if (!snapshot) throw new Error('no snapshot');
  const passMs = await median(7, () => executePlan(snapshot, plan, undefined));
  const bytesPerLine = (lined.bytes - plain.bytes) / lineCount;
  console.log(
    [
      `${db.engine}: ${orders.length} orders, ${lineCount} lines (${(lineCount / orders.length).toFixed(2)} an order), ${fromSnapshot.rows.length} products`,
      `snapshot: ${lined.bytes} bytes with lines, ${plain.bytes} without: ${bytesPerLine.toFixed(1)} bytes per line`,
      `build: ${lined.ms.toFixed(0)} ms with lines, ${plain.ms.toFixed(0)} ms without (×${(lined.ms / plain.ms).toFixed(2)})`,
      `product × 6 line metrics, 2 years (median): snapshot ${snapshotMs.toFixed(1)} ms, SQL ${sqlMs.toFixed(0)} ms, in-memory scan ${scanMs.toFixed(1)} ms`,
      `the snapshot's pass alone (no data version read): ${passMs.toFixed(1)} ms`,
      `ratios: snapshot / scan ${(snapshotMs / scanMs).toFixed(2)} (pass alone / scan ${(passMs / scanMs).toFixed(2)}), SQL / snapshot ${(sqlMs / snapshotMs).toFixed(1)}; answers equal; load ${load()}`,
    ].join('\n'),
  );
} finally {
  await cleanup();
}
