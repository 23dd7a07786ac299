// Issue 29, item 3: "with a REPORT_MEMORY_MB smaller than the working set, evictions stay bounded
// (no rebuild storm, no thrash), and the least recently used snapshots leave first; measured".
// ORGS organizations of ORDERS orders each, a budget that holds HELD of their snapshots, and
// REQUESTS reports drawn with Zipf popularity (s = 1) over them, on one engine with saved files
// (REPORT_SNAPSHOT_DIR). Each report waits for its snapshot (a miss: a build, or its file read
// back), so that every request is counted once. Printed: the engine's misses beside those of an
// exact LRU cache of HELD entries fed the same requests (equal: the least recently used left
// first, and nothing more was evicted than LRU needs; the budget's half a snapshot lets it hold
// one more when they are a little smaller), builds against reads-back, and the misses of each
// half (a storm would grow).
// Usage: npm run build && node dist/bench/evict.js [orgs=30] [held=10] [requests=3000] [orders=1000]
//        (TEST_ENGINE=postgres TEST_DATABASE_URL=… for a PostgreSQL server)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createOrganization } from '../src/domain/organizations.js';
import { importOrderRecords } from '../src/ingest/import.js';
import { ColumnarReportEngine, type SnapshotEvent } from '../src/metrics/columnar/columnar-engine.js';
import { SqlReportEngine } from '../src/metrics/engine.js';
import { NO_EXTENSIONS } from '../src/query/parse.js';
import { planReport } from '../src/query/plan.js';
import { openTestDatabase } from '../test/helpers/database.js';
import { mulberry32 } from '../test/helpers/seeded-random.js';

const [ORGS, HELD, REQUESTS, ORDERS] = [30, 10, 3000, 1000].map((d, i) =>
  Number(process.argv[2 + i] ?? d),
) as [number, number, number, number];

const order = (org: number, n: number) => ({
  store: 'https://a.example',
  id: `o${n}`,
  created_at: new Date(Date.UTC(2025, 0, 1) + n * 3_600_000).toISOString(),
  status: 'completed',
  customer_email: `c${(n * 7 + org) % 400}@example.com`,
  items: 1,
  total: '20.00',
});

/** Organization indexes drawn with Zipf popularity (s = 1): rank r with weight 1 / r. */
function zipf(count: number, random: () => number): () => number {
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 1; r <= count; r++) cumulative.push((sum += 1 / r));
  return () => {
    const x = random() * sum;
    return cumulative.findIndex((c) => c >= x);
  };
}

/** Misses of an exact LRU cache of `capacity` entries fed `requests`. */
function lruMisses(requests: readonly number[], capacity: number): number {
  const cache = new Map<number, true>();
  let misses = 0;
  for (const r of requests) {
    if (cache.delete(r)) cache.set(r, true);
    else {
      misses++;
      cache.set(r, true);
      if (cache.size > capacity) cache.delete(cache.keys().next().value as number);
    }
  }
  return misses;
}

const database = await openTestDatabase();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-bench-evict-'));
try {
  const ids: string[] = [];
  for (let o = 0; o < ORGS; o++) {
    const id = (await createOrganization(database.db, { name: `Org ${o}` })).id;
    const orders = Array.from({ length: ORDERS }, (_, n) => order(o, n));
    await importOrderRecords(database.db, id, orders);
    ids.push(id);
  }
  // One snapshot's bytes, measured; the budget holds HELD and a half of them.
  const probe = new ColumnarReportEngine(database.db, new SqlReportEngine(database.db), {
    memoryBudgetBytes: 1024 ** 3,
  });
  await probe.prepare(ids[0] as string);
  const budget = Math.floor(probe.memoryInUse * (HELD + 0.5));

  const events: SnapshotEvent[] = [];
  const columnar = new ColumnarReportEngine(database.db, new SqlReportEngine(database.db), {
    memoryBudgetBytes: budget,
    buildWaitMs: 60_000,
    snapshotDir: dir,
    onEvent: (event) => events.push(event),
  });
  const next = zipf(ORGS, mulberry32(29));
  const requests = Array.from({ length: REQUESTS }, next);
  const half = Math.floor(REQUESTS / 2);
  const counts = () => ({
    built: events.filter((e) => e.event === 'built').length,
    loaded: events.filter((e) => e.event === 'loaded').length,
    evicted: events.filter((e) => e.event === 'evicted').length,
  });
  let firstHalf = counts();
  const started = performance.now();
  for (const [i, r] of requests.entries()) {
    if (i === half) firstHalf = counts();
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
      { id: ids[r] as string, settings: { excludedStatuses: [], deductions: [] } },
    );
    await columnar.run(plan);
  }
  await columnar.saved();
  const all = counts();
  const misses = all.built + all.loaded;
  const second = { built: all.built - firstHalf.built, loaded: all.loaded - firstHalf.loaded };
  console.log(
    `${ORGS} organizations of ${ORDERS} orders, budget ${budget} B (${HELD} snapshots and a half), ${REQUESTS} requests, Zipf s = 1, ${database.db.engine}`,
  );
  console.log(
    `requests ${REQUESTS} · misses ${misses} (builds ${all.built}, reads-back ${all.loaded}) · evictions ${all.evicted} · exact LRU of ${HELD} / ${HELD + 1}: ${lruMisses(requests, HELD)} / ${lruMisses(requests, HELD + 1)} misses`,
  );
  console.log(
    `misses, first half ${firstHalf.built + firstHalf.loaded} (builds ${firstHalf.built}), second half ${second.built + second.loaded} (builds ${second.built}) · held at the end ${columnar.snapshotsHeld}, ${columnar.memoryInUse} B · ${Math.round(performance.now() - started)} ms`,
  );
  await columnar.close();
} finally {
  await database.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
}
