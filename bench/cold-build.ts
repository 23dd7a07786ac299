// The first build of a columnar snapshot, alone (issue 28, item 2), in one process on a throwaway
// database: N demo orders (with their lines unless `--no-lines`) imported, then the build's
// statements timed one by one — each shape of the read as a bare binary COPY whose output is only
// counted, the database's own plan of the build's statement (EXPLAIN ANALYZE), and whole builds
// (buildSnapshot: the COPY and the decoding), in turns, so that the figures are ratios of one
// sitting on a shared machine.
// With `--baseline MODULE` (another build-snapshot.js, e.g. a copy of an earlier dist), each run
// builds with it and with this one in turn, on the same data: old and new in one sitting.
// Usage: npm run build && node --max-old-space-size=4096 dist/bench/cold-build.js [--orders N] [--no-lines] [--runs R] [--explain]
//        [--no-shapes] [--statements: each statement of the builds timed]
//        [--replay: each COPY read once, then replayed from memory: the decoding alone, no database] [--baseline PATH] [--profile FILE.cpuprofile: the builds alone, not the import]   (TEST_ENGINE=postgres TEST_DATABASE_URL=… for a PostgreSQL server)
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { generateDemoOrders, type DemoOrder } from '../src/demo/generate.js';
import { createOrganization } from '../src/domain/organizations.js';
import { importOrderRecords } from '../src/ingest/import.js';
import { buildSnapshot, type SnapshotSource } from '../src/metrics/columnar/build-snapshot.js';
import { ORDER_FIELDS } from '../src/metrics/columnar/order-columns.js';
import { engine, openTestDatabase } from '../test/helpers/database.js';

const { values: args } = parseArgs({
  options: {
    orders: { type: 'string', default: '300000' },
    'no-lines': { type: 'boolean', default: false },
    runs: { type: 'string', default: '2' },
    explain: { type: 'boolean', default: false },
    'no-shapes': { type: 'boolean', default: false },
    baseline: { type: 'string' },
    profile: { type: 'string' },
    statements: { type: 'boolean', default: false },
    replay: { type: 'boolean', default: false },
  },
});
const target = Number(args.orders);
const RUNS = Number(args.runs);
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);

const shown = (column: string): string => `coalesce(nullif(${column}, ''), 'Unknown')`;
const AGGREGATES = `array_agg(${shown('l.product_name')}) AS product,
  array_agg(${shown('l.product_id')}) AS product_id, array_agg(${shown('l.variant_name')}) AS variant,
  array_agg(${shown('l.sku')}) AS sku, array_agg(to_json(l.categories)::text) AS categories,
  array_agg(l.quantity) AS quantity, array_agg(l.refunded_quantity) AS refunded_quantity,
  array_agg(l.subtotal) AS subtotal, array_agg(l.discount) AS discount, array_agg(l.refunded_amount) AS refunded_amount`;
const PLAIN = `${shown('l.product_name')}, ${shown('l.product_id')}, ${shown('l.variant_name')}, ${shown('l.sku')},
  to_json(l.categories)::text, l.quantity, l.refunded_quantity, l.subtotal, l.discount, l.refunded_amount`;

