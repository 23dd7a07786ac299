// Every SQL statement the service emits during a real session — import, settings, keys, API
// calls over every dimension — filters each tenant table by organization (docs/deployment.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../src/auth/api-keys.js';
import { DIMENSIONS } from '../../src/catalog.js';
import type { Database } from '../../src/db/database.js';
import { createOrganization, setSubscription, updateReportSettings } from '../../src/domain/organizations.js';
import { addStore, listStores } from '../../src/domain/stores.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { openTestDatabase } from '../helpers/database.js';
import { tenantTablesWithoutFilter } from '../helpers/tenancy.js';
import { importOrdersWithLines, type OrderWithLines } from '../helpers/order-lines.js';

// The one statement that cannot know the organization: finding it from keys' hashes (K2), for the
// requests that share one lookup (src/auth/key-lookup.ts).
const KEY_LOOKUP =
  /FROM api_keys k JOIN organizations o ON o\.id = k\.organization_id\s+WHERE k\.key_hash = ANY\(\$1::bytea\[\]\)/;

test('tenancy: every statement emitted by imports, settings, keys and reports (order lines too) filters by organization', async () => {
  const { db, config, cleanup } = await openTestDatabase({ RATE_LIMIT_MAX: '100000' });
  const statements: string[] = [];
  const recording: Database = {
    engine: db.engine,
    secretKey: db.secretKey,
    close: () => db.close(),
    query: (sql, params) => (statements.push(sql), db.query(sql, params)),
    queryPages: (sql, params, onPage) => (statements.push(sql), db.queryPages(sql, params, onPage)),
    copyIn: (sql, data) => (statements.push(sql), db.copyIn(sql, data)),
    copyOut: (sql, onData) => (statements.push(sql), db.copyOut(sql, onData)),
    giveBack: (pieces) => db.giveBack(pieces),
    hostedByCommand: db.hostedByCommand,
    transaction: (work) =>
      db.transaction((tx) =>
        work({
          query: (sql, params) => (statements.push(sql), tx.query(sql, params)),
          copyIn: (sql, data) => (statements.push(sql), tx.copyIn(sql, data)),
        }),
      ),
  };
  try {
    const org = await createOrganization(recording, { name: 'Tenant' });
    await setSubscription(recording, org.id, 'active');
    await addStore(recording, org.id, 'https://t.example');
    await importOrderRecords(recording, org.id, [
      {
        store: 'https://t.example',
        id: '1',
        created_at: '2026-03-01T10:00:00Z',
        status: 'completed',
        customer_email: 'a@b.co',
        items: 1,
        total: '10.00',
      },
      {
        store: 'https://u.example',
        id: '2',
        created_at: '2026-03-02T10:00:00Z',
        status: 'pending',
        items: 1,
        total: '5.00',
      },
    ]);
    await importOrderRecords(recording, org.id, [
      {
        store: 'https://t.example',
        id: '1',
        created_at: '2026-03-01T11:00:00Z',
        status: 'completed',
        customer_email: 'c@d.co',
        items: 2,
        total: '12.00',
      },
    ]);
    // Section 15: an order with lines (through the lines helper until the import reads them).
    await importOrdersWithLines(recording, org.id, [
      {
        store: 'https://t.example',
        id: '3',
        created_at: '2026-03-03T10:00:00Z',
        status: 'completed',
        items: 1,
        total: '8.00',
        lines: [{ line_id: 'a', product_name: 'Mug', categories: ['Maison'], quantity: 1, subtotal: '8.00' }],
      } as OrderWithLines,
    ]);
    await updateReportSettings(recording, org.id, { excludedStatuses: ['failed'], deductions: ['taxes'] });
    const { key, prefix } = await createApiKey(recording, org.id, 'k');
    await listApiKeys(recording, org.id);
    await listStores(recording, org.id);
    const app = await buildApp(config, { db: recording, logger: false });
    const headers = { authorization: `Bearer ${key}` };
    for (let mask = 0; mask < 32; mask++) {
      const dimensions = DIMENSIONS.filter((_, i) => mask & (1 << i)).map((d) => d.id);
      const response = await app.inject({
        url: `/api/reports/tabular?metrics=orders,net_revenue,new_customers,returning_customers&dimensions=${dimensions.join(',')}&from=2026-03-01&to=2026-03-31`,
        headers,
      });
      assert.equal(response.statusCode, 200, response.body);
    }
    // L2–L7: line dimensions, line metrics at both grains, line filters, sort, PC1.
    for (const query of [
      'metrics=orders,units_sold,product_net_sales&dimensions=product,category,store&sort=-product_net_sales',
      'metrics=gross_sales,product_net_sales&dimensions=date&filter.category=Maison&filter.sku=Unknown',
      'metrics=new_customers,product_refunds&dimensions=variant,customer_type&filter.product=Mug&compare=previous_year',
    ]) {
      const response = await app.inject({
        url: `/api/reports/tabular?${query}&from=2026-03-01&to=2026-03-31`,
        headers,
      });
      assert.equal(response.statusCode, 200, response.body);
    }
    await revokeApiKey(recording, org.id, prefix);
    await app.close();
    const offenders = statements
      .filter((sql) => !KEY_LOOKUP.test(sql))
      .map((sql) => ({
        sql: sql.replace(/\s+/g, ' ').slice(0, 200),
        missing: tenantTablesWithoutFilter(sql),
      }))
      .filter((s) => s.missing.length > 0);
    assert.deepEqual(offenders, []);
    assert.ok(statements.length > 40, `${statements.length} statements checked`);
  } finally {
    await cleanup();
  }
});
