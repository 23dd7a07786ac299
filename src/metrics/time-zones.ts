// P5: the IANA zone names the database itself knows, read once per process, so that a name
// accepted here is one PostgreSQL's AT TIME ZONE understands the same way on both engines.
import type { Queryable } from '../db/database.js';

/**
 * The zone names, and those whose local day leaves P3's years at the edges of the calendar: at
 * 0001-01-01 00:00 UTC (a zone west of Greenwich is still in year 0, which PostgreSQL's to_char
 * writes as '0001-12-31', year 1 BC) and at 9999-12-31 23:59:59 UTC (a zone east of it is in
 * year 10000, '10000-01-01'). Issue 18: the `date` dimension refuses those combinations (parse.ts).
 */
export interface TimeZones extends ReadonlySet<string> {
  readonly beforeYear1: ReadonlySet<string>;
  readonly afterYear9999: ReadonlySet<string>;
}

export async function loadTimeZones(db: Queryable): Promise<TimeZones> {
  const rows = await db.query<{ name: string; before_year_1: boolean; after_year_9999: boolean }>(
    `SELECT name,
       (timestamptz '0001-01-01 00:00:00+00' AT TIME ZONE name) < timestamp '0001-01-01 00:00:00' AS before_year_1,
       (timestamptz '9999-12-31 23:59:59.999999+00' AT TIME ZONE name) >= timestamp '10000-01-01 00:00:00' AS after_year_9999
     FROM pg_timezone_names WHERE name !~ '^(posix/|right/)' AND name NOT IN ('posixrules', 'Factory', 'localtime')`,
  );
  const names = (flag: 'before_year_1' | 'after_year_9999') =>
    new Set(rows.filter((r) => r[flag]).map((r) => r.name));
  return Object.assign(new Set(rows.map((r) => r.name)), {
    beforeYear1: names('before_year_1'),
    afterYear9999: names('after_year_9999'),
  });
}
