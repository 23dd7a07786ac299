// What every sub-command uses: its context (options, output), the option helpers, and opening the
// database like the server does (joining a running server's embedded database through its socket, X1).
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
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
  // Loaded here, not by `--help` or a mistyped command (issue 28: a command's start).
  const { openDatabase } = await import('../db/database.js');
  const { schemaIsCurrent } = await import('../db/schema-version.js');
  const db = await openDatabase(context.config, { role: 'cli' });
  try {
    if (!(await schemaIsCurrent(db))) await (await import('../db/migrate.js')).migrate(db);
    return await work(db);
  } finally {
    await db.close();
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
