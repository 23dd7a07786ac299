// P5: the IANA zone names the database itself knows, read once per process, so that a name
// accepted here is one PostgreSQL's AT TIME ZONE understands the same way on both engines.
import fs from 'node:fs';
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

export async function loadTimeZones(db: Pick<Queryable, 'query'>): Promise<TimeZones> {
  const rows = await db.query<{ name: string; before_year_1: boolean; after_year_9999: boolean }>(
    `SELECT name,
       (timestamptz '0001-01-01 00:00:00+00' AT TIME ZONE name) < timestamp '0001-01-01 00:00:00' AS before_year_1,
       (timestamptz '9999-12-31 23:59:59.999999+00' AT TIME ZONE name) >= timestamp '10000-01-01 00:00:00' AS after_year_9999
     FROM pg_timezone_names WHERE name !~ '^(posix/|right/)' AND name NOT IN ('posixrules', 'Factory', 'localtime')`,
  );
  const names = (flag: 'before_year_1' | 'after_year_9999') => rows.filter((r) => r[flag]).map((r) => r.name);
  return zonesOf(
    rows.map((r) => r.name),
    names('before_year_1'),
    names('after_year_9999'),
  );
}

function zonesOf(
  names: readonly string[],
  beforeYear1: readonly string[],
  afterYear9999: readonly string[],
): TimeZones {
  return Object.assign(new Set(names), {
    beforeYear1: new Set(beforeYear1),
    afterYear9999: new Set(afterYear9999),
  });
}

/** The embedded database's list of zones, in its DATA_DIR (savedTimeZones). */
export const TIME_ZONES_FILE = 'time-zones.json';

/** The zones as that file keeps them. */
interface SavedZones {
  readonly key: string;
  readonly names: readonly string[];
  readonly beforeYear1: readonly string[];
  readonly afterYear9999: readonly string[];
}

const isTexts = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'string');

/** A file's bytes at most (the list is about 20 kB): anything larger is not read. */
const MAX_FILE_BYTES = 1 << 20;

function readSaved(file: string, key: string): SavedZones | undefined {
  try {
    if (fs.statSync(file).size > MAX_FILE_BYTES) return undefined;
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Record<keyof SavedZones, unknown>>;
    if (saved.key !== key || !isTexts(saved.names) || saved.names.length === 0) return undefined;
    if (!isTexts(saved.beforeYear1) || !isTexts(saved.afterYear9999)) return undefined;
    return { key, names: saved.names, beforeYear1: saved.beforeYear1, afterYear9999: saved.afterYear9999 };
  } catch {
    return undefined; // none yet, unreadable or damaged: read from the database
  }
}

/**
 * The zones of an embedded database: read from `file` when it was written for the same PGlite and
 * PostgreSQL (`key`), else from the database and written there. pg_timezone_names reads every
 * zone's rules from PGlite's file system the first time, 0.4–0.5 s of its one session at each
 * start, which the first build's statements waited behind (issue 28); the list is PGlite's own, the
 * same for every database of one PGlite version. A file that cannot be written changes nothing.
 */
export async function savedTimeZones(
  db: Pick<Queryable, 'query'>,
  file: string,
  pgliteVersion: string,
): Promise<TimeZones> {
  const [row] = await db.query<{ version: string }>('SELECT version()');
  const key = `${pgliteVersion} ${String(row?.version)}`;
  const saved = readSaved(file, key);
  if (saved) return zonesOf(saved.names, saved.beforeYear1, saved.afterYear9999);
  const zones = await loadTimeZones(db);
  const written: SavedZones = {
    key,
    names: [...zones],
    beforeYear1: [...zones.beforeYear1],
    afterYear9999: [...zones.afterYear9999],
  };
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    // A new file only: never written through a link (or anything else) left at that name.
    fs.writeFileSync(temporary, JSON.stringify(written), { mode: 0o600, flag: 'wx' });
    fs.renameSync(temporary, file);
  } catch {
    fs.rmSync(temporary, { force: true });
  }
  return zones;
}
