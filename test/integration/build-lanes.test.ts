// Issue 29, item 2 (snapshot builds shared fairly between organizations), seen in bench:tenants:
// with one queue of builds, a large organization's build held back the builds of every small one
// behind it, and SQL answered them meanwhile. A build whose organization has more rows than
// largeBuildRows is read from the database in a lane of its own: a small organization asked just
// after a large one is built first; with the threshold out of reach (one lane), the same two come
// out in asking order. The saved file's read-back is not delayed by the lane's count: see
// snapshot-file.test.ts ("the first request after a restart waits for the saved file").
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOrganization } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { ColumnarReportEngine, type SnapshotEvent } from '../../src/metrics/columnar/columnar-engine.js';
import { SqlReportEngine } from '../../src/metrics/engine.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

const LARGE_ORDERS = 2000;
// Lines enough that the large build's read outlasts the small one's by far on PostgreSQL too, where
// both lanes read at once over the pool and the large one is read in one statement: with 3 lines an
// order the small build ended only 26-80 ms sooner on a quiet machine, and later once in CI
// (stop 48); with 15, 150-300 ms sooner.
const LARGE_LINES = 15;
let database: TestDatabase;
let large: string;
let small: string;

const order = (n: number, lines: number) => ({
  store: 'https://voies.example',
  id: String(n),
  created_at: new Date(Date.UTC(2025, 0, 1) + n * 600_000).toISOString(),
  status: 'completed',
  customer_email: `c${n % 300}@example.com`,
  items: lines,
  total: '30.00',
  lines: Array.from({ length: lines }, (_, k) => ({
    line_id: String(k),
    product_id: `p${(n + k) % 40}`,
    product_name: `Produit ${(n + k) % 40}`,
    quantity: 1,
    subtotal: '10.00',
  })),
});

before(async () => {
  database = await openTestDatabase();
  large = (await createOrganization(database.db, { name: 'Grande' })).id;
  small = (await createOrganization(database.db, { name: 'Petite' })).id;
  const largeOrders = Array.from({ length: LARGE_ORDERS }, (_, n) => order(n, LARGE_LINES));
  assert.ok(!(await importOrderRecords(database.db, large, largeOrders)).refused);
  assert.ok(!(await importOrderRecords(database.db, small, [order(1, 1), order(2, 2)])).refused);
});
after(() => database?.cleanup());

/** The organizations in the order their snapshots were built, large asked first, small just after. */
async function builtOrder(largeBuildRows: number): Promise<string[]> {
  const built: string[] = [];
  const columnar = new ColumnarReportEngine(database.db, new SqlReportEngine(database.db), {
    memoryBudgetBytes: 256 * 1024 ** 2,
    largeBuildRows,
    // The large build read in many statements: on the embedded database's one session the small
    // organization's statements then come between two of them, in the order they are queued,
    // instead of waiting for one statement of all its rows (which, on a loaded machine, let the
    // large build end first whatever the lanes: seen in CI).
    chunkRows: 100,
    onEvent: (event: SnapshotEvent) => {
      if (event.event === 'built') built.push(event.organizationId === large ? 'large' : 'small');
    },
  });
  const asked = columnar.prepare(large);
  await new Promise((resolve) => setTimeout(resolve, 5)); // the large one asked first
  await Promise.all([asked, columnar.prepare(small)]);
  return built;
}

test('issue 29, item 2: a small organization’s build does not wait for a large one’s', async () => {
  assert.deepEqual(await builtOrder(1000), ['small', 'large']);
  assert.deepEqual(await builtOrder(1_000_000), ['large', 'small'], 'one lane: in asking order');
});
