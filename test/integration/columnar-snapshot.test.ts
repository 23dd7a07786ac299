// The columnar snapshot's read path (issue 9): binary COPY decoded into columns. Its decoding
// against the database's own arithmetic on edge values, a snapshot's contents against the orders
// read back by SQL (every order once, exact cents and seconds, each customer's orders in one run,
// nothing of another organization), whether read in one statement or in chunks of pages, the
// orders' lines read after them (issue 28, item 2), amounts past exact range, and a COPY that
// fails or whose reader fails.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOrganization } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { buildSnapshot, type SnapshotSource } from '../../src/metrics/columnar/build-snapshot.js';
import { readDelta, REBUILD } from '../../src/metrics/columnar/delta.js';
import { newProgress } from '../../src/metrics/columnar/build-progress.js';
import { BinaryCopyRows, epochSeconds, numericCents } from '../../src/metrics/columnar/copy-binary.js';
import type { Part, Snapshot } from '../../src/metrics/columnar/snapshot.js';
import { engine, openTestDatabase, testOn, type TestDatabase } from '../helpers/database.js';

/** Amounts within int32 cents (what a snapshot holds), and past it. */
const AMOUNTS = ['0', '0.01', '0.05', '1', '99.99', '10000', '10000.01', '21474836.47'];
const MORE_AMOUNTS = ['-0.01', '-1', '-21474836.48', '21474836.48', '123456789.12', '99999999999999.99'];
const INSTANTS = [
  '2000-01-01 00:00:00+00',
  '2000-01-01 00:00:00.000001+00',
  '1999-12-31 23:59:59.999999+00',
  '1969-12-31 23:59:59.5+00',
  '1900-03-01 12:00:00+00',
  '2026-03-29 01:59:59.999999+00',
  '2262-04-11 23:47:16.854775+00',
  '4713-01-01 00:00:00+00 BC',
  'infinity',
  '-infinity',
];

/** Each order of one organization as text, and its customer (null: anonymous), by SQL. */
async function ordersBySql(db: TestDatabase['db'], organizationId: string) {
  const rows = await db.query<{ c: string | null; r: string }>(
    `SELECT o.customer AS c, concat_ws(',', floor(extract(epoch FROM o.created_at))::float8, s.address, o.status,
       coalesce(o.billing_country, 'Unknown'), o.items, (o.total * 100)::float8, (o.tax_total * 100)::float8,
       (o.shipping_total * 100)::float8, (o.fee_total * 100)::float8, (o.refund_total * 100)::float8,
       (o.refund_tax * 100)::float8, (o.refund_shipping * 100)::float8) AS r
     FROM orders o JOIN stores s ON s.organization_id = o.organization_id AND s.id = o.store_id
     WHERE o.organization_id = $1`,
    [organizationId],
  );
  const runs = new Map<string, string[]>();
  const anonymous: string[] = [];
  for (const row of rows) {
    if (row.c === null) anonymous.push(row.r);
    else runs.set(row.c, [...(runs.get(row.c) ?? []), row.r]);
  }
  return canonical([...runs.values()], anonymous);
}

/** The same of a snapshot: its runs of customers' orders, and its anonymous orders (retired ones left out). */
function ordersOf(s: Snapshot) {
  const runs: string[][] = [];
  const anonymous: string[] = [];
  for (const p of s.parts) {
    const row = (i: number) =>
      [
        p.seconds[i],
        s.stores.values[s.attributes.store[p.attribute[i]!]!],
        s.statuses.values[s.attributes.status[p.attribute[i]!]!],
        s.countries.values[s.attributes.country[p.attribute[i]!]!],
        p.items[i],
        p.total[i],
        p.taxTotal[i],
        p.shippingTotal[i],
        p.feeTotal[i],
        p.refundTotal[i],
        p.refundTax[i],
        p.refundShipping[i],
      ].join(',');
    for (let c = 0; c < p.customerCount; c++) {
      if (p.retiredRuns?.[c] === 1) continue;
      const run: string[] = [];
      for (let i = p.runStart[c]!; i < p.runStart[c + 1]!; i++) run.push(row(i));
      runs.push(run);
    }
    const from = p.runStart[p.customerCount]!;
    for (let i = from; i < p.orderCount; i++) if (p.retiredOrders?.[i] !== 1) anonymous.push(row(i));
  }
  return canonical(runs, anonymous);
}

