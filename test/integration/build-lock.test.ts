// Issue 28, several instances on PostgreSQL (docs/architecture.md, "Cold start"): two servers of
// one database, started together on an organization with no saved snapshot and sharing
// REPORT_SNAPSHOT_DIR, build it once: the one holding the organization's advisory lock builds and
// saves, the other reads the saved file. Both are held at their first read of the orders by a
// real lock on the table until both have started, so that neither finds the other's file by luck.
// Issue 29: while another instance builds an organization (its advisory lock held, here by the
// test's own session as that instance's build holds it), this instance's builds of the others go
// on: the wait for the other instance's file holds back no lane.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createOrganization } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import {
  BUILD_LOCK,
  ColumnarReportEngine,
  type SnapshotEvent,
} from '../../src/metrics/columnar/columnar-engine.js';
import { SqlReportEngine } from '../../src/metrics/engine.js';
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

if (onPostgres)
  test('issue 29: while another instance builds one organization, this one builds the others without waiting for it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-build-lock-29-'));
    const [held, small] = (await Promise.all(
      ['Tenue ailleurs', 'Petite'].map(async (name) => {
        const id = (await createOrganization(database.db, { name })).id;
        const orders = Array.from({ length: 20 }, (_, n) => ({
          store: 'https://b.example',
          id: `${name.slice(0, 1)}${n}`,
          created_at: new Date(Date.UTC(2025, 0, 1) + n * 60_000).toISOString(),
          status: 'completed',
          customer_email: `client${n}@example.com`,
          items: 1,
          total: '10.00',
        }));
        assert.ok(!(await importOrderRecords(database.db, id, orders)).refused);
        return id;
      }),
    )) as [string, string];
    const events: SnapshotEvent[] = [];
    const columnar = new ColumnarReportEngine(database.db, new SqlReportEngine(database.db), {
      memoryBudgetBytes: 64 * 1024 ** 2,
      snapshotDir: dir,
      onEvent: (event) => events.push(event),
    });
    // Another instance's build of `held` under way: its advisory lock, held until release().
    let release = () => {};
    let locked = () => {};
    const taken = new Promise<void>((resolve) => (locked = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const lock = database.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [BUILD_LOCK, Number(held)]);
      locked();
      await released;
    });
    await taken;
    const built = (id: string) =>
      events.some((e) => (e.event === 'built' || e.event === 'loaded') && e.organizationId === id);
    try {
      const waitingForHeld = columnar.prepare(held); // first in this instance's small lane
      // Waiting in the lane (the old code) it would wait as long as the lock: at most 10 s here.
      await Promise.race([columnar.prepare(small), new Promise((resolve) => setTimeout(resolve, 10_000))]);
      assert.ok(built(small), 'the small organization built while the other instance builds `held`');
      assert.ok(!built(held), '`held` waits for the other instance');
      release();
      await lock;
      await waitingForHeld;
      assert.ok(built(held), 'built here once the other instance let go without a file');
    } finally {
      release();
      await lock;
      await columnar.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
