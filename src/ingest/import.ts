// Order import (SPEC section 12, I1–I3). The input is streamed and each line validated; valid
// lines are written in batches to the import's own staging table by COPY … FROM STDIN, each batch
// one short statement (a server sharing the embedded database keeps answering while a big file is
// read), the next batch validated while the last one is stored. Only the error list is kept in
// memory (I3). Then, all or nothing (I1): either the staged lines are dropped, or one transaction
// merges them (src/ingest/merge.ts: I2 the last line of a repeated order wins, a re-import
// replaces; U2 first orders kept current) and drops them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import type { Database, Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import {
  formatOfFileName,
  inBatches,
  readOrders,
  sniffFormat,
  type OrderFormat,
  type ReadEntry,
} from './read-orders.js';
import { customerKeyOf } from './customer.js';
import {
  FAILED,
  HEARTBEAT_MS,
  beat,
  createJob,
  finishJob,
  markRunning,
  recoverInterruptedImports,
  type JobOrigin,
  type LineError,
} from './jobs.js';
import {
  discardStaged,
  hasOrders,
  mergeStaged,
  sharedLines,
  tableLines,
  type MergedCounts,
} from './merge.js';
import {
  StagingBuffer,
  createImportLines,
  dropImportLines,
  importLinesTable,
  importOrderLinesTable,
  sharedStaging,
  DeferredStaging,
  type Stager,
  type StagingTarget,
} from './staging.js';
import { SMALL_MERGE, analyzeIfStale, vacuumIfBloated } from './statistics.js';
import { streamIntoEmpty } from './stream-merge.js';
import { copyIntoEmpty, type WrittenOrders } from './copy-into-empty.js';
import { INDEXES_AFTER_MIN } from './indexes-after.js';
import { lineIndexOf } from './order-line.js';
import { validateOrder, type OrderValidation } from './validate-order.js';
import { ordersWritten } from '../observability/metrics.js';

export type { LineError } from './jobs.js';

export interface ImportResult {
  /** New orders. */
  imported: number;
  /** Orders that existed and were replaced (I2). */
  updated: number;
  /** Faulty lines (skipped with skipInvalid, otherwise the import was refused). */
  rejected: number;
  /** The first MAX_REPORTED_ERRORS errors, in file order (finding 2: memory stays flat). */
  errors: LineError[];
  /** Every error found, reported or not. */
  errorCount: number;
  /** I1: invalid lines without skipInvalid: nothing was written (a result, not an exception). */
  refused: boolean;
  /** Why the whole file was refused, skipInvalid or not (it is not UTF-8: issue 18, finding 3). */
  fileError?: string;
}

/** What a refused import says, for the CLI and the web page alike. */
export const refusalMessage = (result: Pick<ImportResult, 'rejected' | 'fileError'>): string =>
  result.fileError === undefined
    ? `Import refusé : ${result.rejected} ligne(s) invalide(s), aucune commande n'a été importée`
    : `Import refusé : ${result.fileError} ; aucune commande n'a été importée`;

/** Errors kept for the report; the others are only counted (finding 2). */
export const MAX_REPORTED_ERRORS = 1000;

export interface ImportOptions {
  /** `--skip-invalid`: import the valid lines and report the others (I1). */
  skipInvalid?: boolean;
  /** Called about every 0.5 s while the file is read (I3). */
  onProgress?: (progress: { lines: number; ordersPerSecond: number }) => void;
  /** The queued job this import runs (the browser's imports); else a job is created. */
  jobId?: string;
  /**
   * On a PostgreSQL server, a first import writes its orders while the file is read, in one
   * transaction that holds the organization's row (src/ingest/stream-merge.ts). Off for a pipe,
   * whose pace the import does not control: the row would be held as long as the pipe stalls.
   */
  streamIntoOrders?: boolean;
  /** Who started it and from which file, for the job row. */
  origin?: JobOrigin;
  fileName?: string;
  /**
   * The same entries read again from the start (a file, not a pipe): a command hosting the embedded
   * database writes a first import straight into orders, and reads the file a second time, staged,
   * when it repeats an order (src/ingest/copy-into-empty.ts).
   */
  readAgain?: () => AsyncIterable<readonly ReadEntry[]>;
  /** The file's size in bytes, when known: how much the import may write (copy-into-empty.ts). */
  fileBytes?: number;
  /**
   * Told of the orders an import written straight into its tables writes, and of its commit
   * (copy-into-empty.ts): the command builds the organization's report snapshot from them.
   */
  written?: WrittenOrders;
  /**
   * false: the statistics are left to the caller (refreshAfterImport), as a command does to save
   * its report snapshot while the database analyzes (src/cli/prepare-reports.ts).
   */
  refreshStatistics?: boolean;
}

