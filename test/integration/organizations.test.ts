// Organizations' Report settings: defaults written in one place (the catalog), and the statuses
// the settings page offers, computed in the core rather than in the page.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_DEDUCTIONS, DEFAULT_EXCLUDED_STATUSES } from '../../src/catalog.js';
import {
  createOrganization,
  excludableStatuses,
  findOrganization,
  updateReportSettings,
} from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
before(async () => (t = await openTestDatabase()));
after(() => t.cleanup());

test('S1/S2: a new organization gets the catalog’s default settings, and the migration’s column defaults say the same', async () => {
  const org = await createOrganization(t.db, { name: 'Défauts' });
  assert.deepEqual(org.settings, {
    excludedStatuses: [...DEFAULT_EXCLUDED_STATUSES],
    deductions: [...DEFAULT_DEDUCTIONS],
  });
  // Rows inserted without the core (old data, hand-made fixtures) fall back on the column defaults.
  const [row] = await t.db.query<{ id: string }>(
    "INSERT INTO organizations (slug, name) VALUES ('bare', 'Bare') RETURNING id",
  );
  assert.ok(row);
  assert.deepEqual((await findOrganization(t.db, 'bare')).settings, org.settings);
});

test('S1: the settings page offers the statuses seen in the orders, the defaults and those already excluded, once each', async () => {
  const org = await createOrganization(t.db, { name: 'Statuts' });
  await importOrderRecords(t.db, org.id, [
    {
      store: 'https://s.example',
      id: '1',
      created_at: '2026-01-01T00:00:00Z',
      status: 'completed',
      items: 1,
      total: '1.00',
    },
    {
      store: 'https://s.example',
      id: '2',
      created_at: '2026-01-01T00:00:00Z',
      status: 'pending',
      items: 1,
      total: '1.00',
    },
    {
      store: 'https://s.example',
      id: '3',
      created_at: '2026-01-01T00:00:00Z',
      status: 'Zèbre',
      items: 1,
      total: '1.00',
    },
  ]);
  await updateReportSettings(t.db, org.id, { excludedStatuses: ['refunded-by-hand'] });
  const statuses = await excludableStatuses(t.db, await findOrganization(t.db, org.slug));
  assert.deepEqual(statuses, [
    'Zèbre',
    'cancelled',
    'checkout-draft',
    'completed',
    'failed',
    'pending',
    'refunded-by-hand',
  ]);
});

test('issue 18: organizations of one name cost a bounded number of inserts each (not one per namesake): the fifth takes -5, the next ones a random suffix', async () => {
  const statements: string[] = [];
  const counting = {
    query: async (sql: string, params?: readonly unknown[]) => {
      statements.push(sql);
      return t.db.query(sql, params as unknown[]);
    },
  } as unknown as typeof t.db;
  const slugs: string[] = [];
  for (let i = 0; i < 12; i++) {
    statements.length = 0;
    slugs.push((await createOrganization(counting, { name: 'わたしの店' })).slug);
    assert.ok(statements.length <= 6, `organization ${i + 1}: ${statements.length} inserts`);
  }
  assert.deepEqual(slugs.slice(0, 5), [
    'organisation',
    'organisation-2',
    'organisation-3',
    'organisation-4',
    'organisation-5',
  ]);
  for (const slug of slugs.slice(5)) assert.match(slug, /^organisation-[0-9a-f]{8}$/);
  assert.equal(new Set(slugs).size, 12);
});
