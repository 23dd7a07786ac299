// Order import (SPEC section 12, I1–I3). The input is streamed and each line validated; valid
// lines are written in batches to import_staging under a fresh import id by COPY … FROM STDIN,
// each batch one short statement (a server sharing the embedded database keeps answering while a
// big file is read), the next batch validated while the last one is stored. Only the error list
// is kept in memory (I3). Then, all or nothing (I1): either the staged rows are discarded, or one
// transaction connects the new stores, upserts the orders in one set-based statement (I2: the last
// line of a repeated order wins, a re-import replaces) and keeps the first orders current (U2).
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import type { Database, Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { FOLD_NEW_ORDERS, refreshFirstOrders } from '../metrics/first-orders.js';
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
import { validateOrder, type OrderRecord } from './validate-order.js';

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
}

/** What a refused import says, for the CLI and the web page alike. */
export const refusalMessage = (result: Pick<ImportResult, 'rejected'>): string =>
  `Import refusé : ${result.rejected} ligne(s) invalide(s), aucune commande n'a été importée`;

/** Errors kept for the report; the others are only counted (finding 2). */
export const MAX_REPORTED_ERRORS = 1000;

export interface ImportOptions {
  /** `--skip-invalid`: import the valid lines and report the others (I1). */
  skipInvalid?: boolean;
  /** Called about every 0.5 s while the file is read (I3). */
  onProgress?: (progress: { lines: number; ordersPerSecond: number }) => void;
  /** The queued job this import runs (the browser's imports); else a job is created. */
  jobId?: string;
  /** Who started it and from which file, for the job row. */
  origin?: JobOrigin;
  fileName?: string;
}

/** Orders a COPY batch holds (a few megabytes of text). */
export const STAGING_BATCH = 10_000;
const PROGRESS_INTERVAL_MS = 500;

// Staged columns after (organization_id, import_id, line), with their value.
const STAGED: [string, (order: OrderRecord) => unknown][] = [
  ['store_address', (o) => o.storeAddress],
  ['external_id', (o) => o.externalId],
  ['created_at', (o) => o.createdAt],
  ['status', (o) => o.status],
  ['billing_country', (o) => o.billingCountry],
  ['customer', (o) => o.customer],
  ['items', (o) => o.items],
  ['total', (o) => o.total],
  ['tax_total', (o) => o.taxTotal],
  ['shipping_total', (o) => o.shippingTotal],
  ['fee_total', (o) => o.feeTotal],
  ['refund_total', (o) => o.refundTotal],
  ['refund_tax', (o) => o.refundTax],
  ['refund_shipping', (o) => o.refundShipping],
];
const STAGED_FIELDS = STAGED.map(([, pick]) => pick);
const ORDER_COLUMNS = STAGED.slice(1).map(([column]) => column);

// Batches go in by COPY … FROM STDIN (text format), the database's bulk path: one statement a
// batch, its rows parsed by the server without a bound parameter or a plan.
const COPY_STAGED = `COPY import_staging (organization_id, import_id, line, ${STAGED.map(([column]) => column).join(', ')}) FROM STDIN`;

const COPY_SPECIAL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * A value as a field of COPY's text format: \N for NULL; a backslash, tab, newline or carriage
 * return escaped (any other character, Unicode included, stands for itself; NUL never passes
 * validation).
 */
export function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text = String(value);
  return text.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c] ?? c);
}

const CONNECT_STORES = `
  INSERT INTO stores (organization_id, address)
  SELECT DISTINCT $1::bigint, store_address FROM import_staging WHERE organization_id = $1 AND import_id = $2
  ON CONFLICT (organization_id, address) DO NOTHING`;

// U2, I2: the customers whose first orders may move later or vanish: those of the orders this
// import replaces, before and after. Run before the upsert, which changes them. New orders can
// only bring a first order earlier: the upsert folds them in itself (FOLD_NEW_ORDERS), so a first
// import touches no customer here and recomputes none.
const REMEMBER_REPLACED_CUSTOMERS = `
  INSERT INTO import_customers (organization_id, import_id, customer)
  SELECT DISTINCT $1::bigint, $2::uuid, c.customer FROM import_staging s
  JOIN stores st ON st.organization_id = $1 AND st.address = s.store_address
  JOIN orders o ON o.organization_id = $1 AND o.store_id = st.id AND o.external_id = s.external_id
  CROSS JOIN LATERAL (VALUES (o.customer), (s.customer)) AS c (customer)
  WHERE s.organization_id = $1 AND s.import_id = $2 AND c.customer IS NOT NULL
  ON CONFLICT DO NOTHING`;

