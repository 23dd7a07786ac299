// Reports while orders keep arriving (issue 19, X1, S4): requests run concurrently with a stream
// of small imports, as at 20 orders a second from a connected store. Each answer counts every
// order committed before its request started (X1), none comes from SQL because a few orders
// arrived, and requests waiting together share their catch-up: fewer deltas than requests.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createOrganization } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { ColumnarReportEngine, type SnapshotEvent } from '../../src/metrics/columnar/columnar-engine.js';
import { SqlReportEngine, type ReportEngine } from '../../src/metrics/engine.js';
import { NO_EXTENSIONS } from '../../src/query/parse.js';
import { planReport, type ReportPlan } from '../../src/query/plan.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

function order(n: number, customer: number) {
  return {
    store: n % 2 === 0 ? 'https://a.example' : 'https://b.example',
    id: `o${n}`,
    created_at: new Date(Date.UTC(2025, 0, 1) + n * 3_600_000).toISOString(),
    status: 'completed',
    billing_country: 'FR',
    customer_email: `client${customer}@example.com`,
    items: 1,
    total: '10.00',
  };
}

/**
 * Orders in the snapshot before the stream: enough for several customers' runs to move (U2) and
 * for compactions; the proof does not grow with it (2,000 before cost seconds of import alone).
 */
const FIRST = 500;

describe('columnar engine while orders arrive (issue 19, X1, S4)', () => {
  let database: TestDatabase;
  let org: string;
  let plan: ReportPlan;
  before(async () => {
    database = await openTestDatabase();
    org = (await createOrganization(database.db, { name: 'Filet continu' })).id;
    await importOrderRecords(
      database.db,
      org,
      Array.from({ length: FIRST }, (_, n) => order(n, n % 300)),
    );
    plan = planReport(
      {
        dimensions: [],
        metrics: ['orders', 'new_customers'],
        from: '2024-01-01',
        to: '2026-12-31',
        timezone: 'Europe/Paris',
        limit: 10,
        ...NO_EXTENSIONS,
      },
      { id: org, settings: { excludedStatuses: [], deductions: [] } },
    );
  });
  after(async () => database?.cleanup());

  test('concurrent requests during a stream of imports all see the orders committed before them, from the snapshot', async () => {
    const sql = new SqlReportEngine(database.db);
    const fallbacks: ReportPlan[] = [];
    const counting: ReportEngine = { run: (p) => (fallbacks.push(p), sql.run(p)) };
    const events: SnapshotEvent[] = [];
    const engine = new ColumnarReportEngine(database.db, counting, {
      memoryBudgetBytes: 64 * 1024 * 1024,
      buildWaitMs: 60_000,
      compactionMinOrders: 20, // compactions happen during the stream
      onEvent: (event) => events.push(event),
    });
    const ordersOf = async (answer: Promise<{ rows: Record<string, string | number | null>[] }>) =>
      Number((await answer).rows[0]?.orders);
    assert.equal(await ordersOf(engine.run(plan)), FIRST);
    fallbacks.length = 0;
    let committed = FIRST;
    let importing = true;
    let requests = 0;
    // Three requests at a time, all the while: each knows what had committed when it started. The
    // next three once these answered: three sent every 5 ms whatever happened piled up on a loaded
    // machine (the slower the imports, the more requests), CPU that proved nothing more.
    const asking = (async () => {
      while (importing) {
        const three = Array.from({ length: 3 }, () => {
          const before = committed;
          requests++;
          return ordersOf(engine.run(plan)).then((seen) =>
            assert.ok(seen >= before, `a request saw ${seen} orders, ${before} committed before it`),
          );
        });
        await Promise.all(three);
        await sleep(5);
      }
    })();
    asking.catch(() => undefined); // awaited below, after the stream: not an unhandled rejection
    let n = FIRST;
    for (let batch = 0; batch < 40; batch++) {
      const size = 1 + (batch % 5);
      // New customers, and orders of customers already in the snapshot (their runs move: U2).
      const orders = Array.from({ length: size }, (_, i) => order(n + i, (batch * 7 + i) % 400));
      await importOrderRecords(database.db, org, orders);
      n += size;
      committed = n;
    }
    importing = false;
    await asking;
    assert.equal(await ordersOf(engine.run(plan)), n);
    assert.deepStrictEqual(await engine.run(plan), await sql.run(plan));
    assert.deepEqual(fallbacks, [], 'no request answered by SQL because orders arrived');
    const kinds = events.map((e) => e.event);
    assert.equal(kinds.filter((k) => k === 'built').length, 1, kinds.join(' '));
    const deltas = kinds.filter((k) => k === 'updated').length;
    assert.ok(deltas > 0 && deltas < requests / 2, `${deltas} deltas for ${requests} requests`);
    assert.ok(kinds.includes('compacted'), kinds.join(' '));
  });

  test('a TRUNCATE of orders by hand is seen: the next request rebuilds (issue 19, X1, migration 016)', async () => {
    const sql = new SqlReportEngine(database.db);
    const events: SnapshotEvent[] = [];
    const engine = new ColumnarReportEngine(database.db, sql, {
      memoryBudgetBytes: 64 * 1024 * 1024,
      buildWaitMs: 60_000,
      onEvent: (event) => events.push(event),
    });
    assert.ok(Number((await engine.run(plan)).rows[0]?.orders) >= FIRST);
    await database.db.query('TRUNCATE orders CASCADE');
    assert.deepStrictEqual(await engine.run(plan), await sql.run(plan));
    assert.equal((await engine.run(plan)).rows[0]?.orders, 0);
    assert.equal(events.filter((e) => e.event === 'built').length, 2, events.map((e) => e.event).join(' '));
  });

  test('a snapshot saved again once due: the next compaction folds it whole for the file (issue 19)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-live-saves-'));
    try {
      const events: SnapshotEvent[] = [];
      const engine = new ColumnarReportEngine(database.db, new SqlReportEngine(database.db), {
        memoryBudgetBytes: 64 * 1024 * 1024,
        buildWaitMs: 60_000,
        snapshotDir: dir,
        saveEveryMs: 0,
        compactionMinOrders: 1_000_000, // the trickle alone would fold only the small parts
        onEvent: (event) => events.push(event),
      });
      await engine.run(plan);
      for (let batch = 0; batch < 10; batch++) {
        await importOrderRecords(database.db, org, [order(900_000 + batch, 5_000 + batch)]);
        await engine.run(plan);
      }
      for (let i = 0; i < 200 && events.filter((e) => e.event === 'saved').length < 2; i++) await sleep(25);
      const saved = events.filter((e) => e.event === 'saved');
      assert.equal(saved.length, 2, events.map((e) => e.event).join(' '));
      const compacted = events.filter((e) => e.event === 'compacted');
      assert.deepEqual(
        compacted.map((e) => 'parts' in e && e.parts),
        [1],
      );
      // The second file holds the snapshot as of that compaction, not the first build's.
      const versions = saved.map((e) => (e.event === 'saved' ? Number(e.version) : NaN));
      assert.ok(versions[1]! >= versions[0]! + 8, versions.join(' '));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
