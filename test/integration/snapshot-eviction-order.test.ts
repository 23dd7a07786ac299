// Issue 29, item 3: with REPORT_MEMORY_MB smaller than the working set, the least recently used
// snapshot leaves first, and /metrics shows it without a label per organization: evictions, the
// evicted snapshot's idle age (a histogram), the thrash counter (evicted though used within the
// last minute) and the idle age of the next to leave. Three organizations, room for two: used
// A, B, A, then C asked → B leaves, not A (A is answered from its snapshot, no build). After a
// restart, the start's preparation (most recently used first) leaves the recency order of real
// use: A used last, then B, then C; memory short → B leaves, not A (the first one prepared). A
// rebuild (a delta too large to apply) is no use either: D used, then E, then D rebuilt in the
// background, then F asked → D leaves, not E. Real engine, real HTTP, the real /metrics listener.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { ColumnarReportEngine, type SnapshotEvent } from '../../src/metrics/columnar/columnar-engine.js';
import { SqlReportEngine } from '../../src/metrics/engine.js';
import { NO_EXTENSIONS } from '../../src/query/parse.js';
import { planReport } from '../../src/query/plan.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { freePort } from '../helpers/processes.js';
import { orderLine } from '../helpers/orders.js';
import { parseExposition, valueOf, type MetricFamily } from '../helpers/prometheus-text.js';

type Families = ReadonlyMap<string, MetricFamily>;

/**
 * 3,000 orders of as many customers over 300 days: a snapshot of about 380 KB. (Until issue 29's
 * item on the fixed floor, 200 orders took 1.07 MB, a block of 1 MiB for the customers' keys.)
 */
const orders = (prefix: string) =>
  Array.from({ length: 3000 }, (_, i) =>
    orderLine(
      `${prefix}-${i}`,
      new Date(Date.UTC(2025, 0, 1 + (i % 300), 10)).toISOString(),
      `c${i}@example.com`,
    ),
  );
/** REPORT_MEMORY_MB: two such snapshots fit, three do not. */
const MEMORY_MB = 1;