const { db, cleanup } = await openTestDatabase();
try {
  const organization = await createOrganization(db, { name: 'Démarrage à froid' });
  const today = new Date().toISOString().slice(0, 10);
  let batch: DemoOrder[] = [];
  let written = 0;
  const started = performance.now();
  for (const order of generateDemoOrders({
    endDate: today,
    days: 1095,
    ordersPerDay: (target / 1095) * 1.1,
    seed: 7,
    lines: !args['no-lines'],
  })) {
    if (written === target) break;
    batch.push(order);
    written++;
    if (batch.length === 100_000) {
      await importOrderRecords(db, organization.id, batch);
      batch = [];
    }
  }
  if (batch.length > 0) await importOrderRecords(db, organization.id, batch);
  await db.query('ANALYZE');
  const [counts] = await db.query<{ orders: number; lines: number }>(
    `SELECT (SELECT count(*)::integer FROM orders) AS orders, (SELECT count(*)::integer FROM order_lines) AS lines`,
  );
  log(
    `${engine}: ${counts?.orders} orders, ${counts?.lines} lines imported in ${((performance.now() - started) / 1000).toFixed(1)} s; load ${load()}`,
  );

  const id = BigInt(organization.id);
  const copyMs = async (sql: string): Promise<[number, number]> => {
    let bytes = 0;
    const t = performance.now();
    await db.copyOut(`COPY (${sql}) TO STDOUT (FORMAT binary)`, (data) => {
      bytes += data.length;
    });
    return [performance.now() - t, bytes];
  };
  const shapes: Record<string, string> = {
    'orders alone (after)': `SELECT ${ORDER_FIELDS} FROM orders o WHERE o.organization_id = ${id}`,
    'orders with lines, lateral per order (before)': `SELECT ${ORDER_FIELDS}, k.* FROM orders o LEFT JOIN LATERAL (SELECT ${AGGREGATES}
      FROM order_lines l WHERE l.organization_id = o.organization_id AND l.store_id = o.store_id AND l.external_id = o.external_id) k ON true
      WHERE o.organization_id = ${id}`,
    'orders with grouped lines, joined': `SELECT ${ORDER_FIELDS}, k.* FROM orders o LEFT JOIN (SELECT l.store_id, l.external_id, ${AGGREGATES}
      FROM order_lines l WHERE l.organization_id = ${id} GROUP BY l.store_id, l.external_id) k
      ON k.store_id = o.store_id AND k.external_id = o.external_id WHERE o.organization_id = ${id}`,
    'orders alone, by key': `SELECT o.store_id, o.external_id, ${ORDER_FIELDS} FROM orders o WHERE o.organization_id = ${id} ORDER BY o.store_id, o.external_id`,
    'lines alone, by key': `SELECT l.store_id, l.external_id, ${PLAIN} FROM order_lines l WHERE l.organization_id = ${id} ORDER BY l.store_id, l.external_id`,
    'lines alone, raw columns': `SELECT l.store_id, l.external_id, l.product_name, l.product_id, l.variant_name, l.sku, l.categories,
      l.quantity, l.refunded_quantity, l.subtotal, l.discount, l.refunded_amount FROM order_lines l WHERE l.organization_id = ${id}`,
    'lines alone, raw but categories as JSON': `SELECT l.store_id, l.external_id, l.product_name, l.product_id, l.variant_name, l.sku, to_json(l.categories)::text,
      l.quantity, l.refunded_quantity, l.subtotal, l.discount, l.refunded_amount FROM order_lines l WHERE l.organization_id = ${id}`,
    'lines alone, heap order (after)': `SELECT l.store_id, l.external_id, ${PLAIN} FROM order_lines l WHERE l.organization_id = ${id}`,
  };
  if (args.explain) {
    for (const [name, sql] of Object.entries(shapes)) {
      const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${sql}`);
      log(`EXPLAIN ANALYZE ${name}:\n${plan.map((row) => `    ${row['QUERY PLAN']}`).join('\n')}`);
    }
  }
  const builds: [string, typeof buildSnapshot][] = [['buildSnapshot', buildSnapshot]];
  if (args.baseline) {
    const baseline = (await import(pathToFileURL(path.resolve(args.baseline)).href)) as {
      buildSnapshot: typeof buildSnapshot;
    };
    builds.unshift(['buildSnapshot (baseline)', baseline.buildSnapshot]);
  }
  const profiler = args.profile ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  // Issue 28, item 3: on the embedded database a statement holds the one session for everyone.
  const timed: SnapshotSource = !args.statements
    ? db
    : {
        engine: db.engine,
        transaction: (work) => db.transaction(work),
        query: async (sql, params) => {
          const t = performance.now();
          try {
            return await db.query(sql, params);
          } finally {
            log(
              `  statement ${(performance.now() - t).toFixed(0)} ms: ${sql.replace(/\s+/g, ' ').slice(0, 90)}`,
            );
          }
        },
        copyOut: async (sql, onData) => {
          const t = performance.now();
          let first: number | undefined;
          try {
            await db.copyOut(
              sql,
              (data, from, to) => ((first ??= performance.now()), onData(data, from, to)),
            );
          } finally {
            const at = ((first ?? performance.now()) - t).toFixed(0);
            const pages = [...sql.matchAll(/'\((\d+),0\)'/g)].map((m) => m[1]);
            const range = pages.length === 0 ? 'whole' : `pages ${pages.join('–')}`;
            log(
              `  COPY ${(performance.now() - t).toFixed(0)} ms (first byte after ${at} ms): ${sql.slice(14, 40)}… ${range}`,
            );
          }
        },
      };
  // The COPY output kept by statement, the same for both builds on PostgreSQL (one statement a table).
  const kept = new Map<string, Buffer[]>();
  const source: SnapshotSource = !args.replay
    ? timed
    : {
        engine: timed.engine,
        query: (sql, params) => timed.query(sql, params),
        transaction: (work) => timed.transaction(work),
        copyOut: async (sql, onData) => {
          let pieces = kept.get(sql);
          if (!pieces) {
            // Kept in pieces of about a MiB (the output comes a message, a row, at a time).
            const read: Buffer[] = [];
            let gathering: Buffer[] = [];
            let size = 0;
            const gathered = () => (read.push(Buffer.concat(gathering)), (gathering = []), (size = 0));
            await timed.copyOut(sql, (data, from, to) => {
              gathering.push(Buffer.from(data.subarray(from, to)));
              if ((size += to - from) >= 2 ** 20) gathered();
            });
            if (size > 0) gathered();
            kept.set(sql, (pieces = read));
          }
          for (const piece of pieces) await onData(piece, 0, piece.length);
        },
      };
  if (args.replay) {
    await buildSnapshot(source, organization.id, { maxBytes: 8 * 2 ** 30 }); // fills `kept`
  }
  for (let run = 0; run < RUNS; run++) {
    for (const [name, sql] of args['no-shapes'] ? [] : Object.entries(shapes)) {
      const [ms, bytes] = await copyMs(sql);
      log(`COPY ${name}: ${ms.toFixed(0)} ms, ${(bytes / 2 ** 20).toFixed(1)} MiB; load ${load()}`);
    }
    // Alternated, the first one changing each run: neither always reads a cold cache.
    for (const [name, build] of run % 2 === 0 ? builds : [...builds].reverse()) {
      const t = performance.now();
      const cpu = process.cpuUsage();
      // Issue 28: when the orders alone answer (a build that has the option; a baseline may not).
      let ordersMs: number | undefined;
      const built = await build(source, organization.id, {
        maxBytes: 8 * 2 ** 30,
        onOrders: () => (ordersMs = performance.now() - t),
      });
      if (!built || !('addPart' in built)) throw new Error(`no snapshot: ${JSON.stringify(built)}`);
      // This process's CPU (all its threads: the embedded database's worker too): on a loaded
      // machine, what the decoding costs whatever the wait for a core.
      const { user, system } = process.cpuUsage(cpu);
      const cpuMs = ((user + system) / 1000).toFixed(0);
      const orders = ordersMs === undefined ? '' : `, orders ready after ${ordersMs.toFixed(0)} ms`;
      log(`${name}: ${(performance.now() - t).toFixed(0)} ms${orders}, CPU ${cpuMs} ms; load ${load()}`);
    }
  }
  if (profiler && args.profile) {
    const { profile } = await profiler.post('Profiler.stop');
    fs.writeFileSync(args.profile, JSON.stringify(profile));
    log(`profile of the builds: ${args.profile}`);
  }
} finally {
  await cleanup();
}
