// A fresh, migrated database on the engine the run is for (TEST_ENGINE=embedded|postgres):
// a new DATA_DIR for PGlite, a new database on the PostgreSQL server.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import { describe, test, type TestContext } from 'node:test';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';

export const engine = (process.env.TEST_ENGINE ?? 'embedded') as 'embedded' | 'postgres';

// Suites and tests that belong to one engine's run only register nothing on the other run,
// rather than a skip: under CI=true the test runner fails on any skipped test.
export function describeOn(only: typeof engine, name: string, suite: () => void | Promise<void>): void {
  if (engine === only) describe(name, suite);
}

export function testOn(only: typeof engine, name: string, fn: (t: TestContext) => Promise<void>): void {
  if (engine === only) test(name, fn);
}

/** SECRET_KEY of the tests on a PostgreSQL server, where it is required (the embedded one makes its own). */
export const TEST_SECRET_KEY = '5c0e9a7b3d1f2e4a6b8c0d2e4f6a8b0c1d3e5f7a9b2c4d6e8f0a1b3c5d7e9f2a';

export interface TestDatabase {
  config: Config;
  /** The variables config was loaded from: another configuration on the same database adds to them. */
  env: Record<string, string>;
  db: Database;
  /** Closes the database and removes everything it created. */
  cleanup(): Promise<void>;
}

/** Configuration for a fresh empty database; env overrides the rest of the configuration. */
export function freshConfig(env: Record<string, string> = {}): Promise<FreshDatabase> {
  return newDatabase(env, false);
}

/** Like freshConfig, its database already migrated (a copy of the run's template when there is one). */
export function migratedConfig(env: Record<string, string> = {}): Promise<FreshDatabase> {
  return newDatabase(env, true);
}

interface FreshDatabase {
  config: Config;
  env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * A migrated database to copy instead of building and migrating each new one, which costs seconds
 * (PGlite's initdb above all): scripts/test.js makes one per run with makeTemplate(). The copy is
 * byte for byte what migrate() made from an empty database; without the variables, as under
 * `node --test FILE`, each database is built and migrated from scratch.
 */
const TEMPLATE_DATA_DIR = 'TEST_TEMPLATE_DATA_DIR'; // embedded: a closed DATA_DIR
const TEMPLATE_DATABASE = 'TEST_TEMPLATE_DATABASE'; // PostgreSQL: a database nobody is connected to

async function newDatabase(env: Record<string, string>, migrated: boolean): Promise<FreshDatabase> {
  if (engine === 'embedded') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-test-'));
    const template = migrated ? process.env[TEMPLATE_DATA_DIR] : undefined;
    // pgdata alone: secret.key is still made on first use, one per database as before.
    if (template) fs.cpSync(path.join(template, 'pgdata'), path.join(dir, 'pgdata'), { recursive: true });
    const all = { DATA_DIR: dir, ...env };
    return { config: loadConfig(all), env: all, drop: async () => removeInBackground(dir) };
  }
  const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `sm_test_${crypto.randomBytes(6).toString('hex')}`;
  const template = migrated ? process.env[TEMPLATE_DATABASE] : undefined;
  await onServer(adminUrl, `CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const all = { DATABASE_URL: databaseUrl(adminUrl, name), SECRET_KEY: TEST_SECRET_KEY, ...env };
  return {
    config: loadConfig(all),
    env: all,
    drop: () => onServer(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * Removes a closed DATA_DIR without waiting for the disk: unlinking the files PGlite wrote costs
 * about 20 ms of I/O wait per MB here (2 s for 100 MB, 5 s at the end of a connector file), which
 * no assertion needs and which held each test file's end. The folder leaves its place at once (a
 * rename); a detached `rm -rf` that outlives the test process deletes it.
 */
function removeInBackground(dir: string): void {
  const removed = `${dir}-removed`;
  try {
    fs.renameSync(dir, removed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // never made, or gone already
    throw error;
  }
  spawn('rm', ['-rf', removed], { detached: true, stdio: 'ignore' })
    .on('error', () => fs.rmSync(removed, { recursive: true, force: true }))
    .unref();
}

async function onServer(adminUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A fresh database with every migration applied (a copy of the run's template when there is one). */
export async function openTestDatabase(env: Record<string, string> = {}): Promise<TestDatabase> {
  const { config, env: all, drop } = await migratedConfig(env);
  const db = await openDatabase(config, { role: 'server' });
  await migrate(db); // on a copy of the template, finds nothing left to apply
  return {
    config,
    env: all,
    db,
    async cleanup() {
      await db.close();
      await drop();
    },
  };
}

/**
 * Makes the run's template on `on`'s engine (for PostgreSQL, on the server at adminUrl): the
 * variables that point the test files at it, and its removal.
 */
export async function makeTemplate(
  on: typeof engine,
  adminUrl = '',
): Promise<{ env: Record<string, string>; remove(): Promise<void> }> {
  if (on === 'embedded') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-template-'));
    const db = await openDatabase(loadConfig({ DATA_DIR: dir }), { role: 'server' });
    await migrate(db);
    await db.close();
    return {
      env: { [TEMPLATE_DATA_DIR]: dir },
      remove: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `sm_template_${crypto.randomBytes(6).toString('hex')}`;
  await onServer(adminUrl, `CREATE DATABASE ${name}`);
  const config = loadConfig({ DATABASE_URL: databaseUrl(adminUrl, name), SECRET_KEY: TEST_SECRET_KEY });
  const db = await openDatabase(config, { role: 'server' });
  await migrate(db);
  await db.close();
  return {
    env: { [TEMPLATE_DATABASE]: name },
    remove: () => onServer(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * Whether another session holds orders' write lock within a second: on a PostgreSQL server, a
 * first import writing its orders while it reads (src/ingest/stream-merge.ts).
 */
export async function ordersBeingWritten(db: Database): Promise<boolean> {
  for (let waited = 0; waited < 1000; waited += 20) {
    const locks = await db.query(
      `SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database
       WHERE d.datname = current_database() AND l.relation = 'orders'::regclass
         AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid()`,
    );
    if (locks.length > 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}
