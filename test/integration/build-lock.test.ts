// Issue 28, several instances on PostgreSQL (docs/architecture.md, "Cold start"): two servers of
// one database, started together on an organization with no saved snapshot and sharing
// REPORT_SNAPSHOT_DIR, build it once: the one holding the organization's advisory lock builds and
// saves, the other reads the saved file. Both are held at their first read of the orders by a
// real lock on the table until both have started, so that neither finds the other's file by luck.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createOrganization } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { engine, openTestDatabase, TEST_SECRET_KEY, type TestDatabase } from '../helpers/database.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';

// Registered on PostgreSQL only (the embedded database has one server): a skipped test fails CI's run.
const onPostgres = engine === 'postgres';
let database: TestDatabase;
let organizationId: string;
const snapshotDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-build-lock-'));

before(async () => {
  if (!onPostgres) return;
  database = await openTestDatabase();
  organizationId = (await createOrganization(database.db, { name: 'Partagée' })).id;
  const orders = Array.from({ length: 2000 }, (_, n) => ({
    store: 'https://a.example',
    id: `o${n}`,
    created_at: new Date(Date.UTC(2025, 0, 1) + n * 60_000).toISOString(),
    status: 'completed',
    customer_email: `client${n % 40}@example.com`,
    items: 1,
    total: '10.00',
  }));
  assert.ok(!(await importOrderRecords(database.db, organizationId, orders)).refused);
});
after(async () => {
  await database?.cleanup();
  fs.rmSync(snapshotDir, { recursive: true, force: true });
});

if (onPostgres)
  test('issue 28: two instances of one PostgreSQL database build a new organization once, the other reads its file', async () => {
    let release = () => {};
    let locked = () => {};
    const held = new Promise<void>((resolve) => (locked = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const lock = database.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      locked();
      await released;
    });
    await held;
    const env = {
      DATABASE_URL: String(database.config.databaseUrl),
      SECRET_KEY: TEST_SECRET_KEY,
      REPORT_SNAPSHOT_DIR: snapshotDir,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
    };
    const servers: ServerProcess[] = [];
    try {
      servers.push(...(await Promise.all([startServer(env), startServer(env)])));
      await new Promise((resolve) => setTimeout(resolve, 1000)); // both at the orders' lock
    } finally {
      release();
      await lock;
    }
    try {
      const events = () =>
        servers.flatMap((server) =>
          server
            .stdout()
            .split('\n')
            .filter((line) => line.includes('"msg":"report snapshot"'))
            .map((line) => JSON.parse(line) as { event: string; organizationId: string })
            .filter(
              (e) => e.organizationId === organizationId && (e.event === 'built' || e.event === 'loaded'),
            )
            .map((e) => e.event),
        );
      for (let waited = 0; events().length < 2; waited += 50) {
        assert.ok(waited < 30_000, `events: ${events().join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.deepEqual(events().sort(), ['built', 'loaded']);
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  });
