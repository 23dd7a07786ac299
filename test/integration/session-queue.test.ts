// The session queue that shares PGlite's single session between socket connections
// (src/db/session-queue.ts), on a real PGlite behind a real Unix socket.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { MAX_COPY_BYTES, SessionQueue } from '../../src/db/session-queue.js';
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

  test('COPY FROM STDIN reaches PGlite whole, while other connections keep being answered', async () => {
    await db.exec('CREATE TABLE copied (n int, label text)');
    const [a, b] = await Promise.all([client(), client()]);
    const rows = Array.from({ length: 20_000 }, (_, i) => `${i}\tlabel\\t${i} é\n`);
    // Many small CopyData messages, and a query of another connection between them.
    const chunks = rows.map((row) => Buffer.from(row));
    const copy = pipeline(Readable.from(chunks), a.query(copyFrom('COPY copied (n, label) FROM STDIN')));
    const other = b.query<{ v: number }>('SELECT 42 AS v');
    await copy;
    assert.equal((await other).rows[0]?.v, 42);
    const counted = await a.query<{ n: number; label: string }>(
      'SELECT count(*)::int AS n, min(label) FILTER (WHERE n = 7) AS label FROM copied',
    );
    assert.deepEqual(counted.rows[0], { n: 20_000, label: 'label\t7 é' });
    await Promise.all([a.end(), b.end()]);
  });

  test('a COPY that fails (bad row, or CopyFail from the client) writes nothing and leaves the connection usable', async () => {
    await db.exec('CREATE TABLE IF NOT EXISTS copied2 (n int)');
    const a = await client();
    await assert.rejects(
      pipeline(Readable.from(['1\n', 'two\n']), a.query(copyFrom('COPY copied2 (n) FROM STDIN'))),
      /invalid input syntax/,
    );
    const failing = new Readable({
      read() {
        this.push('3\n');
        this.destroy(new Error('source broke'));
      },
    });
    await assert.rejects(pipeline(failing, a.query(copyFrom('COPY copied2 (n) FROM STDIN'))));
    assert.equal((await a.query<{ n: number }>('SELECT count(*)::int AS n FROM copied2')).rows[0]?.n, 0);
    // A quoted ';' (a CSV delimiter) does not make it two statements.
    await pipeline(
      Readable.from(['4\n']),
      a.query(copyFrom("COPY copied2 (n) FROM STDIN WITH (FORMAT csv, DELIMITER ';')")),
    );
    assert.equal((await a.query<{ n: number }>('SELECT count(*)::int AS n FROM copied2')).rows[0]?.n, 1);
    await a.end();
  });

  test(`a COPY above ${MAX_COPY_BYTES / 2 ** 20} MiB fails as a whole instead of filling memory`, async () => {
    await db.exec('CREATE TABLE IF NOT EXISTS copied3 (label text)');
    const a = await client();
    const line = `${'x'.repeat(1023)}\n`;
    const lines = MAX_COPY_BYTES / line.length + 16;
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < lines; i += 64) yield line.repeat(64);
      })(),
    );
    await assert.rejects(
      pipeline(source, a.query(copyFrom('COPY copied3 (label) FROM STDIN'))),
      /volumineux/,
    );
    assert.equal((await a.query<{ n: number }>('SELECT count(*)::int AS n FROM copied3')).rows[0]?.n, 0);
    await a.end();
  });
});