// I2: every order from its last line, inserted or replaced in one statement (the staging index
// yields the lines in key order, last line first); xmax = 0 tells a new row from a replaced one.
const UPSERT_STAGED = `
  WITH latest AS (
    SELECT DISTINCT ON (store_address, external_id) * FROM import_staging
    WHERE organization_id = $1 AND import_id = $2
    ORDER BY store_address, external_id, line DESC
  ), upserted AS (
    INSERT INTO orders (organization_id, store_id, ${ORDER_COLUMNS.join(', ')})
    SELECT $1::bigint, st.id, ${ORDER_COLUMNS.map((c) => `l.${c}`).join(', ')} FROM latest l
    JOIN stores st ON st.organization_id = $1 AND st.address = l.store_address
    ON CONFLICT (organization_id, store_id, external_id) DO UPDATE
    SET ${ORDER_COLUMNS.slice(1)
      .map((c) => `${c} = EXCLUDED.${c}`)
      .join(', ')}, updated_at = now()
    RETURNING (xmax = 0) AS inserted, customer, created_at, status
  ), ${FOLD_NEW_ORDERS('upserted')}
  SELECT (count(*) FILTER (WHERE inserted))::int AS imported,
    (count(*) FILTER (WHERE NOT inserted))::int AS updated
  FROM upserted`;

interface MergedCounts extends Record<string, unknown> {
  imported: number;
  updated: number;
}

const DISCARD_STAGED = 'DELETE FROM import_staging WHERE organization_id = $1 AND import_id = $2';
const DISCARD_CUSTOMERS = 'DELETE FROM import_customers WHERE organization_id = $1 AND import_id = $2';

/**
 * Valid orders as COPY text, at most STAGING_BATCH of them, and the previous batch's COPY still
 * running: reading and validating the next batch overlaps with the database storing the last one.
 */
export class StagingBuffer {
  private text = '';
  private rows = 0;
  private inFlight: Promise<void> | undefined;
  private readonly rowPrefix: string;

  constructor(
    private readonly db: Database,
    organizationId: string,
    importId: string,
  ) {
    this.rowPrefix = `${copyField(organizationId)}\t${copyField(importId)}\t`;
  }

  get full(): boolean {
    return this.rows >= STAGING_BATCH;
  }

  add(line: number, order: OrderRecord): void {
    let row = `${this.rowPrefix}${line}`;
    for (const pick of STAGED_FIELDS) row += `\t${copyField(pick(order))}`;
    this.text += `${row}\n`;
    this.rows++;
  }

  /** Starts this batch's COPY once the previous one has ended (its failure is thrown here). */
  async flush(): Promise<void> {
    await this.inFlight;
    if (this.rows === 0) return;
    const copy = this.db.copyIn(COPY_STAGED, this.text);
    copy.catch(() => undefined); // awaited by the next flush or by finish()
    this.inFlight = copy;
    this.text = '';
    this.rows = 0;
  }

  /** Every batch stored. */
  async finish(): Promise<void> {
    await this.flush();
    await this.inFlight;
    this.inFlight = undefined;
  }

  /** Waits for the running COPY, if any, whatever its outcome (before its rows are discarded). */
  async settle(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
  }
}

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

/** I2, U2: one transaction moves the staged orders into orders and keeps first orders current. */
export async function mergeStaged(tx: Queryable, organizationId: string, importId: string) {
  // STATEMENT_TIMEOUT_MS cancels runaway reports; the upsert's length follows the file's size.
  await tx.query('SET LOCAL statement_timeout = 0');
  await tx.query(CONNECT_STORES, [organizationId, importId]);
  await tx.query(REMEMBER_REPLACED_CUSTOMERS, [organizationId, importId]);
  const [counts] = await tx.query<MergedCounts>(UPSERT_STAGED, [organizationId, importId]);
  if (counts === undefined) throw new Error('merge returned no row');
  await refreshFirstOrders(tx, organizationId, { customersOfImport: importId });
  await discardStaged(tx, organizationId, importId);
  return { imported: counts.imported, updated: counts.updated };
}