/** Each order of one organization with its lines (section 15) as text, by SQL. */
async function linesBySql(db: TestDatabase['db'], organizationId: string): Promise<string[]> {
  const rows = await db.query<{ r: string }>(
    `SELECT concat_ws(':', floor(extract(epoch FROM o.created_at))::float8, (o.total * 100)::float8,
       (SELECT string_agg(concat_ws('/', l.quantity, (l.subtotal * 100)::float8, l.refunded_quantity), ' '
          ORDER BY l.quantity, l.subtotal) FROM order_lines l
        WHERE l.organization_id = o.organization_id AND l.store_id = o.store_id AND l.external_id = o.external_id)) AS r
     FROM orders o WHERE o.organization_id = $1`,
    [organizationId],
  );
  return rows.map((row) => row.r).sort();
}

/** The same of a snapshot (retired orders left out). */
function linesOf(s: Snapshot): string[] {
  const out: string[] = [];
  for (const p of s.parts) {
    const anonymousFrom = p.runStart[p.customerCount]!;
    const retired = (i: number) =>
      i >= anonymousFrom
        ? p.retiredOrders?.[i] === 1
        : p.retiredRuns?.[p.runStart.findLastIndex((start) => start <= i)] === 1;
    for (let i = 0; i < p.orderCount; i++) {
      if (retired(i)) continue;
      const lines: [number, number, number][] = [];
      for (let l = p.lines.lineStart[i]!; l < p.lines.lineStart[i + 1]!; l++)
        lines.push([p.lines.quantity[l]!, p.lines.subtotal[l]!, p.lines.refundedQuantity[l]!]);
      lines.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      const text = lines.map((line) => line.join('/')).join(' ');
      out.push([p.seconds[i], p.total[i], ...(text ? [text] : [])].join(':'));
    }
  }
  return out.sort();
}

/** Orders with 0 to 3 lines each (section 15). */
function linedOrders(prefix: string, count: number) {
  return orders(prefix, count, 50).map((order, n) => ({
    ...order,
    lines: Array.from({ length: n % 4 }, (_, k) => ({
      line_id: `${prefix}${n}-${k}`,
      product_name: `Produit ${k}`,
      categories: k === 1 ? ['Thé', 'Vrac'] : [],
      quantity: 1 + ((n + k) % 5),
      subtotal: `${(n % 90) + k}.${k}5`,
      ...(k === 2 ? { refunded_quantity: 1, refunded_amount: '1.00' } : {}),
    })),
  }));
}

/**
 * Each run in time order (a report finds a customer's first order at its start), and customers
 * in the order of their first order's day.
 */
function assertRunsInOrder(s: Part) {
  let lastDay = -Infinity;
  for (let c = 0; c < s.customerCount; c++) {
    const [from, to] = [s.runStart[c]!, s.runStart[c + 1]!];
    assert.ok(to > from, `customer ${c} has orders`);
    for (let i = from + 1; i < to; i++)
      assert.ok(s.seconds[i - 1]! <= s.seconds[i]!, `run ${c} in time order`);
    const day = Math.floor(s.seconds[from]! / 86_400);
    assert.ok(day >= lastDay, `customer ${c} after those who started earlier`);
    lastDay = day;
  }
}

/** Order-free form: the database returns rows in any order, the snapshot keeps customers in runs. */
function canonical(runs: string[][], anonymous: string[]) {
  return {
    runs: runs.map((run) => run.sort().join(' | ')).sort(),
    anonymous: anonymous.sort(),
  };
}

function orders(prefix: string, count: number, customers: number) {
  return Array.from({ length: count }, (_, n) => ({
    store: n % 3 === 0 ? 'https://a.example' : 'https://b.example',
    id: `${prefix}${n}`,
    created_at: new Date(Date.UTC(2025, 0, 1) + n * 3_600_123 + (n % 7)).toISOString(),
    status: ['completed', 'refunded', '𝒮tatus'][n % 3] as string,
    ...(n % 4 === 0 ? {} : { billing_country: n % 4 === 1 ? 'FR' : 'DE' }),
    ...(n % 5 === 0 ? {} : { customer_email: `client${(n * 7) % customers}@example.com` }),
    items: n % 4,
    total: AMOUNTS[n % AMOUNTS.length]!,
    tax_total: (n % 3).toFixed(2),
    refund_total: n % 6 === 0 ? '0.50' : '0',
  }));
}