export { STAGING_BATCH } from './staging.js';
const PROGRESS_INTERVAL_MS = 500;

function progressReporter(onProgress: ImportOptions['onProgress']): (lines: number) => void {
  const started = Date.now();
  let reported = started;
  return (lines) => {
    if (onProgress === undefined || lines % 256 !== 0) return;
    const now = Date.now();
    if (now - reported < PROGRESS_INTERVAL_MS) return;
    reported = now;
    onProgress({ lines, ordersPerSecond: Math.round((lines * 1000) / (now - started)) });
  };
}

/** The longest run of import work between two turns of the event loop. */
const SLICE_MS = 8;

/** What reading a file found: its lines, the valid ones staged, the others reported. */
interface ReadLines {
  lines: number;
  staged: number;
  rejected: number;
  errors: LineError[];
  errorCount: number;
  /** Set by an entry that refuses the whole file (ReadEntry's `fatal`): reading stopped there. */
  fileError?: string;
}

const nothingRead = (): ReadLines => ({ lines: 0, staged: 0, rejected: 0, errors: [], errorCount: 0 });

/**
 * The errors of an order read from several CSV rows (L8), each on its own row: those of its line
 * k on the row of that line, the rows that contradict the first one on theirs; in file order.
 * Undefined for an order of one line or row without problems (its errors are on its line).
 */
function lineErrorsOf(
  entry: Extract<ReadEntry, { record: unknown }>,
  validation: OrderValidation,
): LineError[] | undefined {
  if (entry.rows === undefined || (validation.ok && entry.problems === undefined)) return undefined;
  const rows = entry.rows;
  const found = validation.ok ? [] : validation.errors;
  const errors = found.map((error) => ({
    line: rows[lineIndexOf(error.field) ?? -1] ?? entry.line,
    ...error,
  }));
  return [...errors, ...(entry.problems ?? [])].sort((a, b) => a.line - b.line);
}

/** Reads and validates every entry into `read`, stages the valid ones, reports progress (I3). */
async function stageEntries(
  db: Database,
  batches: AsyncIterable<readonly ReadEntry[]>,
  staging: Stager,
  read: ReadLines,
  onProgress: ImportOptions['onProgress'],
): Promise<void> {
  const customerKey = customerKeyOf(db.secretKey); // U1: only the hash is staged, never the email
  const progress = progressReporter(onProgress);
  let slice = performance.now();
  reading: for await (const entries of batches) {
    for (const entry of entries) {
      progress(++read.lines);
      // A batch is validated synchronously, which never lets the event loop serve a request: a
      // chunk of tiny lines (`{}`, six errors each) would hold it for the whole chunk. Give it a
      // turn every few milliseconds of work (/healthz stays fast during any import).
      if (read.lines % 128 === 0 && performance.now() - slice >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
      }
      const validation =
        'error' in entry
          ? { ok: false as const, errors: [entry.error] }
          : validateOrder(entry.record, customerKey);
      const problems = 'record' in entry ? lineErrorsOf(entry, validation) : undefined;
      const found =
        problems ?? (validation.ok ? [] : validation.errors.map((e) => ({ line: entry.line, ...e })));
      if (!validation.ok || found.length > 0) {
        read.rejected++;
        for (const error of found) {
          if (read.errorCount++ < MAX_REPORTED_ERRORS) read.errors.push(error);
        }
        if ('fatal' in entry && entry.fatal === true) {
          read.fileError = entry.error.message;
          break reading;
        }
        continue;
      }
      staging.add(entry.line, validation.order);
      read.staged++;
      if (staging.full) await staging.flush();
    }
  }
  await staging.finish();
}

