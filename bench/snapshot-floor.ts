// A small organization's snapshot (issue 29): its memory as counted against REPORT_MEMORY_MB and
// as held (every typed array's buffer reachable from it, each once), for organizations of 100 and
// 1,000 orders (two lines each, a fifth anonymous, two countries, two statuses), built on a
// throwaway database. What was fixed whatever the size shows as the difference between the two.
// Usage: npm run build && node dist/bench/snapshot-floor.js
//        (TEST_ENGINE=postgres TEST_DATABASE_URL=… for a PostgreSQL server)
import { createOrganization } from '../src/domain/organizations.js';
import { importOrderRecords } from '../src/ingest/import.js';
import { buildSnapshot } from '../src/metrics/columnar/build-snapshot.js';
import { openTestDatabase } from '../test/helpers/database.js';

const order = (n: number) => ({
  store: 'https://a.example',
  id: `o${n}`,
  created_at: new Date(Date.UTC(2025, 0, 1) + n * 3_600_000).toISOString(),
  status: n % 9 ? 'completed' : 'refunded',
  billing_country: n % 2 ? 'FR' : 'DE',
  ...(n % 5 ? { customer_email: `c${n % 400}@example.com` } : {}),
  items: 2,
  total: '20.00',
  lines: [0, 1].map((k) => ({
    line_id: String(k),
    product_id: `p${(n + k) % 30}`,
    product_name: `Produit ${(n + k) % 30}`,
    sku: `S${(n + k) % 30}`,
    quantity: 1,
    subtotal: '10.00',
  })),
});

/** Bytes of the ArrayBuffers reachable from `root`, each counted once. */
function heldBytes(root: unknown): number {
  const seen = new Set<unknown>();
  let total = 0;
  const visit = (value: unknown, depth: number): void => {
    if (!value || typeof value !== 'object' || depth > 8 || seen.has(value)) return;
    if (ArrayBuffer.isView(value)) {
      if (!seen.has(value.buffer)) total += value.buffer.byteLength;
      seen.add(value.buffer);
      return;
    }
    seen.add(value);
    if (value instanceof Map) for (const entry of value) visit(entry, depth + 1);
    else
      for (const key of Object.getOwnPropertyNames(value))
        visit((value as Record<string, unknown>)[key], depth + 1);
  };
  visit(root, 0);
  return total;
}

const database = await openTestDatabase({ REPORT_SNAPSHOT_DIR: 'none' });
try {
  for (const count of [100, 1000]) {
    const id = (await createOrganization(database.db, { name: `O${count}` })).id;
    const imported = await importOrderRecords(
      database.db,
      id,
      Array.from({ length: count }, (_, n) => order(n)),
    );
    if (imported.refused) throw new Error('fixture refused');
    const live = await buildSnapshot(database.db, id, { maxBytes: 1 << 30 });
    if (!live || 'reason' in live) throw new Error('no snapshot');
    console.log(`${count} orders: ${live.bytes} B counted, ${heldBytes(live)} B of typed arrays held`);
  }
} finally {
  await database.cleanup();
}