describe('columnar snapshot read path', () => {
  let database: TestDatabase;
  let a: string;
  let b: string;
  let statements: string[];
  let source: SnapshotSource;

  before(async () => {
    database = await openTestDatabase();
    const { db } = database;
    statements = [];
    source = {
      engine: db.engine,
      query: (sql, params) => db.query(sql, params),
      copyOut: (sql, onData) => (statements.push(sql), db.copyOut(sql, onData)),
      transaction: (work) => db.transaction(work),
    };
    a = (await createOrganization(db, { name: 'Lecture A' })).id;
    b = (await createOrganization(db, { name: 'Lecture B' })).id;
    // Interleaved on the table's pages: A, then B with the same customers, then A again.
    for (const [id, prefix, count, customers] of [
      [a, 'a', 700, 90],
      [b, 'b', 600, 90],
      [a, 'c', 700, 120],
    ] as const) {
      const result = await importOrderRecords(db, id, orders(prefix, count, customers));
      assert.equal(result.imported, count, JSON.stringify(result.errors));
    }
    // What an import cannot write: negative amounts, instants before 1970, a moved row.
    await db.query(
      `UPDATE orders SET fee_total = -fee_total - 0.01, created_at = created_at - interval '60 years'
       WHERE organization_id = $1 AND external_id LIKE 'a1%'`,
      [a],
    );
  });
  after(async () => database?.cleanup());

  test('binary COPY decodes as the database computes', async () => {
    const decoded: number[][] = [];
    const expected: number[][] = [];
    const rows = new BinaryCopyRows(4, (data) => {
      const text = (f: number) => data.toString('utf8', rows.starts[f], rows.starts[f]! + rows.lengths[f]!);
      decoded.push([numericCents(data, rows.starts[0]!), epochSeconds(data, rows.starts[2]!)]);
      expected.push([Number(text(1)), Number(text(3))]);
    });
    const list = (items: string[]) => items.map((v) => `'${v}'`).join(', ');
    await database.db.copyOut(
      `COPY (SELECT n, (n * 100)::float8::text, t, floor(extract(epoch FROM t))::float8::text FROM (
         SELECT n, timestamptz '2000-01-01 00:00:00+00' AS t
         FROM unnest(ARRAY[${list([...AMOUNTS, ...MORE_AMOUNTS])}]::numeric(16,2)[]) AS n
         UNION ALL SELECT 0, t FROM unnest(ARRAY[${list(INSTANTS)}]::timestamptz[]) AS t
       ) x) TO STDOUT (FORMAT binary)`,
      (data, from, to) => {
        // One byte at a time: every field and the header cut by a piece's end.
        for (let at = from; at < to; at++) rows.write(data, at, at + 1);
      },
    );
    rows.end();
    assert.equal(decoded.length, AMOUNTS.length + MORE_AMOUNTS.length + INSTANTS.length);
    assert.deepStrictEqual(decoded, expected);
  });

  test('every order once, exact, each customer in one run, in one statement or in chunks of pages', async () => {
    for (const [chunkRows, many, customerBatchOrders, customerStepKeys] of [
      [undefined, false, undefined, undefined],
      [50, engine === 'embedded', undefined, undefined], // on a server, one statement whatever the chunk size
      // Issue 28: the first orders' customers coded together (customer-batch.ts), the rest looked
      // up one at a time: a customer of both still has one run.
      [undefined, false, 7, undefined],
      [50, engine === 'embedded', 30, undefined],
      // Read by pages, the batch coded a step at a time between two pieces (embedded).
      [50, engine === 'embedded', undefined, 3],
      [50, engine === 'embedded', 40, 4],
    ] as const) {
      statements.length = 0;
      const live = await buildSnapshot(source, a, {
        maxBytes: 1 << 24,
        ...(chunkRows ? { chunkRows } : {}),
        ...(customerBatchOrders ? { customerBatchOrders } : {}),
        ...(customerStepKeys ? { customerStepKeys } : {}),
      });
      assert.ok(live && !('reason' in live));
      assert.deepStrictEqual(ordersOf(live.view()), await ordersBySql(database.db, a));
      assert.equal(live.parts.length, 1);
      assertRunsInOrder(live.parts[0]!);
      assert.equal(statements.length > 1, many, `${statements.length} COPY statements`);
      assert.ok(statements.every((sql) => new RegExp(`[ol]\\.organization_id = ${a}\\b`).test(sql)));
    }
    const other = await buildSnapshot(source, b, { maxBytes: 1 << 24, chunkRows: 50 });
    assert.ok(other && !('reason' in other));
    assert.deepStrictEqual(ordersOf(other.view()), await ordersBySql(database.db, b));
  });

  testOn('embedded', 'the next pages are asked for while the last ones are decoded (issue 28)', async () => {
    const { db } = database;
    const org = (await createOrganization(db, { name: 'Pages en file' })).id;
    const result = await importOrderRecords(db, org, orders('p', 6000, 900));
    assert.equal(result.imported, 6000, JSON.stringify(result.errors));
    const progress = newProgress('embedded');
    /** For each statement of orders: the rows decoded when it started, and the rows it sent. */
    const statements: { decodedBefore: number; sent: number }[] = [];
    const watched: SnapshotSource = {
      ...source,
      copyOut: async (sql, onData) => {
        if (!sql.includes('FROM orders')) return db.copyOut(sql, onData);
        const statement = { decodedBefore: progress.read, sent: 0 };
        statements.push(statement);
        const counted = new BinaryCopyRows(14, () => statement.sent++);
        await db.copyOut(sql, (data, from, to) => {
          counted.write(data, from, to);
          return onData(data, from, to);
        });
        counted.end();
      },
    };
    // About 1,500 orders a statement: some 350 kB, decoded over several turns of the event loop.
    const live = await buildSnapshot(watched, org, { maxBytes: 1 << 26, chunkRows: 2000, progress });
    assert.ok(live && !('reason' in live));
    assert.deepStrictEqual(ordersOf(live.view()), await ordersBySql(db, org));
    assert.ok(statements.length >= 3, `${statements.length} statements`);
    assert.equal(
      statements.reduce((sum, { sent }) => sum + sent, 0),
      6000,
    );
    // Started before the rows of the statements before it were all decoded.
    let sentBefore = 0;
    let overlapped = 0;
    for (const { decodedBefore, sent } of statements) {
      if (decodedBefore < sentBefore) overlapped++;
      sentBefore += sent;
    }
    assert.ok(overlapped >= statements.length - 2, JSON.stringify(statements));
  });

  test('lines read after their orders find them, in one statement or in chunks of pages (read ahead or not); a line written in between is left to the delta (issue 28)', async () => {
    const { db } = database;
    const lined = (await createOrganization(db, { name: 'Lignes' })).id;
    const other = (await createOrganization(db, { name: 'Autres lignes' })).id;
    // Interleaved on both tables' pages, the same external ids in the other organization.
    for (const [id, prefix] of [
      [lined, 'l'],
      [other, 'l'],
      [lined, 'm'],
    ] as const) {
      const result = await importOrderRecords(db, id, linedOrders(prefix, 300));
      assert.equal(result.imported, 300, JSON.stringify(result.errors));
    }
    const expected = await linesBySql(db, lined);
    // linesAhead: a command's build, the next statement of lines asked for before one is decoded.
    for (const [chunkRows, linesAhead] of [
      [undefined, false],
      [40, false],
      [40, true],
    ] as const) {
      statements.length = 0;
      const live = await buildSnapshot(source, lined, {
        maxBytes: 1 << 24,
        ...(chunkRows ? { chunkRows } : {}),
        ...(linesAhead ? { linesAhead } : {}),
      });
      assert.ok(live && !('reason' in live));
      assert.deepStrictEqual(linesOf(live.view()), expected);
      const lineStatements = statements.filter((sql) => sql.includes('FROM order_lines'));
      assert.equal(lineStatements.length > 1, chunkRows !== undefined && engine === 'embedded');
      assert.ok(
        statements.every((sql) => !/LATERAL|array_agg/i.test(sql)),
        'no aggregate per order',
      );
    }
    // Written between the orders' COPY and the lines': a new order, an order's lines replaced.
    let written = false;
    const between: SnapshotSource = {
      ...source,
      copyOut: async (sql, onData) => {
        if (!written && sql.includes('FROM order_lines')) {
          written = true;
          const [changed] = linedOrders('l', 8).slice(7);
          await importOrderRecords(db, lined, [
            ...linedOrders('n', 4).slice(3),
            { ...changed!, lines: [{ line_id: 'x', product_name: 'Autre', quantity: 9, subtotal: '9.99' }] },
          ]);
        }
        return db.copyOut(sql, onData);
      },
    };
    const live = await buildSnapshot(between, lined, { maxBytes: 1 << 24 });
    assert.ok(written && live && !('reason' in live));
    assert.equal(live.view().parts[0]!.orderCount, 600, 'the new order is not in the build');
    const delta = await readDelta(db, lined, live.databaseSnapshot, 10_000);
    assert.ok(delta && delta !== REBUILD);
    assert.ok(await live.apply(delta, 1 << 20));
    assert.deepStrictEqual(linesOf(live.view()), await linesBySql(db, lined));
  });

  test('deltas bring a snapshot to what the database holds: appended, replaced, moved, deleted, compacted (issue 19)', async () => {
    const { db } = database;
    const org = (await createOrganization(db, { name: 'Deltas' })).id;
    await importOrderRecords(db, org, orders('d', 300, 40));
    const live = await buildSnapshot(source, org, { maxBytes: 1 << 24, chunkRows: 50 });
    assert.ok(live && !('reason' in live));
    const catchUp = async (expectedParts: number) => {
      const delta = await readDelta(db, org, live.databaseSnapshot, 10_000);
      assert.ok(delta && delta !== REBUILD);
      assert.ok(await live.apply(delta, 1 << 20));
      assert.equal(live.parts.length, expectedParts);
      assert.deepStrictEqual(ordersOf(live.view()), await ordersBySql(db, org));
      return delta;
    };
    // Nothing changed: an empty delta.
    assert.equal((await catchUp(1)).orders.length, 0);
    // New orders, one re-imported with another customer and amount, one made anonymous (I2).
    const before = live.view();
    await importOrderRecords(db, org, [
      ...orders('n', 12, 7),
      { ...orders('d', 2, 40)[1]!, customer_email: 'someone-else@example.com', total: '12.34' },
      { ...orders('d', 4, 40)[3]!, customer_email: undefined },
    ]);
    await catchUp(2);
    // A report that took the view before the delta still reads it whole.
    assert.deepStrictEqual(
      before.parts.map((p) => p.retiredRuns),
      [undefined],
    );
    // Updates by hand (stamped by the trigger, migration 012), deletions of customers' and anonymous orders.
    await db.query(
      `UPDATE orders SET status = 'cancelled' WHERE organization_id = $1 AND external_id IN ('d7', 'd10', 'n3')`,
      [org],
    );
    await db.query(`DELETE FROM orders WHERE organization_id = $1 AND external_id IN ('d15', 'd20', 'n5')`, [
      org,
    ]);
    await catchUp(3);
    // A store removed with its orders.
    await db.query(`DELETE FROM stores WHERE organization_id = $1 AND address = 'https://a.example'`, [org]);
    await catchUp(4);
    assert.ok(live.needsCompaction() || live.parts.length === 4);
    await live.compact();
    assert.equal(live.parts.length, 1);
    assert.deepStrictEqual(ordersOf(live.view()), await ordersBySql(db, org));
    await importOrderRecords(db, org, orders('z', 5, 3));
    await catchUp(2);
  });

  test('a trickle of small deltas: the small parts fold together without the first, then all of them (issue 19)', async () => {
    const { db } = database;
    const org = (await createOrganization(db, { name: 'Filet' })).id;
    await importOrderRecords(db, org, orders('t', 300, 40));
    const live = await buildSnapshot(source, org, { maxBytes: 1 << 24 });
    assert.ok(live && !('reason' in live));
    const first = live.parts[0];
    const catchUp = async () => {
      const delta = await readDelta(db, org, live.databaseSnapshot, 10_000);
      assert.ok(delta && delta !== REBUILD);
      assert.ok(await live.apply(delta, 1 << 20));
      assert.deepStrictEqual(ordersOf(live.view()), await ordersBySql(db, org));
    };
    // Each step: new orders, and orders of the first part re-imported (their customers' runs move,
    // anonymous ones are replaced), some of them already moved once into a later part.
    const step = async (n: number) => {
      const again = orders('t', 300, 40).filter((_, i) => i % 37 === n % 37 || i % 50 === 0);
      await importOrderRecords(db, org, [
        ...orders(`u${n}-`, 3, 5),
        ...again.map((o) => ({ ...o, total: `${n + 1}.00` })),
      ]);
      await catchUp();
    };
    for (let n = 0; n < 9; n++) await step(n);
    assert.equal(live.parts.length, 10);
    assert.equal(live.compactionNeeded(1_000_000), 'tail');
    await live.compact('tail');
    // Only the parts after the first were copied: its cost follows the trickle, not the organization.
    assert.equal(live.parts.length, 2);
    assert.equal(live.parts[0]?.orderCount, first?.orderCount);
    assert.deepStrictEqual(live.parts[0]?.runCustomer, first?.runCustomer);
    assert.deepStrictEqual(ordersOf(live.view()), await ordersBySql(db, org));
    // What a whole compaction would still fold: the first part's retired orders, no more.
    const [kept] = live.parts as [Part];
    const anonymousFrom = kept.runStart[kept.customerCount]!;
    let retired = kept.retiredOrders?.subarray(anonymousFrom).reduce((n: number, flag) => n + flag, 0) ?? 0;
    for (let r = 0; r < kept.customerCount; r++)
      if (kept.retiredRuns?.[r] === 1) retired += kept.runStart[r + 1]! - kept.runStart[r]!;
    assert.ok(retired > 0);
    assert.equal(live.retiredOrders, retired);
    assert.equal(live.compactionNeeded(1_000_000), undefined);
    // Deltas after the fold find each customer where it now is (the first part or the folded one).
    for (let n = 9; n < 12; n++) await step(n);
    assert.equal(live.compactionNeeded(10), 'all');
    await live.compact('all');
    assert.equal(live.parts.length, 1);
    assert.equal(live.retiredOrders, 0);
    assert.deepStrictEqual(ordersOf(live.view()), await ordersBySql(db, org));
    await step(12);
  });

  test('an update by hand leaves one retirement row per order, stamped once (issue 19, migration 016)', async () => {
    const { db } = database;
    const org = (await createOrganization(db, { name: 'Retraits' })).id;
    await importOrderRecords(db, org, orders('r', 20, 5));
    const count = async () =>
      Number(
        (
          await db.query<{ n: string }>(
            'SELECT count(*) AS n FROM order_retirements WHERE organization_id = $1',
            [org],
          )
        )[0]?.n,
      );
    const before = await count();
    // Not stamped by the statement (psql): the trigger stamps it, and that stamping is no retirement.
    await db.query(
      `UPDATE orders SET status = 'cancelled' WHERE organization_id = $1 AND external_id IN ('r1', 'r2', 'r3')`,
      [org],
    );
    assert.equal(await count(), before + 3);
    const [stamps] = await db.query<{ n: string }>(
      `SELECT count(DISTINCT change_xid) AS n FROM orders WHERE organization_id = $1 AND external_id IN ('r1', 'r2', 'r3')`,
      [org],
    );
    assert.equal(Number(stamps?.n), 1);
    // A deletion retires each order once too.
    await db.query(`DELETE FROM orders WHERE organization_id = $1 AND external_id IN ('r4', 'r5')`, [org]);
    assert.equal(await count(), before + 5);
  });

  test('a delta too large to list, or larger than allowed, asks for a rebuild (issue 19)', async () => {
    const { db } = database;
    const org = (await createOrganization(db, { name: 'Grand delta' })).id;
    await importOrderRecords(db, org, orders('x', 50, 10));
    const live = await buildSnapshot(source, org, { maxBytes: 1 << 24 });
    assert.ok(live && !('reason' in live));
    await importOrderRecords(db, org, orders('y', 30, 10));
    assert.equal(await readDelta(db, org, live.databaseSnapshot, 20), REBUILD);
    const delta = await readDelta(db, org, live.databaseSnapshot, 1000);
    assert.ok(delta && delta !== REBUILD && delta.orders.length >= 30);
  });

  test('an amount past exact int32 cents leaves the organization to SQL', async () => {
    const { db } = database;
    const big = (await createOrganization(db, { name: 'Gros montants' })).id;
    await importOrderRecords(db, big, orders('g', 20, 5));
    const edge = { ...orders('e', 1, 1)[0]!, total: '21474836.47' };
    await importOrderRecords(db, big, [edge]);
    const fits = await buildSnapshot(source, big, { maxBytes: 1 << 24 });
    assert.ok(fits && 'parts' in fits && fits.parts[0]!.total.includes(2_147_483_647));
    await importOrderRecords(db, big, [{ ...edge, total: '21474836.48' }]);
    const past = await buildSnapshot(source, big, { maxBytes: 1 << 24 });
    assert.equal(past && 'reason' in past ? past.reason : undefined, 'amount-range');
  });

  test('a failing COPY, or a failing reader, rejects and leaves the database usable', async () => {
    const { db } = database;
    await assert.rejects(
      db.copyOut('COPY (SELECT 1 / 0) TO STDOUT', () => undefined),
      /division by zero/,
    );
    const failure = new Error('reader failed');
    await assert.rejects(
      db.copyOut('COPY (SELECT generate_series(1, 100000)) TO STDOUT', () => {
        throw failure;
      }),
      (error) => error === failure,
    );
    assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
  });

  test('COPY output read off the socket: every row in order through a slow reader, notices skipped, an error midway', async () => {
    const { db } = database;
    // Text rows, one a line: what the reader gets, glued together, is the whole output in order.
    const read = async (sql: string, slowEvery: number): Promise<string> => {
      const pieces: Buffer[] = [];
      let n = 0;
      await db.copyOut(sql, (data, from, to) => {
        pieces.push(Buffer.from(data.subarray(from, to)));
        // A reader that makes the COPY wait now and then (a build coding its customers).
        if (++n % slowEvery === 0) return new Promise((resolve) => setTimeout(resolve, 1));
      });
      return Buffer.concat(pieces).toString('utf8');
    };
    const numbers = (count: number) => Array.from({ length: count }, (_, k) => `${k + 1}\n`).join('');
    assert.equal(await read('COPY (SELECT generate_series(1, 200000)) TO STDOUT', 20_000), numbers(200_000));
    assert.equal(await read('COPY (SELECT generate_series(1, 3000)) TO STDOUT', 7), numbers(3_000));
    // Notices sent between the rows (a server's RAISE NOTICE) are not data.
    await db.query(`CREATE FUNCTION loud_copy(n int) RETURNS int LANGUAGE plpgsql AS $$
      BEGIN IF n % 100 = 0 THEN RAISE NOTICE 'row %', n; END IF; RETURN n; END $$`);
    try {
      assert.equal(
        await read('COPY (SELECT loud_copy(n) FROM generate_series(1, 1000) n) TO STDOUT', 50),
        numbers(1_000),
      );
    } finally {
      await db.query('DROP FUNCTION loud_copy(int)');
    }
    // An error after many rows: rejected as the database says, rows before it read, none after.
    let rows = 0;
    await assert.rejects(
      db.copyOut(
        'COPY (SELECT 1 / (n - 150000) FROM generate_series(1, 200000) n) TO STDOUT',
        (data, from, to) => {
          for (let at = from; at < to; at++) if (data[at] === 0x0a) rows++;
        },
      ),
      /division by zero/,
    );
    assert.ok(rows > 0 && rows < 150_000, `${rows} rows before the error`);
    assert.deepEqual(await db.query('SELECT 2 AS two'), [{ two: 2 }]);
  });
});

testOn(
  'postgres',
  'a COPY lasts as long as its data needs: STATEMENT_TIMEOUT_MS does not cut it',
  async () => {
    const { db, cleanup } = await openTestDatabase({ STATEMENT_TIMEOUT_MS: '100' });
    try {
      await assert.rejects(db.query('SELECT pg_sleep(0.3)'), { code: 'SERVICE_BUSY' });
      let bytes = 0;
      await db.copyOut('COPY (SELECT pg_sleep(0.3)) TO STDOUT', (_, from, to) => void (bytes += to - from));
      assert.ok(bytes > 0);
      await assert.rejects(db.query('SELECT pg_sleep(0.3)'), { code: 'SERVICE_BUSY' }, 'only that COPY');
    } finally {
      await cleanup();
    }
  },
);
