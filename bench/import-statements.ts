// Where an embedded import's time goes (issue 27, item 6): imports one file into a fresh embedded
// database in this process (PGlite in its worker thread, as `sales-metrics import` runs alone) and
// times each statement the import sends, COPY included, summed by statement. Times are wall
// clock: the COPYs overlap with the reading and validation of the next batch. Run it under
// `/usr/bin/time` for the process's CPU (both threads); an import of one order gives the fixed
// cost (PGlite's start, the migrations) to subtract.
// Usage: npm run build && node dist/bench/import-statements.js FILE.ndjson
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Database, type Queryable } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { createOrganization } from '../src/domain/organizations.js';
import { importOrderFile } from '../src/ingest/import.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: import-statements FILE');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-import-statements-'));
const db = await openDatabase(loadConfig({ ...process.env, DATA_DIR: dir }), { role: 'cli' });
const spent = new Map<string, { ms: number; count: number }>();

async function timed<T>(sql: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await run();
  } finally {
    const key = sql.replace(/\s+/g, ' ').trim().slice(0, 90);
    const entry = spent.get(key) ?? { ms: 0, count: 0 };
    entry.ms += performance.now() - started;
    entry.count++;
    spent.set(key, entry);
  }
}

const timedQueries = (q: Queryable): Queryable['query'] =>
  ((sql: string, params?: readonly unknown[]) =>
    timed(sql, () => q.query(sql, params))) as Queryable['query'];

const measured: Database = {
  engine: db.engine,
  secretKey: db.secretKey,
  query: timedQueries(db),
  copyIn: (sql, data) => timed(sql, () => db.copyIn(sql, data)),
  copyOut: (sql, onData) => db.copyOut(sql, onData),
  giveBack: (pieces) => db.giveBack(pieces),
  queryPages: (sql, params, onPage, options) => db.queryPages(sql, params, onPage, options),
  hostedByCommand: db.hostedByCommand,
  transaction: (work) =>
    db.transaction((tx) =>
      work({ query: timedQueries(tx), copyIn: (sql, data) => timed(sql, () => tx.copyIn(sql, data)) }),
    ),
  close: () => db.close(),
};

try {
  await migrate(db);
  const organization = await createOrganization(db, { name: 'Statements' });
  const started = performance.now();
  const result = await importOrderFile(measured, String(organization.id), file);
  console.log(
    `${result.imported} imported, ${result.rejected} rejected in ${(performance.now() - started).toFixed(0)} ms; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const [sql, { ms, count }] of [...spent].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12))
    console.log(`${ms.toFixed(0).padStart(7)} ms ${String(count).padStart(4)}×  ${sql}`);
} finally {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
