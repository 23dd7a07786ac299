// Order import (SPEC section 12, I1–I3). The input is streamed and each line validated; valid
// lines are written in batches to import_staging under a fresh import id, each batch one short
// statement, so a server sharing the embedded database keeps answering while a big file is read.
// Only the error list is kept in memory (I3). Then, all or nothing (I1): either the staged rows
// are discarded, or one transaction connects the new stores, upserts the orders (I2: the last
// line of a repeated order wins, a re-import replaces) and recomputes the touched first orders (U2).
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import type { Database, Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { refreshFirstOrders } from '../metrics/first-orders.js';
import {
  formatOfFileName,
  readOrders,
  sniffFormat,
  type OrderFormat,
  type ReadEntry,
} from './read-orders.js';
import { customerKeyOf } from './customer.js';
import {
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

const STAGING_BATCH = 5_000;
const MERGE_BATCH = 5_000;
const PROGRESS_INTERVAL_MS = 500;

// Staged columns after (organization_id, import_id, line), with their SQL type and value.
const STAGED: [string, string, (order: OrderRecord) => unknown][] = [
  ['store_address', 'text', (o) => o.storeAddress],
  ['external_id', 'text', (o) => o.externalId],
  ['created_at', 'timestamptz', (o) => o.createdAt],
  ['status', 'text', (o) => o.status],
  ['billing_country', 'text', (o) => o.billingCountry],
  ['customer', 'text', (o) => o.customer],
  ['items', 'int', (o) => o.items],
  ['total', 'numeric', (o) => o.total],
  ['tax_total', 'numeric', (o) => o.taxTotal],
  ['shipping_total', 'numeric', (o) => o.shippingTotal],
  ['fee_total', 'numeric', (o) => o.feeTotal],
  ['refund_total', 'numeric', (o) => o.refundTotal],
  ['refund_tax', 'numeric', (o) => o.refundTax],
  ['refund_shipping', 'numeric', (o) => o.refundShipping],
];
const STAGED_FIELDS = STAGED.map(([, , pick]) => pick);
const ORDER_COLUMNS = STAGED.slice(1).map(([column]) => column);

// One array parameter a column: a batch is one statement whatever its size, values always bound.
const STAGE_BATCH = `
  INSERT INTO import_staging (organization_id, import_id, line, ${STAGED.map(([column]) => column).join(', ')})
  SELECT $1::bigint, $2::uuid, * FROM unnest($3::int[], ${STAGED.map(([, type], i) => `$${i + 4}::${type}[]`).join(', ')})`;

const CONNECT_STORES = `
  INSERT INTO stores (organization_id, address)
  SELECT DISTINCT $1::bigint, store_address FROM import_staging WHERE organization_id = $1 AND import_id = $2
  ON CONFLICT (organization_id, address) DO NOTHING`;

// The next MERGE_BATCH orders after key ($3, $4), each from its last line (I2), with its store.
const CHUNK = `
  WITH batch AS MATERIALIZED (
    SELECT DISTINCT ON (store_address, external_id) * FROM import_staging
    WHERE organization_id = $1 AND import_id = $2 AND (store_address, external_id) > ($3::text, $4::text)
    ORDER BY store_address, external_id, line DESC
    LIMIT $5
  ), located AS MATERIALIZED (
    SELECT b.*, st.id AS store_id FROM batch b
    JOIN stores st ON st.organization_id = $1 AND st.address = b.store_address
  )`;

// U2: the chunk's customers and the customers its orders had before, whose first orders change.
// A statement of its own, run before the upsert: inside the upsert's statement the orders indexes
// grow while the plan, made when they were smaller, may walk them whole for every row.
const REMEMBER_CUSTOMERS = `${CHUNK}
  INSERT INTO import_customers (organization_id, import_id, customer)
  SELECT DISTINCT $1::bigint, $2::uuid, customer FROM (
    SELECT customer FROM located
    UNION ALL
    SELECT o.customer FROM located l
    JOIN orders o ON o.organization_id = $1 AND o.store_id = l.store_id AND o.external_id = l.external_id
  ) AS c WHERE customer IS NOT NULL
  ON CONFLICT DO NOTHING`;

// I2: insert or replace; xmax = 0 tells a new row from a replaced one.
const UPSERT_CHUNK = `${CHUNK}, upserted AS (
    INSERT INTO orders (organization_id, store_id, ${ORDER_COLUMNS.join(', ')})
    SELECT $1::bigint, store_id, ${ORDER_COLUMNS.join(', ')} FROM located
    ON CONFLICT (organization_id, store_id, external_id) DO UPDATE
    SET ${ORDER_COLUMNS.slice(1)
      .map((c) => `${c} = EXCLUDED.${c}`)
      .join(', ')}, updated_at = now()
    RETURNING (xmax = 0) AS inserted
  )
  SELECT (SELECT count(*) FROM batch)::int AS merged,
    (SELECT count(*) FROM upserted WHERE inserted)::int AS imported,
    (SELECT count(*) FROM upserted WHERE NOT inserted)::int AS updated,
    last.store_address AS last_store, last.external_id AS last_id
  FROM (SELECT 1) AS one LEFT JOIN LATERAL (
    SELECT store_address, external_id FROM batch ORDER BY store_address DESC, external_id DESC LIMIT 1
  ) AS last ON true`;

interface MergedChunk extends Record<string, unknown> {
  merged: number;
  imported: number;
  updated: number;
  last_store: string | null;
  last_id: string | null;
}

const DISCARD_STAGED = 'DELETE FROM import_staging WHERE organization_id = $1 AND import_id = $2';
const DISCARD_CUSTOMERS = 'DELETE FROM import_customers WHERE organization_id = $1 AND import_id = $2';

/** Valid orders waiting for their batch statement: at most STAGING_BATCH of them. */
class StagingBuffer {
  private lines: number[] = [];
  private orders: OrderRecord[] = [];

  constructor(
    private readonly db: Database,
    private readonly organizationId: string,
    private readonly importId: string,
  ) {}

  get full(): boolean {
    return this.orders.length >= STAGING_BATCH;
  }

  add(line: number, order: OrderRecord): void {
    this.lines.push(line);
    this.orders.push(order);
  }

  async flush(): Promise<void> {
    if (this.orders.length === 0) return;
    const columns = STAGED_FIELDS.map((pick) => this.orders.map(pick));
    await this.db.query(STAGE_BATCH, [this.organizationId, this.importId, this.lines, ...columns]);
    this.lines = [];
    this.orders = [];
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
async function mergeStaged(tx: Queryable, organizationId: string, importId: string) {
  await tx.query(CONNECT_STORES, [organizationId, importId]);
  let imported = 0;
  let updated = 0;
  // Keyset walk over (store, id): every statement stays short, whatever the file's size.
  // Stores and ids are never empty, so ('', '') comes before every key.
  let after: [string, string] = ['', ''];
  for (;;) {
    const params = [organizationId, importId, ...after, MERGE_BATCH];
    await tx.query(REMEMBER_CUSTOMERS, params);
    const [chunk] = await tx.query<MergedChunk>(UPSERT_CHUNK, params);
    if (chunk === undefined) throw new Error('merge returned no row');
    imported += chunk.imported;
    updated += chunk.updated;
    if (chunk.merged < MERGE_BATCH || chunk.last_store === null || chunk.last_id === null) break;
    after = [chunk.last_store, chunk.last_id];
  }
  await refreshFirstOrders(tx, organizationId, { customersOfImport: importId });
  await discardStaged(tx, organizationId, importId);
  return { imported, updated };
}

async function discardStaged(db: Queryable, organizationId: string, importId: string): Promise<void> {
  await db.query(DISCARD_CUSTOMERS, [organizationId, importId]);
  await db.query(DISCARD_STAGED, [organizationId, importId]);
}

/** The longest run of import work between two turns of the event loop. */
const SLICE_MS = 8;

async function importEntries(
  db: Database,
  organizationId: string,
  entries: AsyncIterable<ReadEntry>,
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
    for await (const entry of entries) {
      progress(++lines);
      // Lines already read are validated in microtasks, which never let the event loop serve a
      // request: a file of tiny lines (`{}`, six errors each) would hold it for a whole chunk.
      // Give it a turn every few milliseconds of work (/healthz stays fast during any import).
      if (lines % 128 === 0 && performance.now() - slice >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
      }
      if (lines % 1024 === 0 && Date.now() - beaten >= HEARTBEAT_MS) {
        beaten = Date.now();
        await beat(db, organizationId, importId, {
          lines,
          ordersPerSecond: Math.round((lines * 1000) / (beaten - started)),
        });
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
    await staging.flush();
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
      const message = 'Import échoué : une erreur interne l’a arrêté, aucune commande n’a été importée.';
      await finishJob(db, organizationId, importId, { state: 'failed', message }).catch(() => undefined);
    }
    // I1: a refused or failed import leaves nothing behind (best effort: the database may be gone;
    // DISCARD_ABANDONED then clears the rows a day later).
    if (!merged) await discardStaged(db, organizationId, importId).catch(() => undefined);
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
  return importEntries(db, organizationId, numbered(), options);
}
