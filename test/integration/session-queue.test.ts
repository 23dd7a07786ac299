// The session queue that shares PGlite's single session between socket connections
// (src/db/session-queue.ts), on a real PGlite behind a real Unix socket.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { SessionQueue } from '../../src/db/session-queue.js';
import { describeOn } from '../helpers/database.js';

describeOn('embedded', 'session queue over one PGlite session', () => {
  let dir: string;
  let db: PGlite;
  let server: net.Server;
  const handlers = new Set<PGLiteSocketHandler>();
  const client = async () => {
    const c = new pg.Client({
      host: dir,
      port: 5432,
      user: 'postgres',
      database: 'postgres',
      connectionTimeoutMillis: 10_000,
    });
    c.on('error', () => undefined);
    await c.connect();
    return c;
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-queue-'));
    db = await PGlite.create();
    const queue = new SessionQueue(
      db,
      (id) => handlers.forEach((h) => h.handlerId === id && void h.detach(true)),
      300, // evict an idle owner after 0.3 s while others wait
    );
    server = net.createServer((socket) => {
      const handler = new PGLiteSocketHandler({ queryQueue: queue as never, closeOnDetach: true });
      handlers.add(handler);
      void handler.attach(socket);
    });
    await new Promise<void>((r) => server.listen(path.join(dir, '.s.PGSQL.5432'), r));
    await db.exec('CREATE TABLE t (x int)');
  });
  after(async () => {
    server.close();
    for (const h of handlers) await h.detach(true);
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('parameterized batches of concurrent connections never interleave', async () => {
    const clients = await Promise.all([client(), client(), client()]);
    const results = await Promise.all(
      Array.from({ length: 600 }, (_, i) =>
        (clients[i % 3] as pg.Client).query<{ v: number; s: string }>('SELECT $1::int AS v, $2::text AS s', [
          i,
          `x${i}`,
        ]),
      ),
    );
    results.forEach((r, i) => assert.deepEqual(r.rows, [{ v: i, s: `x${i}` }]));
    await Promise.all(clients.map((c) => c.end()));
  });

  test('a transaction is isolated: others wait for its end and see only committed rows', async () => {
    const [a, b] = await Promise.all([client(), client()]);
    await a.query('BEGIN');
    await a.query('INSERT INTO t VALUES (1)');
    const seen = b.query<{ n: number }>('SELECT count(*)::int AS n FROM t');
    await new Promise((r) => setTimeout(r, 100));
    await a.query('ROLLBACK');
    assert.equal((await seen).rows[0]?.n, 0);
    await Promise.all([a.end(), b.end()]);
  });

  test('a connection that dies inside a transaction, mid-statement, is rolled back and frees the session', async () => {
    const a = await client();
    await a.query('BEGIN');
    await a.query('INSERT INTO t VALUES (2)');
    const running = a.query('INSERT INTO t SELECT generate_series(1, 200000)').catch(() => 'closed');
    await new Promise((r) => setTimeout(r, 20));
    (a as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
    await running;
    const b = await client();
    assert.equal((await b.query<{ n: number }>('SELECT count(*)::int AS n FROM t')).rows[0]?.n, 0);
    await b.end();
  });

  test('an owner idle in a transaction while others wait is evicted (like idle_in_transaction_session_timeout)', async () => {
    const a = await client();
    await a.query('BEGIN');
    await a.query('INSERT INTO t VALUES (3)');
    const started = Date.now();
    const b = await client();
    assert.equal((await b.query<{ n: number }>('SELECT count(*)::int AS n FROM t')).rows[0]?.n, 0);
    assert.ok(Date.now() - started < 5_000);
    await assert.rejects(a.query('SELECT 1'));
    await b.end();
  });
});
