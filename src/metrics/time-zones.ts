// P5: the IANA zone names the database itself knows, read once per process, so that a name
// accepted here is one PostgreSQL's AT TIME ZONE understands the same way on both engines.
import type { Queryable } from '../db/database.js';

export async function loadTimeZones(db: Queryable): Promise<ReadonlySet<string>> {
  const rows = await db.query<{ name: string }>(
    `SELECT name FROM pg_timezone_names WHERE name !~ '^(posix/|right/)' AND name NOT IN ('posixrules', 'Factory', 'localtime')`,
  );
  return new Set(rows.map((r) => r.name));
}