/**
 * The job's heartbeat (finding 7), every HEARTBEAT_MS from the first line read to the commit: a
 * merge of millions of orders, or inserts catching up with the reading on a server, outlast the
 * minute of silence after which another import would take this one for killed. One beat at a time.
 */
function startHeartbeat(db: Database, job: { organizationId: string; importId: string }, read: ReadLines) {
  const started = Date.now();
  let beating: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (beating !== undefined) return;
    const progress = {
      lines: read.lines,
      ordersPerSecond: Math.round((read.lines * 1000) / Math.max(Date.now() - started, 1)),
    };
    beating = beat(db, job.organizationId, job.importId, progress)
      .catch(() => undefined) // the database gone: the import itself fails and says so
      .finally(() => (beating = undefined));
  }, HEARTBEAT_MS);
  return async function stop(): Promise<void> {
    clearInterval(timer);
    await beating;
  };
}

/** Records the job's result in the transaction that writes its orders. */
type OnCommit = (tx: Queryable, counts: MergedCounts) => Promise<void>;

/**
 * I2, U2: one transaction merges the staged lines, drops them (I1: with the commit that merges
 * them) and records the job's result (onCommit).
 */
async function mergeLines(
  db: Database,
  job: { organizationId: string; importId: string },
  staged: number,
  where: { repeats: boolean; shared: boolean },
  onCommit: OnCommit,
) {
  const { organizationId, importId } = job;
  await analyzeIfStale(db, { organizationId, merging: staged }); // the merge's plans look orders up by key
  return db.transaction(async (tx) => {
    if (where.shared) {
      const counts = await mergeStaged(tx, organizationId, importId, sharedLines(staged));
      await discardStaged(tx, organizationId, importId);
      await onCommit(tx, counts);
      return counts;
    }
    const lines = tableLines(
      importLinesTable(importId),
      importOrderLinesTable(importId),
      staged,
      where.repeats,
      db.engine === 'embedded' && staged >= INDEXES_AFTER_MIN,
    );
    const counts = await mergeStaged(tx, organizationId, importId, lines);
    await dropImportLines(tx, importId);
    await onCommit(tx, counts);
    return counts;
  });
}

/** Where an import's lines are staged, for its cleanup; `merged`: they went with the merge's commit. */
interface Staging {
  buffer?: Stager;
  shared?: boolean;
  merged?: boolean;
}

/**
 * The job's result, written in the transaction that commits its orders (issue 18, finding 3): a
 * job row updated after the commit could fail or never come (a process killed between the two),
 * leaving a job « en cours » whose orders are stored, then « interrompu : aucune commande » after
 * a restart. Now the row says succeeded exactly when the orders are there.
 */
const succeeded =
  (job: { organizationId: string; importId: string }, read: ReadLines): OnCommit =>
  (tx, counts) =>
    finishJob(tx, job.organizationId, job.importId, {
      state: 'succeeded',
      lines: read.lines,
      ...counts,
      rejected: read.rejected,
      errorCount: read.errorCount,
      errors: read.errors,
    });

/**
 * Reads the entries into the import's staging and merges them (I2, U2), or not when the file is
 * refused (I1: `counts` undefined). An organization without orders gets them while the file is
 * read: straight into their tables from a command hosting the embedded database alone
 * (src/ingest/copy-into-empty.ts), through the staging on a PostgreSQL server
 * (src/ingest/stream-merge.ts); otherwise one transaction merges them once read.
 */