describe('snapshot eviction order and its metrics (issue 29, item 3)', () => {
  let service: TestService;
  let metricsUrl: string;
  const keys: Record<string, string> = {};
  const ids: Record<string, string> = {};
  let asked = 0;
  let baseUrl: string;
  let restarted: FastifyInstance | undefined;
  const scrape = async (): Promise<Families> => parseExposition(await (await fetch(metricsUrl)).text());
  const engineCount = (families: Families, engine: string) =>
    valueOf(families, 'sales_metrics_report_computations_total', { engine });
  /** An uncached report of the organization (a new limit each time: never the response cache). */
  const report = async (name: string) => {
    const path = `/api/reports/tabular?metrics=orders&dimensions=date&from=2025-01-01&to=2025-12-31&limit=${1000 - ++asked}`;
    const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${keys[name]}` } });
    assert.equal(response.status, 200, await response.text());
  };
  /** Asks until `done` holds of /metrics (a build runs in the background; SQL answers meanwhile). */
  const askUntil = async (name: string, done: (families: Families) => boolean) => {
    for (let attempt = 0; attempt < 200; attempt++) {
      await report(name);
      const families = await scrape();
      if (done(families)) return families;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return assert.fail(`${name}: /metrics never showed the expected snapshots`);
  };

  before(async () => {
    const port = await freePort();
    service = await startTestService({
      METRICS_PORT: String(port),
      REPORT_MEMORY_MB: String(MEMORY_MB),
      REPORT_WARM_INTERVAL_MS: '0', // only reports build: the order of use is the test's
      RATE_LIMIT_MAX: '100000',
    });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    baseUrl = service.baseUrl;
    for (const name of ['A', 'B', 'C']) {
      const { org, key } = await service.addOrganization(name, orders(name));
      [keys[name], ids[name]] = [key, org.id];
    }
  });
  after(async () => {
    await restarted?.close();
    await service?.cleanup();
  });

  test('used A, B, A, then C: B (least recently used) is evicted, not A; /metrics shows the eviction, its idle age and the thrash', async () => {
    const start = await scrape();
    const built = (families: Families) =>
      valueOf(families, 'sales_metrics_snapshot_builds_total', { outcome: 'built' }) -
      valueOf(start, 'sales_metrics_snapshot_builds_total', { outcome: 'built' });
    const evictions = (families: Families) =>
      valueOf(families, 'sales_metrics_snapshot_evictions_total') -
      valueOf(start, 'sales_metrics_snapshot_evictions_total');

    // A, then B: built and used, both held.
    await askUntil('A', (f) => valueOf(f, 'sales_metrics_snapshots') === 1);
    await report('A'); // used once its snapshot is held
    const twoHeld = await askUntil('B', (f) => valueOf(f, 'sales_metrics_snapshots') === 2);
    await report('B');
    const bUsedAt = performance.now();
    const bytes = valueOf(twoHeld, 'sales_metrics_snapshot_bytes');
    assert.ok(
      bytes <= MEMORY_MB * 1024 ** 2 && bytes * 1.5 > MEMORY_MB * 1024 ** 2,
      `premise: two fit in ${MEMORY_MB} MB, three do not (${bytes} B for two)`,
    );

    // A again: from its snapshot, now the most recently used.
    const beforeA = await scrape();
    await report('A');
    const afterA = await scrape();
    assert.equal(
      engineCount(afterA, 'snapshot') - engineCount(beforeA, 'snapshot'),
      1,
      'A answered from its snapshot',
    );

    // C: its build needs room; the least recently used (B) leaves.
    const afterC = await askUntil('C', (f) => built(f) === 3 && valueOf(f, 'sales_metrics_snapshots') === 2);
    const evictedAt = performance.now();
    assert.equal(evictions(afterC), 1, 'one snapshot evicted');
    assert.equal(built(afterC), 3);

    // A is still held: answered from its snapshot, nothing built, nothing evicted.
    await report('A');
    const afterAgain = await scrape();
    assert.equal(
      engineCount(afterAgain, 'snapshot') - engineCount(afterC, 'snapshot'),
      1,
      'A still held: B was evicted',
    );
    assert.equal(engineCount(afterAgain, 'sql') - engineCount(afterC, 'sql'), 0);
    assert.equal(built(afterAgain), 3);

    // The eviction's idle age: B's, from its last use to its eviction, and it counts as thrash.
    const idleCount = (f: Families) => valueOf(f, 'sales_metrics_snapshot_evicted_idle_seconds_count');
    const idleSum = (f: Families) => valueOf(f, 'sales_metrics_snapshot_evicted_idle_seconds_sum');
    assert.equal(idleCount(afterAgain) - idleCount(start), 1);
    const idle = idleSum(afterAgain) - idleSum(start);
    assert.ok(idle > 0 && idle <= (evictedAt - bUsedAt) / 1000 + 0.05, `B's idle age ${idle} s`);
    assert.equal(
      valueOf(afterAgain, 'sales_metrics_snapshot_evicted_idle_seconds_bucket', { le: '60' }) -
        valueOf(start, 'sales_metrics_snapshot_evicted_idle_seconds_bucket', { le: '60' }),
      1,
    );
    assert.equal(
      valueOf(afterAgain, 'sales_metrics_snapshot_thrash_evictions_total') -
        valueOf(start, 'sales_metrics_snapshot_thrash_evictions_total'),
      1,
      'evicted within a minute of its last use: thrash',
    );
    // The next to leave is C (A was just used), idle since its build: a small age, one figure.
    const oldest = valueOf(afterAgain, 'sales_metrics_snapshot_oldest_idle_seconds');
    assert.ok(oldest > 0 && oldest < 60, `oldest idle ${oldest} s`);
  });

  test('after a restart, the preparation (most recently used first) leaves the order of real use: A used last stays, B leaves', async () => {
    // Last use as the database knows it (keys' last use, later than the fixtures' imports): A, then B, then C.
    for (const [name, minutes] of [
      ['A', 1],
      ['B', 2],
      ['C', 3],
    ] as const)
      await service.db.query(
        `UPDATE api_keys SET last_used_at = now() + interval '1 day' - $2 * interval '1 minute'
         WHERE organization_id = $1`,
        [ids[name], minutes],
      );
    const builds = (f: Families) =>
      valueOf(f, 'sales_metrics_snapshot_builds_total', { outcome: 'built' }) +
      valueOf(f, 'sales_metrics_snapshot_builds_total', { outcome: 'loaded' });
    // Before the restart: a start reads saved files back before it listens (issue 28).
    const start = await scrape();
    await service.app.close(); // the restart: a new process's engine, empty, on the same database
    const port = await freePort();
    restarted = await buildApp(
      {
        ...service.config,
        secretKey: service.config.secretKey, // a getter, not copied by the spread
        metricsPort: port,
        reportWarmIntervalMs: 600_000, // the start's preparation, then none during the test
      },
      { db: service.db, logger: false },
    );
    await restarted.listen({ port: 0, host: '127.0.0.1' });
    const address = restarted.server.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    // The preparation reads A, then B (C too, if its estimate fits; then B leaves already).
    for (let attempt = 0; builds(await scrape()) - builds(start) < 2; attempt++) {
      assert.ok(attempt < 400, 'the start prepared A and B');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // C asked: its snapshot needs room, and the least used of the prepared ones leaves.
    await askUntil(
      'C',
      (f) =>
        valueOf(f, 'sales_metrics_snapshot_evictions_total') >
          valueOf(start, 'sales_metrics_snapshot_evictions_total') &&
        valueOf(f, 'sales_metrics_snapshots') === 2,
    );
    await report('C');
    const beforeA = await scrape();
    await report('A');
    const afterA = await scrape();
    assert.equal(builds(afterA), builds(beforeA), 'A still held: nothing built or read back for it');
    assert.equal(
      engineCount(afterA, 'snapshot') - engineCount(beforeA, 'snapshot'),
      1,
      'A from its snapshot',
    );
    assert.equal(
      valueOf(afterA, 'sales_metrics_snapshot_evictions_total') -
        valueOf(start, 'sales_metrics_snapshot_evictions_total'),
      1,
      'one eviction: B',
    );
  });

  test('a rebuild (a delta too large) keeps the organization’s place: D used, then E, D rebuilt, then F asked → D leaves, not E', async () => {
    const events: SnapshotEvent[] = [];
    const columnar = new ColumnarReportEngine(service.db, new SqlReportEngine(service.db), {
      memoryBudgetBytes: MEMORY_MB * 1024 ** 2,
      maxDeltaOrders: 1, // a delta of more than a tenth of the snapshot's 3,000 orders rebuilds
      buildWaitMs: 30_000,
      onEvent: (event) => events.push(event),
    });
    // The organizations above (3,000 orders each, none held by this new engine) under other names:
    // three more organizations' imports cost more CPU than the rest of the file.
    const id: Record<string, string> = { D: ids.A as string, E: ids.B as string, F: ids.C as string };
    const use = async (name: string) => {
      const plan = planReport(
        {
          dimensions: [],
          metrics: ['orders'],
          from: '2025-01-01',
          to: '2025-12-31',
          timezone: 'UTC',
          limit: 10,
          ...NO_EXTENSIONS,
        },
        { id: id[name] as string, settings: { excludedStatuses: [], deductions: [] } },
      );
      return (await columnar.run(plan)).rows[0]?.orders;
    };
    const built = (name: string) =>
      events.filter((e) => e.event === 'built' && e.organizationId === id[name]).length;
    await use('D');
    await use('E');
    assert.deepEqual([built('D'), built('E'), await use('D'), await use('E')], [1, 1, 3000, 3000]);
    // 400 orders more for D: too many for a delta; the background preparation rebuilds it.
    const more = orders('D')
      .slice(0, 400)
      .map((o) => ({ ...o, id: `more-${o.id}` }));
    assert.ok(!(await importOrderRecords(service.db, id.D as string, more)).refused);
    await columnar.prepare(id.D as string);
    for (let waited = 0; built('D') < 2; waited += 20) {
      assert.ok(waited < 30_000, 'D rebuilt');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(columnar.heldOrders(id.D as string), 3400);
    assert.equal(await use('F'), 3000); // built, with room made for it
    const evicted = events.filter((e) => e.event === 'evicted').map((e) => e.organizationId);
    assert.deepEqual(evicted, [id.D], 'D, used before E and only rebuilt since, leaves first');
  });
});
