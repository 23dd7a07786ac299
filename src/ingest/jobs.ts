// Import jobs (issue 7, finding 7): every import, from the CLI or the browser, is a row of
// import_jobs (migration 005) whose id is the import's staging id. While it reads, the import
// beats (lines read, rate); when it ends, the row holds its result. A job whose heartbeat stopped
// was killed: it is marked failed ("interrompu") and what it staged is removed.
import type { Queryable } from '../db/database.js';
import { printable } from './printable.js';
import { dropImportLines, importLinesTables } from './staging.js';

export interface LineError {
  line: number;
  field: string;
  message: string;
}

export type JobState = 'queued' | 'running' | 'succeeded' | 'refused' | 'failed';
export type JobOrigin = 'cli' | 'web' | 'connector';

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
export const FAILED = 'Import échoué : une erreur interne l’a arrêté, aucune commande n’a été importée.';
/**
 * A connector's pass commits its pages one by one (src/ingest/connectors/sync.ts): once killed,
 * what it wrote stays, which INTERRUPTED would deny (issue 18, finding 3: a job says what was written).
 */
export const INTERRUPTED_PASS =
  'Synchronisation interrompue (processus arrêté) : les pages déjà écrites sont gardées, la suite reprend à la prochaine synchronisation.';

const COLUMNS = `id, organization_id, origin, file_name, state, lines_read, orders_per_second, imported,
  updated, rejected, error_count, errors, message, created_at, finished_at`;

const num = (value: unknown): number => Number(value ?? 0);

const JOB_STATES: readonly JobState[] = ['queued', 'running', 'succeeded', 'refused', 'failed'];
const isJobState = (value: unknown): value is JobState => JOB_STATES.some((state) => state === value);

/** The stored errors, each checked: a row edited by hand shows what is well-formed, nothing else. */
function lineErrors(stored: unknown): LineError[] {
  const value: unknown = typeof stored === 'string' ? JSON.parse(stored) : stored;
  if (!Array.isArray(value)) return [];
  return value.flatMap((e: unknown) =>
    typeof e === 'object' &&
    e !== null &&
    'line' in e &&
    typeof e.line === 'number' &&
    'field' in e &&
    typeof e.field === 'string' &&
    'message' in e &&
    typeof e.message === 'string'
      ? [{ line: e.line, field: e.field, message: e.message }]
      : [],
  );
}

function toJob(row: Record<string, unknown>): ImportJob {
  const state = row.state;
  if (!isJobState(state)) throw new Error(`import_jobs.state inattendu : ${String(state).slice(0, 40)}`);
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    origin: row.origin === 'web' || row.origin === 'connector' ? row.origin : 'cli',
    fileName: row.file_name === null ? null : String(row.file_name),
    state,
    linesRead: num(row.lines_read),
    ordersPerSecond: num(row.orders_per_second),
    imported: num(row.imported),
    updated: num(row.updated),
    rejected: num(row.rejected),
    errorCount: num(row.error_count),
    errors: lineErrors(row.errors),
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
    `INSERT INTO import_jobs (organization_id, id, origin, file_name, state, started_at)
     VALUES ($1, $2, $3, $4, $5, CASE WHEN $5 = 'running' THEN now() END)`,
    [
      job.organizationId,
      job.id,
      job.origin,
      job.fileName ? printable(job.fileName.slice(0, 255)) : null,
      job.state,
    ],
  );
}