async function readAndMerge(
  db: Database,
  job: { organizationId: string; importId: string },
  batches: AsyncIterable<readonly ReadEntry[]>,
  options: ImportOptions,
  staging: Staging,
): Promise<{ read: ReadLines; counts?: MergedCounts }> {
  const { organizationId, importId } = job;
  const read = nothingRead();
  const stopHeartbeat = startHeartbeat(db, job, read);
  let entries = batches;
  try {
    const refused = (): boolean =>
      read.fileError !== undefined || (read.rejected > 0 && options.skipInvalid !== true);
    const stage = async (stager: Stager) => {
      staging.buffer = stager;
      await stageEntries(db, entries, stager, read, options.onProgress);
      return { staged: read.staged, refused: refused() };
    };
    // The stream's transaction checks again under the organization's lock; this look needs none.
    if (
      db.hostedByCommand &&
      options.readAgain !== undefined &&
      options.streamIntoOrders !== false &&
      !(await hasOrders(db, organizationId))
    ) {
      const file = { bytes: options.fileBytes ?? 0, refused };
      const copied = await copyIntoEmpty(
        db,
        organizationId,
        file,
        stage,
        succeeded(job, read),
        options.written,
      );
      if (copied === 'refused') return { read };
      if (typeof copied === 'object') return { read, counts: copied };
      if (copied === 'repeated') {
        // Nothing was written: the file again, from its first line, staged and merged (I2).
        Object.assign(read, nothingRead());
        entries = options.readAgain();
      }
      // undefined: orders came meanwhile and nothing was read; staged below.
    }
    // Created once the job is running, so that no recovery takes it for a killed import's.
    const ownTable = () => createImportLines(db, importId, { byLine: db.engine === 'postgres' });
    let target: StagingTarget | undefined;
    if (
      db.engine === 'postgres' &&
      options.streamIntoOrders !== false &&
      !(await hasOrders(db, organizationId))
    ) {
      const own = (target = await ownTable());
      const streamed = await streamIntoEmpty(
        db,
        organizationId,
        importId,
        (lines) =>
          stage(
            new StagingBuffer(db, own, (first, last) =>
              refused() ? lines.stop() : lines.stored(first, last),
            ),
          ),
        succeeded(job, read),
      );
      if (refused()) return { read };
      if (typeof streamed === 'object') return { read, counts: streamed };
      // Read but not merged by the stream: it found an order twice.
      if (streamed === 'read')
        return {
          read,
          counts: await mergeLines(
            db,
            job,
            read.staged,
            { repeats: true, shared: false },
            succeeded(job, read),
          ),
        };
      // undefined: orders came meanwhile and nothing was read; staged below into the table.
    }
    // Issue 19, item 4: a file of a few orders (a scheduled export, a shop's last minutes) is
    // staged in the shared import_staging, as a connector's page is, rather than in a table of its
    // own: no table created and dropped each time (the embedded engine never vacuums its
    // catalogue), fewer statements (on the embedded engine, each may wait for its one session).
    const chosen = target;
    await stage(
      chosen !== undefined
        ? new StagingBuffer(db, chosen)
        : new DeferredStaging(db, SMALL_MERGE, async (small) => {
            staging.shared = small;
            return small ? sharedStaging(organizationId, importId) : ownTable();
          }),
    );
    if (refused()) return { read };
    const shared = staging.shared === true;
    return {
      read,
      counts: await mergeLines(db, job, read.staged, { repeats: false, shared }, succeeded(job, read)),
    };
  } finally {
    await stopHeartbeat();
  }
}

async function importEntries(
  db: Database,
  organizationId: string,
  batches: AsyncIterable<readonly ReadEntry[]>,
  options: ImportOptions,
): Promise<ImportResult> {
  const importId = options.jobId ?? crypto.randomUUID();
  // One transaction for the bookkeeping before the lines: on the embedded engine, one wait for
  // PGlite's session (which a report may hold for seconds) instead of one a statement (issue 19).
  await db.transaction(async (tx) => {
    // A killed import leaves its staged lines behind: its heartbeat has stopped (finding 7).
    await recoverInterruptedImports(tx, { organizationId });
    if (options.jobId) await markRunning(tx, organizationId, importId);
    else
      await createJob(tx, {
        id: importId,
        organizationId,
        origin: options.origin ?? 'cli',
        state: 'running',
        ...(options.fileName ? { fileName: options.fileName } : {}),
      });
  });
  const staging: Staging = {};
  let finished = false;
  try {
    const { read, counts } = await readAndMerge(db, { organizationId, importId }, batches, options, staging);
    staging.merged = counts !== undefined;
    const { lines, rejected, errors, errorCount, fileError } = read;
    if (counts === undefined) {
      const result = {
        imported: 0,
        updated: 0,
        rejected,
        errors,
        errorCount,
        refused: true,
        ...(fileError === undefined ? {} : { fileError }),
      };
      await finishJob(db, organizationId, importId, { state: 'refused', lines, ...result });
      finished = true;
      return result;
    }
    // The job's row was written with the orders (succeeded).
    const result = { ...counts, rejected, errors, errorCount, refused: false };
    finished = true;
    ordersWritten.inc({ source: 'import' }, counts.imported + counts.updated); // issue 29: /metrics
    if (options.refreshStatistics !== false)
      await refreshAfterImport(db, organizationId, counts.imported + counts.updated);
    return result;
  } finally {
    if (!finished) {
      await finishJob(db, organizationId, importId, { state: 'failed', message: FAILED }).catch(
        () => undefined,
      );
    }
    // I1: a refused or failed import leaves nothing behind (a merged one's lines went with its
    // commit). Best effort: the database may be gone; then the next import of the organization, or
    // the next start, drops them (recoverInterruptedImports).
    if (staging.merged !== true) {
      await staging.buffer?.settle();
      if (staging.shared === true) await discardStaged(db, organizationId, importId).catch(() => undefined);
      else await dropImportLines(db, importId).catch(() => undefined);
    }
  }
}

