// Import jobs (issue 7, finding 7): every import, from the CLI or the browser, is a row of
// import_jobs (migration 005) whose id is the import's staging id. While it reads, the import
// beats (lines read, rate); when it ends, the row holds its result. A job whose heartbeat stopped
// was killed: it is marked failed ("interrompu") and what it staged is removed.
import type { Queryable } from '../db/database.js';

export interface LineError {
  line: number;
  field: string;
  message: string;
}

export type JobState = 'queued' | 'running' | 'succeeded' | 'refused' | 'failed';
export type JobOrigin = 'cli' | 'web';

export interface ImportJob {
  readonly id: string;
  readonly organizationId: string;
  readonly origin: JobOrigin;
  readonly fileName: string | null;
  readonly state: JobState;
  readonly linesRead: number;
  readonly ordersPerSecond: number;
  readonly imported: number;
  readonly updated: number;
  readonly rejected: number;
  readonly errorCount: number;
  readonly errors: readonly LineError[];
  readonly message: string | null;
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
}

/** How often a running import says it is alive, and how long a silence means it was killed. */
export const HEARTBEAT_MS = 2_000;
const STALE_AFTER_S = 60;
/** Errors kept in the job row for its page. */
export const JOB_ERRORS_KEPT = 200;
export const INTERRUPTED = 'Import interrompu (processus arrêté) : aucune commande n’a été importée.';

const COLUMNS = `id, organization_id, origin, file_name, state, lines_read, orders_per_second, imported,
  updated, rejected, error_count, errors, message, created_at, finished_at`;

const num = (value: unknown): number => Number(value ?? 0);

function toJob(row: Record<string, unknown>): ImportJob {
  const errors = typeof row.errors === 'string' ? (JSON.parse(row.errors) as unknown) : row.errors;
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    origin: row.origin === 'web' ? 'web' : 'cli',
    fileName: row.file_name === null ? null : String(row.file_name),
    state: String(row.state) as JobState,
    linesRead: num(row.lines_read),
    ordersPerSecond: num(row.orders_per_second),
    imported: num(row.imported),
    updated: num(row.updated),
    rejected: num(row.rejected),
    errorCount: num(row.error_count),
    errors: Array.isArray(errors) ? (errors as LineError[]) : [],
    message: row.message === null ? null : String(row.message),
    createdAt: new Date(String(row.created_at)),
    finishedAt: row.finished_at === null ? null : new Date(String(row.finished_at)),
  };
}

export async function createJob(
  db: Queryable,
  job: {
    id: string;
    organizationId: string;
    origin: JobOrigin;
    fileName?: string;
    state: 'queued' | 'running';
  },
): Promise<void> {
  await db.query(
    `INSERT INTO import_jobs (id, organization_id, origin, file_name, state, started_at)
     VALUES ($1, $2, $3, $4, $5, CASE WHEN $5 = 'running' THEN now() END)`,
    [job.id, job.organizationId, job.origin, job.fileName?.slice(0, 255) ?? null, job.state],
  );
}

export async function markRunning(db: Queryable, id: string): Promise<void> {
  await db.query(
    "UPDATE import_jobs SET state = 'running', started_at = now(), heartbeat_at = now() WHERE id = $1",
    [id],
  );
}

export async function beat(db: Queryable, id: string, progress: { lines: number; ordersPerSecond: number }) {
  await db.query(
    `UPDATE import_jobs SET lines_read = $2, orders_per_second = $3, heartbeat_at = now()
     WHERE id = $1 AND state = 'running'`,
    [id, progress.lines, progress.ordersPerSecond],
  );
}

export async function finishJob(
  db: Queryable,
  id: string,
  outcome:
    | {
        state: 'succeeded' | 'refused';
        lines: number;
        imported: number;
        updated: number;
        rejected: number;
        errorCount: number;
        errors: readonly LineError[];
      }
    | { state: 'failed'; message: string },
): Promise<void> {
  if (outcome.state === 'failed') {
    await db.query(
      "UPDATE import_jobs SET state = 'failed', message = $2, finished_at = now() WHERE id = $1",
      [id, outcome.message],
    );
    return;
  }
  await db.query(
    `UPDATE import_jobs SET state = $2, lines_read = $3, imported = $4, updated = $5, rejected = $6,
       error_count = $7, errors = $8::jsonb, finished_at = now(), heartbeat_at = now()
     WHERE id = $1`,
    [
      id,
      outcome.state,
      outcome.lines,
      outcome.imported,
      outcome.updated,
      outcome.rejected,
      outcome.errorCount,
      JSON.stringify(outcome.errors.slice(0, JOB_ERRORS_KEPT)),
    ],
  );
}

/** The job, only for its own organization (another organization's id is unknown). */
export async function findJob(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<ImportJob | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  const [row] = await db.query(`SELECT ${COLUMNS} FROM import_jobs WHERE id = $1 AND organization_id = $2`, [
    id,
    organizationId,
  ]);
  return row ? toJob(row) : undefined;
}

/**
 * Imports that can no longer finish: every queued or running job when `everyJob` (the embedded
 * database's server starting: no other process can be importing), else those whose heartbeat
 * stopped. They are marked failed, and staged rows that belong to no live job are removed.
 */
export async function recoverInterruptedImports(
  db: Queryable,
  options: { everyJob: boolean },
): Promise<number> {
  const stale = await db.query(
    `UPDATE import_jobs SET state = 'failed', message = $1, finished_at = now()
     WHERE state IN ('queued', 'running')
       AND ($2 OR heartbeat_at < now() - make_interval(secs => $3))
     RETURNING id`,
    [INTERRUPTED, options.everyJob, STALE_AFTER_S],
  );
  const live = `SELECT id FROM import_jobs WHERE state IN ('queued', 'running')`;
  await db.query(`DELETE FROM import_customers WHERE import_id NOT IN (${live})`);
  await db.query(`DELETE FROM import_staging WHERE import_id NOT IN (${live})`);
  return stale.length;
}
