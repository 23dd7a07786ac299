// What every sub-command uses: its context (options, output), the option helpers, and opening the
// database like the server does (joining a running server's embedded database through its socket, X1).
import type { Config } from '../config.js';
import { openDatabase, type Database } from '../db/database.js';
import { migrate, readMigrations } from '../db/migrate.js';
import { AppError } from '../errors.js';

export interface CommandContext {
  readonly config: Config;
  readonly json: boolean;
  readonly values: Record<string, string | boolean | undefined>;
  readonly positionals: string[];
  print(result: unknown, text: string): void;
  progress(line: string): void;
  warn(line: string): void;
}

export interface Command {
  options: Record<string, { type: 'string' | 'boolean' }>;
  positionals?: boolean;
  run(context: CommandContext): Promise<number>;
}

export const text = { type: 'string' } as const;

export function required(context: CommandContext, name: string): string {
  const value = context.values[name];
  if (typeof value !== 'string' || value.trim() === '')
    throw new AppError('INVALID_PARAMETER', `option --${name} requise`);
  return value.trim();
}

export async function withDatabase<T>(
  context: CommandContext,
  work: (db: Database) => Promise<T>,
): Promise<T> {
  const db = await openDatabase(context.config, { role: 'cli' });
  try {
    if (!(await schemaIsCurrent(db))) await migrate(db);
    return await work(db);
  } finally {
    await db.close();
  }
}

/**
 * Whether every migration is applied and none has work left (migration 004's rehash): one
 * statement. migrate() takes a lock and runs a transaction per migration, some thirty round
 * trips, which a small import would pay each time (issue 19, item 4); on the embedded engine each
 * may wait behind a running report for PGlite's one session. Anything unexpected (no table yet)
 * leaves the answer to migrate().
 */
async function schemaIsCurrent(db: Database): Promise<boolean> {
  try {
    const [row] = await db.query<{ versions: number[]; pending: boolean }>(
      `SELECT coalesce(array_agg(version ORDER BY version), '{}') AS versions,
         EXISTS (SELECT 1 FROM customer_rehash_pending) AS pending FROM schema_migrations`,
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

export const list = (value: string | boolean | undefined): string[] | undefined =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
    : undefined;

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