/**
 * What an import that wrote `written` orders leaves for the next: PGlite runs no autovacuum, so the
 * room of replaced rows is made reusable and the statistics refreshed for the reports and the next
 * merge. `beside`: work that needs no statement, run while the database analyzes, if it does
 * (analyzeIfStale). Never fails: the import is committed.
 */
export async function refreshAfterImport(
  db: Database,
  organizationId: string,
  written: number,
  beside?: () => Promise<void>,
): Promise<void> {
  const work = beside ? { beside } : {};
  if (db.engine === 'embedded') {
    await vacuumIfBloated(db).catch(() => undefined);
    await analyzeIfStale(db, { written, ...work }).catch(() => undefined);
  } else if (written >= SMALL_MERGE) {
    // A server's autovacuum comes up to a minute later: until then, right after a first import
    // merged once read (its file repeated an order), the planner saw none of the organization's
    // lines and each line report over two years took about 19 s at 10,500 orders.
    await analyzeIfStale(db, { written, organizationId, ...work }).catch(() => undefined);
  }
}

/** Imports orders from a file (NDJSON or CSV by its extension, else by its content), or '-' for stdin. */
export async function importOrderFile(
  db: Database,
  organizationId: string,
  file: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  let stream: Readable = process.stdin;
  let fileBytes = 0;
  if (file !== '-') {
    const handle = await fs.promises.open(file, 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') throw new AppError('NOT_FOUND', `Fichier introuvable : ${file}`);
      throw error;
    });
    fileBytes = (await handle.stat()).size; // the file opened, whatever its name points to later
    stream = handle.createReadStream();
  }
  try {
    const named = file === '-' ? undefined : formatOfFileName(file);
    const { format, input } = named ? { format: named, input: stream } : await sniffFormat(stream);
    return await importOrderStream(db, organizationId, input, format, {
      ...(file === '-'
        ? { streamIntoOrders: false }
        : {
            readAgain: () => readOrders(fs.createReadStream(file), format),
            fileBytes,
          }),
      ...options,
    });
  } finally {
    if (file !== '-') stream.destroy();
  }
}

export function importOrderStream(
  db: Database,
  organizationId: string,
  input: Readable,
  format: OrderFormat,
  options: ImportOptions = {},
): Promise<ImportResult> {
  return importEntries(db, organizationId, readOrders(input, format), options);
}

/**
 * Imports records already in memory or generated (demo seeder, tests); line n is the n-th record.
 * Any object is accepted (an interface type has no index signature): fields are read by name.
 */
export function importOrderRecords(
  db: Database,
  organizationId: string,
  records: Iterable<object> | AsyncIterable<object>,
  options: ImportOptions = {},
): Promise<ImportResult> {
  async function* numbered(): AsyncGenerator<ReadEntry> {
    let line = 0;
    for await (const record of records) yield { line: ++line, record: record as Record<string, unknown> };
  }
  // One record a batch: generated records are processed as they come (progress, I3).
  return importEntries(db, organizationId, inBatches(numbered(), 1), options);
}