export async function discardStaged(db: Queryable, organizationId: string, importId: string): Promise<void> {
  await db.query(DISCARD_CUSTOMERS, [organizationId, importId]);
  await db.query(DISCARD_STAGED, [organizationId, importId]);
}

/** The longest run of import work between two turns of the event loop. */
const SLICE_MS = 8;

async function importEntries(
  db: Database,
  organizationId: string,
  batches: AsyncIterable<readonly ReadEntry[]>,
  options: ImportOptions,
): Promise<ImportResult> {
  // A killed import leaves its staged rows behind: its heartbeat has stopped (finding 7).
  await recoverInterruptedImports(db, { organizationId });
  const importId = options.jobId ?? crypto.randomUUID();
  if (options.jobId) await markRunning(db, organizationId, importId);
  else
    await createJob(db, {
      id: importId,
      organizationId,
      origin: options.origin ?? 'cli',
      state: 'running',
      ...(options.fileName ? { fileName: options.fileName } : {}),
    });
  const customerKey = customerKeyOf(db.secretKey); // U1: only the hash is staged, never the email
  const staging = new StagingBuffer(db, organizationId, importId);
  const progress = progressReporter(options.onProgress);
  const errors: LineError[] = [];
  let errorCount = 0;
  let rejected = 0;
  let lines = 0;
  let merged = false;
  let finished = false;
  const started = Date.now();
  let beaten = started;
  try {
    let slice = performance.now();
    for await (const entries of batches) {
      for (const entry of entries) {
        progress(++lines);
        // A batch is validated synchronously, which never lets the event loop serve a request: a
        // chunk of tiny lines (`{}`, six errors each) would hold it for the whole chunk. Give it a
        // turn every few milliseconds of work (/healthz stays fast during any import).
        if (lines % 128 === 0 && performance.now() - slice >= SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          slice = performance.now();
        }
        const validation =
          'error' in entry
            ? { ok: false as const, errors: [entry.error] }
            : validateOrder(entry.record, customerKey);
        if (!validation.ok) {
          rejected++;
          for (const error of validation.errors) {
            if (errorCount++ < MAX_REPORTED_ERRORS) errors.push({ line: entry.line, ...error });
          }
          continue;
        }
        staging.add(entry.line, validation.order);
        if (staging.full) await staging.flush();
      }
      if (Date.now() - beaten >= HEARTBEAT_MS) {
        beaten = Date.now();
        await beat(db, organizationId, importId, {
          lines,
          ordersPerSecond: Math.round((lines * 1000) / (beaten - started)),
        });
      }
    }
    await staging.finish();
    if (rejected > 0 && options.skipInvalid !== true) {
      const result = { imported: 0, updated: 0, rejected, errors, errorCount, refused: true };
      await finishJob(db, organizationId, importId, { state: 'refused', lines, ...result });
      finished = true;
      return result;
    }
    const counts = await db.transaction((tx) => mergeStaged(tx, organizationId, importId));
    merged = true;
    const result = { ...counts, rejected, errors, errorCount, refused: false };
    await finishJob(db, organizationId, importId, { state: 'succeeded', lines, ...result }).catch(
      () => undefined,
    );
    finished = true;
    return result;
  } finally {
    if (!finished) {
      await finishJob(db, organizationId, importId, { state: 'failed', message: FAILED }).catch(
        () => undefined,
      );
    }
    // I1: a refused or failed import leaves nothing behind (best effort: the database may be gone;
    // then the next import of the organization, or the next start, clears them: recoverInterruptedImports).
    if (!merged) {
      await staging.settle();
      await discardStaged(db, organizationId, importId).catch(() => undefined);
    }
    // PGlite runs no autovacuum: reclaim the staged rows' space for the next import.
    if (db.engine === 'embedded') await db.query('VACUUM import_staging').catch(() => undefined);
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
  if (file !== '-') {
    const handle = await fs.promises.open(file, 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') throw new AppError('NOT_FOUND', `Fichier introuvable : ${file}`);
      throw error;
    });
    stream = handle.createReadStream();
  }
  try {
    const named = file === '-' ? undefined : formatOfFileName(file);
    const { format, input } = named ? { format: named, input: stream } : await sniffFormat(stream);
    return await importOrderStream(db, organizationId, input, format, options);
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