export async function markRunning(db: Queryable, organizationId: string, id: string): Promise<void> {
  await db.query(
    `UPDATE import_jobs SET state = 'running', started_at = now(), heartbeat_at = now()
     WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
}

export async function beat(
  db: Queryable,
  organizationId: string,
  id: string,
  progress: { lines: number; ordersPerSecond: number },
) {
  await db.query(
    `UPDATE import_jobs SET lines_read = $3, orders_per_second = $4, heartbeat_at = now()
     WHERE organization_id = $1 AND id = $2 AND state = 'running'`,
    [organizationId, id, progress.lines, progress.ordersPerSecond],
  );
}

export async function finishJob(
  db: Queryable,
  organizationId: string,
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
        /** Why the whole file was refused (ImportResult's fileError). */
        fileError?: string;
      }
    | {
        state: 'failed';
        message: string;
        /** What a connector's pass wrote before it failed: its pages are committed one by one. */
        written?: { lines: number; imported: number; updated: number };
      },
): Promise<void> {
  if (outcome.state === 'failed') {
    const { written } = outcome;
    await db.query(
      `UPDATE import_jobs SET state = 'failed', message = $3, finished_at = now(),
         lines_read = COALESCE($4, lines_read), imported = COALESCE($5, imported), updated = COALESCE($6, updated)
       WHERE organization_id = $1 AND id = $2`,
      [
        organizationId,
        id,
        printable(outcome.message),
        written?.lines ?? null,
        written?.imported ?? null,
        written?.updated ?? null,
      ],
    );
    return;
  }
  await db.query(
    `UPDATE import_jobs SET state = $3, lines_read = $4, imported = $5, updated = $6, rejected = $7,
       error_count = $8, errors = $9::jsonb, message = $10, finished_at = now(), heartbeat_at = now()
     WHERE organization_id = $1 AND id = $2`,
    [
      organizationId,
      id,
      outcome.state,
      outcome.lines,
      outcome.imported,
      outcome.updated,
      outcome.rejected,
      outcome.errorCount,
      JSON.stringify(outcome.errors.slice(0, JOB_ERRORS_KEPT).map(storable)),
      outcome.fileError === undefined ? null : printable(outcome.fileError),
    ],
  );
}

/**
 * An error as jsonb can keep it: a NUL (`\u0000`) or a lone surrogate in a JSON string is refused
 * by PostgreSQL, which failed the whole update (issue 18, finding 3). The readers never quote one;
 * this keeps it so whatever a message or a CSV header holds.
 */
const storable = (error: LineError): LineError => ({
  line: error.line,
  field: printable(error.field),
  message: printable(error.message),
});

/** The job, only for its own organization (another organization's id is unknown). */
export async function findJob(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<ImportJob | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  const [row] = await db.query(`SELECT ${COLUMNS} FROM import_jobs WHERE organization_id = $1 AND id = $2`, [
    organizationId,
    id,
  ]);
  return row ? toJob(row) : undefined;
}

/**
 * Imports that can no longer finish: those whose heartbeat stopped, or, at the start of the
 * embedded database's server (`everyJob`: no other process can be importing), every unfinished
 * one. They are marked failed, and staged rows that belong to no live job are removed. With
 * `organizationId` (before each import) only that organization's jobs and rows are touched.
 */
export async function recoverInterruptedImports(
  db: Queryable,
  scope: { organizationId: string } | { everyJob: boolean },
): Promise<number> {
  const everyJob = 'everyJob' in scope && scope.everyJob;
  const organizationId = 'organizationId' in scope ? scope.organizationId : null;
  const stale = await db.query(
    `UPDATE import_jobs SET state = 'failed', finished_at = now(),
       message = CASE WHEN origin = 'connector' THEN $5 ELSE $1 END
     WHERE ($4::bigint IS NULL OR organization_id = $4)
       AND state IN ('queued', 'running')
       AND ($2 OR heartbeat_at < now() - make_interval(secs => $3))
     RETURNING id`,
    [INTERRUPTED, everyJob, STALE_AFTER_S, organizationId, INTERRUPTED_PASS],
  );
  for (const table of ['import_customers', 'import_staging']) {
    await db.query(
      `DELETE FROM ${table} t WHERE ($1::bigint IS NULL OR t.organization_id = $1)
         AND NOT EXISTS (SELECT 1 FROM import_jobs j WHERE j.organization_id = t.organization_id
           AND j.id = t.import_id AND j.state IN ('queued', 'running'))`,
      [organizationId],
    );
  }
  await dropDeadImportLines(db, organizationId);
  return stale.length;
}

/**
 * Drops the tables of file imports that can no longer finish (I1): their job has ended, or, in
 * the scope of every organization, is gone (its organization deleted). A file import creates its
 * table once its job is running, so a live import's table always has a live job.
 */
async function dropDeadImportLines(db: Queryable, organizationId: string | null): Promise<void> {
  const importIds = await importLinesTables(db);
  if (importIds.length === 0) return;
  const jobs = await db.query<{ id: string; live: boolean }>(
    `SELECT id, state IN ('queued', 'running') AS live FROM import_jobs
     WHERE ($2::bigint IS NULL OR organization_id = $2) AND id = ANY ($1::uuid[])`,
    [importIds, organizationId],
  );
  const live = new Map(jobs.map((job) => [job.id, job.live]));
  for (const importId of importIds) {
    // In one organization's scope, another organization's imports are not seen: left alone.
    const dead = live.get(importId) === false || (!live.has(importId) && organizationId === null);
    if (dead) await dropImportLines(db, importId);
  }
}
