// Whether the database's schema is the one this build's migrations describe, without migrating:
// the one statement a CLI command pays before its work (issue 19, item 4). Beside the migrations
// because it reads their table; the command layer holds no SQL (STYLE, issue 26 item 5).
import type { Queryable } from './database.js';
import { readMigrations } from './migrate.js';

/**
 * Whether every migration is applied and none has work left (migration 004's rehash, 014's
 * addresses: a run killed midway goes on at the next migrate): one statement. migrate() takes a
 * lock and runs a transaction per migration, about a hundred round trips, which a small import or
 * a server's start would pay each time; on the embedded engine each may wait behind a running
 * report for PGlite's one session. Anything unexpected (no table yet) answers false and leaves the
 * work to migrate().
 */
export async function schemaIsCurrent(db: Queryable): Promise<boolean> {
  try {
    const [row] = await db.query<{ versions: number[]; pending: boolean }>(
      `SELECT coalesce(array_agg(version ORDER BY version), '{}') AS versions,
         EXISTS (SELECT 1 FROM customer_rehash_pending)
           OR EXISTS (SELECT 1 FROM store_address_pending) AS pending
       FROM schema_migrations`,
    );
    const expected = readMigrations().map((m) => m.version);
    return (
      row !== undefined &&
      !row.pending &&
      row.versions.length === expected.length &&
      row.versions.every((version, i) => version === expected[i])
    );
  } catch {
    return false;
  }
}
