// Issue 28, item 2: a build from the database answers the reports that read no line (order grain,
// no line metric or filter: SPEC section 15) as soon as its orders are read, while it goes on with
// their lines; a report that reads lines is never answered from the orders alone (it gets SQL's
// answer or a refusal, as before), and a change committed meanwhile is never missed (X1). The
// build's read of the lines is held back by the database source given to the engine (every
// statement is the real database's; the lines' COPY only starts once the test lets it).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOrganization } from '../../src/domain/organizations.js';
import { isAppError } from '../../src/errors.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import type { Database } from '../../src/db/database.js';
import type { SnapshotSource } from '../../src/metrics/columnar/build-snapshot.js';
import {
  ColumnarReportEngine,
  MAX_BUILD_WAITERS,
  type SnapshotEvent,
} from '../../src/metrics/columnar/columnar-engine.js';
import { SqlReportEngine } from '../../src/metrics/engine.js';
import { LimitedReportEngine } from '../../src/metrics/limited-engine.js';
import { ReportSlots } from '../../src/limits/report-slots.js';
import { reportAnswers } from '../../src/observability/metrics.js';
import { NO_EXTENSIONS } from '../../src/query/parse.js';
import { planReport, type ReportPlan } from '../../src/query/plan.js';
import type { TabularQuery } from '../../src/query/parse.js';
import { engine, openTestDatabase, type TestDatabase } from '../helpers/database.js';

const MEMORY = 256 * 1024 * 1024;
const ORDERS = 600;

const order = (prefix: string, n: number) => ({
  store: 'https://a.example',
  id: `${prefix}${n}`,
  created_at: new Date(Date.UTC(2025, 0, 1) + n * 3_600_000).toISOString(),
  status: 'completed',
  customer_email: `client${n % 70}@example.com`,
  items: 1 + (n % 3),
  total: `${10 + (n % 17)}.50`,
  lines: Array.from({ length: 1 + (n % 3) }, (_, k) => ({
    line_id: String(k),
    product_id: `p${(n + k) % 5}`,
    product_name: `Produit ${(n + k) % 5}`,
    quantity: 1 + k,
    subtotal: `${3 + k}.25`,
  })),
});

const plan = (organizationId: string, query: Partial<TabularQuery>): ReportPlan =>
  planReport(
    {
      dimensions: [],
      metrics: ['orders', 'net_revenue', 'unique_customers', 'new_customers'],
      from: '2025-01-01',
      to: '2025-12-31',
      timezone: 'UTC',
      limit: 100,
      ...NO_EXTENSIONS,
      ...query,
    },
    { id: organizationId, settings: { excludedStatuses: [], deductions: [] } },
  );

/** Reports answered from a snapshot so far (the /metrics counter). */
const fromSnapshots = async (): Promise<number> =>
  (await reportAnswers.get()).values
    .filter((v) => v.labels.engine === 'snapshot')
    .reduce((n, v) => n + v.value, 0);

/**
 * The database as a build's source (every statement the real one's), the orders' COPY held from
 * its first piece until `letOrders`; `linesNever`: the lines' COPY never starts; `countHeld`: the
 * build's count of the organization's rows (which decides its lane) held until `letCount`.
 */
function heldOrders(
  db: Database,
  { linesNever, countHeld = false }: { linesNever: boolean; countHeld?: boolean },
) {
  const held = () => {
    let let_ = () => {};
    const promise = new Promise<void>((resolve) => {
      let_ = resolve;
      setTimeout(resolve, 20_000).unref();
    });
    return { promise, let: () => let_() };
  };
  const orders = held();
  const count = held();
  if (!countHeld) count.let();
  let copying = () => {};
  const copyStarted = new Promise<void>((resolve) => (copying = resolve));
  let counting = () => {};
  const countStarted = new Promise<void>((resolve) => (counting = resolve));
  const source: SnapshotSource = {
    engine: db.engine,
    query: async (sql, params) => {
      if (/count\(\*\)/.test(sql)) {
        counting();
        await count.promise;
      }
      return db.query(sql, params);
    },
    transaction: (work) => db.transaction(work),
    copyOut: (sql, onData) => {
      const lines = /FROM order_lines/.test(sql);
      if (lines && linesNever) return new Promise(() => {});
      return db.copyOut(sql, async (piece, from, to) => {
        const data = Buffer.from(piece.subarray(from, to)); // the database's only until this returns
        if (!lines) {
          copying();
          await orders.promise;
        }
        return onData(data, 0, data.length);
      });
    },
  };
  return { source, letOrders: orders.let, copyStarted, letCount: count.let, countStarted };
}

