// Applies migrations/NNN_name.sql in order, each once, each in its own transaction. An advisory
// lock makes concurrent starts (several instances, or serve and the CLI) apply them one at a time.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.js';
import { rehashCustomers } from './rehash-customers.js';
import { normalizeStoredAddresses } from './store-address-migration.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));
const LOCK_ID = 7_351_902;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((file) => /^\d{3}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: fs.readFileSync(`${dir}/${file}`, 'utf8'),
    }));
}

/** Returns the versions it applied. */
export async function migrate(db: Database, migrations = readMigrations()): Promise<number[]> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  });
  const applied: number[] = [];
  for (const migration of migrations) {
    const done = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (seen.length > 0) return false;
      await tx.query(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      return true;
    });
    if (done) applied.push(migration.version);
  }
  // 004 needs SECRET_KEY, which SQL does not have: its rows are rehashed here (resumable).
  if (migrations.some((m) => m.version === 4)) await rehashCustomers(db, LOCK_ID);
  // 014 needs the WHATWG URL rules, which SQL does not have: addresses are rewritten here.
  if (migrations.some((m) => m.version === 14)) await normalizeStoredAddresses(db, LOCK_ID);
  return applied;
}
