// A sync pass gives its lease back while a webhook queues an order (X1, issue 21's webhooks): the
// store must be due at once, not an interval later. PostgreSQL only: the embedded engine runs one
// statement at a time, so the release never waits there for a webhook's lock.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Database } from '../../src/db/database.js';
import { createOrganization } from '../../src/domain/organizations.js';
import { claimNow, release } from '../../src/ingest/connectors/connections.js';
import { engine, openTestDatabase, type TestDatabase } from '../helpers/database.js';

if (engine === 'postgres')
  describe('a pass that ends while a webhook queues an order (postgres)', () => {
    let test_: TestDatabase;
    let db: Database;
    let webhook: pg.Client;
    before(async () => {
      test_ = await openTestDatabase();
      db = test_.db;
      webhook = new pg.Client({ connectionString: test_.config.databaseUrl });
      await webhook.connect();
    });
    after(async () => {
      await webhook?.end();
      await test_?.cleanup();
    });

    async function connectedStore(): Promise<string> {
      const org = await createOrganization(db, { name: `Bail ${randomUUID().slice(0, 8)}` });
      const id = randomUUID();
      await db.query(
        `WITH s AS (INSERT INTO stores (organization_id, address) VALUES ($1, 'https://bail.example') RETURNING id)
         INSERT INTO store_connections (organization_id, store_id, id, platform, api_base, credentials, webhook_secret, secret_hint)
         SELECT $1, s.id, $2, 'woocommerce', 'https://bail.example/', '\\x00', '\\x00', 'abcd' FROM s`,
        [org.id, id],
      );
      return id;
    }

    test('the release waits for the webhook holding the store, then sees its queued order: due now, not an hour later', async () => {
      const id = await connectedStore();
      const owner = randomUUID();
      assert.ok(await claimNow(db, id, owner), 'the pass holds the lease');
      // The webhook's transaction as queueRefetch runs it: the connection's row locked first, then
      // the order queued, committed only once the release is waiting for that row.
      await webhook.query('BEGIN');
      await webhook.query('SELECT 1 FROM store_connections WHERE id = $1 FOR NO KEY UPDATE', [id]);
      await webhook.query(
        `INSERT INTO store_order_refetches (connection_id, external_id) VALUES ($1, '42')`,
        [id],
      );
      const released = release(db, id, owner, { ok: true, nextInS: 3600, finished: true });
      await waitUntilBlocked(db, id);
      await webhook.query('COMMIT');
      await released;
      const [row] = await db.query<{ due: boolean; lease_owner: string | null }>(
        'SELECT next_sync_at <= now() AS due, lease_owner FROM store_connections WHERE id = $1',
        [id],
      );
      assert.equal(row?.lease_owner, null, 'the lease is given back');
      assert.equal(row?.due, true, 'the queued order is fetched at once');
    });

    test('with nothing queued, the next pass is an interval away', async () => {
      const id = await connectedStore();
      const owner = randomUUID();
      assert.ok(await claimNow(db, id, owner));
      await release(db, id, owner, { ok: true, nextInS: 3600, finished: true });
      const [row] = await db.query<{ wait_s: number }>(
        'SELECT extract(epoch FROM next_sync_at - now())::float8 AS wait_s FROM store_connections WHERE id = $1',
        [id],
      );
      assert.ok(row && row.wait_s > 3500, `next pass in ${row?.wait_s} s`);
    });
  });

/** Waits until a statement of the release is blocked on the connection's row lock. */
async function waitUntilBlocked(db: Database, id: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [blocked] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE wait_event_type = 'Lock' AND query LIKE '%store_connections%' AND datname = current_database()`,
    );
    if ((blocked?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`the release never waited for the webhook's lock on ${id}`);
}