describe('issue 28: order-grain reports answered by a build once its orders are read', () => {
  let database: TestDatabase;
  let organization: string;
  before(async () => {
    database = await openTestDatabase({ REPORT_SNAPSHOT_DIR: 'none' });
    organization = (await createOrganization(database.db, { name: 'Commandes d’abord' })).id;
    const result = await importOrderRecords(
      database.db,
      organization,
      Array.from({ length: ORDERS }, (_, n) => order('c', n)),
    );
    assert.ok(!result.refused);
  });
  after(async () => database?.cleanup());

  test('order questions from the orders, line questions never, a change since never missed; then all from the whole snapshot', async () => {
    // The lines' COPY waits for `letLines` (at most 20 s).
    let letLines = () => {};
    const linesLet = new Promise<void>((resolve) => {
      letLines = resolve;
      setTimeout(resolve, 20_000).unref();
    });
    const db = database.db;
    const source: SnapshotSource = {
      engine: db.engine,
      query: (sql, params) => db.query(sql, params),
      transaction: (work) => db.transaction(work),
      copyOut: async (sql, onData) => {
        if (/FROM order_lines/.test(sql)) await linesLet;
        return db.copyOut(sql, onData);
      },
    };
    const events: SnapshotEvent[] = [];
    let ordersBuilt = () => {};
    const ordersRead = new Promise<void>((resolve, reject) => {
      ordersBuilt = resolve;
      setTimeout(() => reject(new Error('no ordersBuilt event within 20 s')), 20_000).unref();
    });
    const sql = new SqlReportEngine(db);
    const columnar = new ColumnarReportEngine(source, sql, {
      memoryBudgetBytes: MEMORY,
      buildingSqlBudgetMs: 2_000,
      onEvent: (event) => {
        events.push(event);
        if (event.event === 'ordersBuilt') ordersBuilt();
      },
    });
    try {
      await columnar.currentSnapshot(organization, 0); // the build starts
      await ordersRead;
      assert.equal(columnar.heldVersion(organization), undefined, 'the lines are not read yet');
      const orderEvent = events.find((e) => e.event === 'ordersBuilt');
      assert.ok(orderEvent && 'orders' in orderEvent && orderEvent.orders === ORDERS);

      // Order grain (section 15's grain rule): from the orders, the same rows as SQL (M1, U4).
      const totals = plan(organization, {});
      const byDay = plan(organization, {
        dimensions: ['date'],
        metrics: ['orders', 'gross_sales', 'items_sold', 'returning_customers'],
      });
      for (const question of [totals, byDay]) {
        const counted = await fromSnapshots();
        const answer = await columnar.run(question);
        assert.equal(await fromSnapshots(), counted + 1, 'an order-grain report answered from the orders');
        assert.deepEqual(answer.rows, (await sql.run(question)).rows);
      }
      assert.equal((await columnar.run(totals)).rows[0]?.orders, ORDERS);

      // Lines asked (L3 a line metric, L4 a line dimension, L6 a line filter): never from the orders.
      const lineQuestions = [
        plan(organization, { metrics: ['orders', 'units_sold'] }),
        plan(organization, { dimensions: ['product'], metrics: ['orders', 'product_net_sales'] }),
        plan(organization, { filters: { product: ['Produit 1'] } }),
      ];
      for (const question of lineQuestions) {
        assert.ok(question.readsLines);
        const counted = await fromSnapshots();
        try {
          const answer = await columnar.run(question);
          assert.deepEqual(answer.rows, (await sql.run(question)).rows); // SQL's, with the lines
        } catch (error) {
          // The embedded database's large builds refuse instead (no SQL beside them).
          assert.ok(isAppError(error) && error.code === 'SNAPSHOT_BUILDING', String(error));
        }
        assert.equal(await fromSnapshots(), counted, 'a line question answered without the lines');
        assert.equal(columnar.heldVersion(organization), undefined);
      }

      // X1: a change committed after the build's version is not in the orders: SQL answers it.
      const added = await importOrderRecords(db, organization, [order('nouvelle', 1), order('nouvelle', 2)]);
      assert.ok(!added.refused);
      const counted = await fromSnapshots();
      const answer = await columnar.run(totals);
      assert.equal(answer.rows[0]?.orders, ORDERS + 2);
      assert.equal(await fromSnapshots(), counted, 'a stale snapshot of orders answered');

      // The lines read: every question from the whole snapshot, brought up to date by a delta.
      letLines();
      await columnar.prepare(organization);
      assert.ok(columnar.heldVersion(organization));
      for (const question of [totals, byDay, ...lineQuestions]) {
        const answer = await columnar.run(question);
        assert.deepEqual(answer.rows, (await sql.run(question)).rows);
      }
      const built = events.findIndex((e) => e.event === 'built');
      assert.ok(built > events.findIndex((e) => e.event === 'ordersBuilt'), JSON.stringify(events));
    } finally {
      letLines();
    }
  });

  // PostgreSQL only (the embedded database's one session cannot hold SQL behind a lock while the
  // build reads), and not registered elsewhere: CI fails a run on a skipped test.
  if (engine === 'postgres')
    test('an order-grain report whose SQL is under way when the orders are read is answered from them, its statement cancelled', async () => {
      // The orders' COPY started (its lock on the table taken) but its output held; then a real
      // ACCESS EXCLUSIVE lock asked by another transaction, which waits behind the COPY and makes
      // every later statement on orders (the report's SQL) wait behind it.
      const db = database.db;
      const { source, letOrders, copyStarted } = heldOrders(db, { linesNever: true });
      const sql = new SqlReportEngine(db);
      const columnar = new ColumnarReportEngine(source, sql, {
        memoryBudgetBytes: MEMORY,
        buildingSqlBudgetMs: 15_000,
      });
      let unlock = () => {};
      const unlocked = new Promise<void>((resolve) => {
        unlock = resolve;
        setTimeout(resolve, 20_000).unref();
      });
      let locked = false;
      const question = plan(organization, {});
      const expected = (await sql.run(question)).rows;
      await columnar.currentSnapshot(organization, 0);
      await copyStarted;
      const lock = db.transaction(async (tx) => {
        await tx.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
        locked = true;
        await unlocked;
      });
      try {
        // The lock is asked for (it waits behind the COPY): the report's SQL will wait behind it.
        await new Promise((resolve) => setTimeout(resolve, 200));
        const counted = await fromSnapshots();
        const answering = columnar.run(question);
        await new Promise((resolve) => setTimeout(resolve, 500)); // its SQL under way, waiting
        letOrders();
        const answer = await answering;
        assert.deepEqual(answer.rows, expected);
        assert.equal(await fromSnapshots(), counted + 1, 'answered by SQL, not from the orders');
        // Before unlock(): SQL could not have answered (its statement waits behind the lock).
        assert.equal(columnar.heldVersion(organization), undefined, 'the lines were read');
      } finally {
        letOrders();
        unlock();
        await lock;
      }
      assert.ok(locked);
    });

  // Both engines: the embedded one never ran SQL beside a large build; a PostgreSQL server did
  // until 29 November, and that SQL took a core from the build (docs/decisions.md); asked while
  // the build counted the organization's rows (its lane not known yet), until later that day.
  test('a large build: an order-grain report starts no SQL while the rows are counted nor while the orders are read, and is answered from them', async () => {
    const db = database.db;
    const { source, letOrders, copyStarted, letCount, countStarted } = heldOrders(db, {
      linesNever: false,
      countHeld: true,
    });
    const sql = new SqlReportEngine(db);
    // One row makes a build large: it takes the large lane, as a million orders would.
    const columnar = new ColumnarReportEngine(source, sql, {
      memoryBudgetBytes: MEMORY,
      buildingSqlBudgetMs: 15_000,
      largeBuildRows: 1,
    });
    const question = plan(organization, {});
    const expected = (await sql.run(question)).rows;
    const counted = await fromSnapshots();
    await columnar.currentSnapshot(organization, 0);
    await countStarted;
    try {
      let settled = false;
      const answering = columnar.run(question).finally(() => (settled = true));
      // SQL answers this question in milliseconds: had it started, the answer would be here.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert.equal(settled, false, 'no SQL answer while the rows are counted');
      letCount();
      await copyStarted;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(settled, false, 'no SQL answer while the orders are read');
      letOrders();
      assert.deepEqual((await answering).rows, expected);
      assert.equal(await fromSnapshots(), counted + 1, 'answered from the orders read');
    } finally {
      letCount();
      letOrders();
    }
  });

  // Issue 28: the start's memory check (ColdStart) counts the organization's rows before it asks
  // for a build; a report asked meanwhile starts the build, which counted again, one count after
  // the other on the embedded database's one session (1.3–2.5 s each at a million orders).
  test("a build started while the organization's rows are being counted waits for that count instead of counting again", async () => {
    const db = database.db;
    const held = heldOrders(db, { linesNever: false, countHeld: true });
    let customerCounts = 0;
    const source: SnapshotSource = {
      ...held.source,
      query: (sql, params) => {
        if (/count\(\*\).*FROM customer_first_orders/s.test(sql)) customerCounts++;
        return held.source.query(sql, params);
      },
    };
    const sql = new SqlReportEngine(db);
    const columnar = new ColumnarReportEngine(source, sql, { memoryBudgetBytes: MEMORY, largeBuildRows: 1 });
    held.letOrders();
    try {
      const counting = columnar.countRows(organization); // the start's check
      await held.countStarted;
      const building = columnar.currentSnapshot(organization, 0); // a report's build meanwhile
      await new Promise((resolve) => setTimeout(resolve, 300));
      held.letCount();
      const size = await counting;
      assert.ok(size.orders >= ORDERS && size.lines > 0, JSON.stringify(size));
      await building;
      await columnar.prepare(organization);
      assert.ok(columnar.heldVersion(organization), 'built');
      assert.equal(customerCounts, 1, 'one count for the check and the build');
      const question = plan(organization, {});
      assert.deepEqual((await columnar.run(question)).rows, (await sql.run(question)).rows);
    } finally {
      held.letCount();
    }
  });

  test('a large build reads its orders before its whole count (PostgreSQL since 29 November, embedded since 30 November)', async () => {
    const db = database.db;
    let letCount = () => {};
    const countLet = new Promise<void>((resolve) => {
      letCount = resolve;
      setTimeout(resolve, 20_000).unref();
    });
    let wholeCounts = 0;
    // Every statement the real database's; the whole count (the one of the customers) held.
    const source: SnapshotSource = {
      engine: db.engine,
      copyOut: (sql, onData) => db.copyOut(sql, onData),
      transaction: (work) => db.transaction(work),
      query: async (sql, params) => {
        if (/count\(\*\).*FROM customer_first_orders/s.test(sql)) {
          wholeCounts++;
          await countLet;
        }
        return db.query(sql, params);
      },
    };
    const events: SnapshotEvent[] = [];
    let ordersBuilt = () => {};
    const ordersRead = new Promise<void>((resolve) => (ordersBuilt = resolve));
    const sql = new SqlReportEngine(db);
    const columnar = new ColumnarReportEngine(source, sql, {
      memoryBudgetBytes: MEMORY,
      largeBuildRows: 1,
      onEvent: (event) => {
        events.push(event);
        if (event.event === 'ordersBuilt') ordersBuilt();
      },
    });
    try {
      const preparing = columnar.prepare(organization);
      const first = await Promise.race([
        ordersRead.then(() => 'orders'),
        // Long enough to read 600 orders on a loaded machine.
        new Promise((resolve) => setTimeout(() => resolve('count still held'), 10_000)),
      ]);
      assert.equal(first, 'orders');
      letCount();
      await preparing;
      assert.equal(wholeCounts, 1, 'counted once');
      assert.deepEqual(
        events.map((e) => e.event),
        ['ordersBuilt', 'built'],
      );
      const question = plan(organization, { metrics: ['orders', 'units_sold'] });
      assert.deepEqual((await columnar.run(question)).rows, (await sql.run(question)).rows);
    } finally {
      letCount();
    }
  });

  // Issue 28, item 3: a report waiting for the build waits outside the report slots. Held in its
  // slot, it filled the organization's slots and queue, and the next ones were refused
  // SERVICE_BUSY (Retry-After 2 s) instead of being answered by the orders or told the build's time.
  test("reports waiting for a large build hold no report slot: none refused busy, each answered from the orders or refused with the build's Retry-After", async () => {
    const db = database.db;
    const { source, letOrders, copyStarted } = heldOrders(db, { linesNever: true });
    const sql = new SqlReportEngine(db);
    const columnar = new ColumnarReportEngine(source, sql, {
      memoryBudgetBytes: MEMORY,
      buildingSqlBudgetMs: 1_500,
      largeBuildRows: 1,
    });
    // One computation and one waiting at a time for the organization: the third report was busy.
    const slots = new ReportSlots({
      total: 2,
      perOrganization: 1,
      maxQueued: 2,
      maxQueuedPerOrganization: 1,
      maxWaitMs: 10_000,
    });
    const limited = new LimitedReportEngine(columnar, slots);
    const question = plan(organization, {});
    const expected = (await sql.run(question)).rows;
    await columnar.currentSnapshot(organization, 0);
    await copyStarted;
    try {
      // Refused at the budget while the orders are held: the build's refusal, not the slots'.
      const early = await limited.run(question).then(
        () => assert.fail('answered while the orders were held'),
        (error: unknown) => error,
      );
      assert.ok(isAppError(early) && early.code === 'SNAPSHOT_BUILDING', String(early));
      assert.ok((early.retryAfterS ?? 0) >= 1, 'a Retry-After');
      // More than the bound at once: those within it wait, none in a slot meanwhile, and are all
      // answered from the orders once read; the others are refused at once with the build's time.
      const counted = await fromSnapshots();
      const asked = Array.from({ length: MAX_BUILD_WAITERS + 6 }, () =>
        limited.run(question).then(
          (answer) => answer,
          (error: unknown) => error,
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual([slots.running, slots.queued], [0, 0], 'no slot held by a wait for the build');
      letOrders();
      const settled = await Promise.all(asked);
      const refused = settled.filter((s) => s instanceof Error);
      assert.equal(refused.length, 6, 'past the bound, refused');
      for (const error of refused)
        assert.ok(isAppError(error) && error.code === 'SNAPSHOT_BUILDING', String(error));
      for (const answer of settled.filter((s) => !(s instanceof Error)))
        assert.deepEqual((answer as { rows: unknown }).rows, expected);
      assert.equal(
        await fromSnapshots(),
        counted + MAX_BUILD_WAITERS,
        'every one within the bound answered from the orders',
      );
    } finally {
      letOrders();
    }
  });

  test('an organization without lines is built whole at once: no orders-only stage', async () => {
    const plain = (await createOrganization(database.db, { name: 'Sans lignes' })).id;
    assert.ok(!(await importOrderRecords(database.db, plain, [{ ...order('s', 1), lines: [] }])).refused);
    const events: SnapshotEvent[] = [];
    const columnar = new ColumnarReportEngine(database.db, new SqlReportEngine(database.db), {
      memoryBudgetBytes: MEMORY,
      onEvent: (event) => events.push(event),
    });
    await columnar.prepare(plain);
    assert.deepEqual(
      events.map((e) => e.event),
      ['built'],
    );
  });

  test('a stop during a build is no failure: the database closed under it is not reported', async () => {
    const held = heldOrders(database.db, { linesNever: true });
    let closed = false;
    // After the stop, the database answers as a pool that was ended does.
    const source: SnapshotSource = {
      ...held.source,
      copyOut: (sql, onData) =>
        held.source.copyOut(sql, (data, from, to) => {
          if (closed) throw new Error('Cannot use a pool after calling end on the pool');
          return onData(data, from, to);
        }),
    };
    const events: SnapshotEvent[] = [];
    const columnar = new ColumnarReportEngine(source, new SqlReportEngine(database.db), {
      memoryBudgetBytes: MEMORY,
      onEvent: (event) => events.push(event),
    });
    const preparing = columnar.prepare(organization);
    await held.copyStarted;
    await columnar.close();
    closed = true;
    held.letOrders();
    await preparing;
    assert.equal(columnar.heldVersion(organization), undefined, 'nothing held: the build did end');
    assert.deepEqual(
      events.map((e) => e.event),
      [],
    );
  });
});
