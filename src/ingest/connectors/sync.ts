// One sync pass of a leased connection (issue 11): the orders webhooks named, then the backfill
// (a bounded number of pages a pass, its cursor saved in the transaction of each page: a restart
// resumes where it stopped, and no page is written twice) or the changes since the last pass, then
// now and then a deletion sweep. Any platform: the connector reads, order-writes.ts writes.
import crypto from 'node:crypto';
import type { Database, Queryable } from '../../db/database.js';
import { createJob, finishJob, type LineError } from '../jobs.js';
import { SMALL_MERGE, analyzeIfStale } from '../statistics.js';
import {
  ConnectorError,
  type OrderLine,
  type StoreApi,
  type StoreConnector,
  type UnmappedOrder,
} from './connector.js';
import { renewLease, type PassOutcome, type StoreConnection } from './connections.js';
import { LeaseLost, writeChanges, type Changes } from './order-writes.js';
import { openCredentials } from './credentials.js';
import { UnsealError } from './sealed.js';
import { KeptConnections, type StoreHttpOptions } from './store-http.js';
import { databaseMomentarilyOut } from '../../errors.js';

export interface SyncSettings {
  /** Seconds between two incremental syncs of a store (STORE_SYNC_INTERVAL_S). */
  readonly intervalS: number;
  /** Backfill pages a pass reads before giving the store back (other stores get their turn). */
  readonly pagesPerPass: number;
  /** Changes are asked from this long before the last pass began (clock skew, slow writes). */
  readonly overlapS: number;
  /** The first wait after a failed pass, doubling with each failure in a row up to an hour. */
  readonly failureBaseS: number;
  readonly http: StoreHttpOptions;
}

/** The lease is renewed at least this often while a pass works (it lasts LEASE_S). */
const RENEW_MS = 15_000;
const REFETCHES_PER_PASS = 200;
/** Orders a sweep checks one by one before deleting them (the rest waits for the next sweep). */
const SWEEP_CANDIDATES = 1_000;
const KEPT_ERRORS = 200;
/** A failed pass keeps the pages it wrote (each its own transaction); the next one goes on. */
const INTERRUPTED_PASS =
  'Synchronisation interrompue : les pages déjà écrites sont gardées, la suite reprend à la page suivante.';

/** A passing failure's first wait: failureBaseS / 12 (5 s by default), then doubling. */
const TRANSIENT_BASE_DIVISOR = 12;

/** Delay before the next try after `failures` failures in a row: `baseS` doubling to 1 h, jittered. */
export function retryDelayS(failures: number, retryAfterS: number | undefined, baseS = 60): number {
  const exponential = Math.min(3600, baseS * 2 ** Math.max(0, failures - 1));
  return Math.max(retryAfterS ?? 0, Math.round(exponential * (0.75 + Math.random() * 0.5)));
}

/**
 * A sweep is due hourly for a small store, less often as it grows (a request per 100 orders), and
 * at least daily (issue 21: Shopify lists no deleted order, and a webhook can be missed).
 */
export function sweepDue(connection: Pick<StoreConnection, 'sweptAt' | 'orders'>, now = Date.now()): boolean {
  if (connection.sweptAt === null) return true;
  const everyS = Math.min(86_400, 3600 * Math.max(1, Math.ceil(connection.orders / 10_000)));
  return now - connection.sweptAt.getTime() >= everyS * 1000;
}

export interface PassOptions {
  /** Stop at the next page boundary (the server is closing). */
  readonly stopping?: () => boolean;
  /** After each page: orders written so far in this pass. */
  readonly onProgress?: (written: number) => void;
}

class Pass {
  private jobId: string | undefined;
  private renewedAt = Date.now();
  written = 0;
  /** Orders the pass wrote, replaced or removed (refreshStatistics). */
  private changed = 0;
  readonly counts = { lines: 0, imported: 0, updated: 0, rejected: 0 };
  readonly errors: LineError[] = [];

  constructor(
    readonly db: Database,
    readonly connection: StoreConnection,
    readonly owner: string,
    readonly api: StoreApi,
    readonly settings: SyncSettings,
    readonly options: PassOptions,
  ) {}

  async keepLease(): Promise<void> {
    if (Date.now() - this.renewedAt < RENEW_MS) return;
    if (!(await renewLease(this.db, this.connection.id, this.owner))) throw new LeaseLost();
    // The pass's import job beats too: no recovery takes it for a killed one (jobs.ts).
    if (this.jobId) {
      await this.db.query('UPDATE import_jobs SET heartbeat_at = now() WHERE id = $1', [this.jobId]);
    }
    this.renewedAt = Date.now();
  }

  /** The pass's import job, created at its first write: its id is the staging id (jobs.ts). */
  private async job(): Promise<string> {
    this.jobId ??= await (async () => {
      const id = crypto.randomUUID();
      await createJob(this.db, {
        id,
        organizationId: this.connection.organizationId,
        origin: 'connector',
        fileName: this.connection.address,
        state: 'running',
      });
      return id;
    })();
    return this.jobId;
  }

  /** Writes a page; `andThen` runs in its transaction, after the orders (cursor, progress). */
  async write(
    changes: Changes,
    unmapped: readonly UnmappedOrder[],
    andThen: (tx: Queryable) => Promise<void> = async () => undefined,
  ): Promise<void> {
    await this.keepLease();
    const jobId = await this.job();
    const result = await writeChanges(
      this.db,
      this.connection,
      this.owner,
      jobId,
      changes,
      async (tx, invalid) => {
        const rejected = [...unmapped, ...invalid];
        await tx.query(
          // run_orders counts the backfill's progress (the page shows it against backfill_total).
          `UPDATE store_connections
           SET run_orders = run_orders + CASE WHEN phase = 'backfill' THEN $2 ELSE 0 END,
             skipped_orders = skipped_orders + CASE WHEN phase = 'backfill' THEN $3 ELSE 0 END,
           last_skipped = COALESCE($4, last_skipped) WHERE id = $1`,
          [
            this.connection.id,
            changes.lines.length + changes.gone.length + unmapped.length,
            rejected.length,
            skippedText(rejected),
          ],
        );
        await andThen(tx);
        for (const r of rejected) {
          if (this.errors.length < KEPT_ERRORS)
            this.errors.push({ line: Number(r.id) || 0, field: 'commande', message: r.message });
        }
      },
    );
    this.counts.lines += changes.lines.length + unmapped.length;
    this.counts.imported += result.imported;
    this.counts.updated += result.updated + result.removed;
    this.counts.rejected += result.rejected.length + unmapped.length;
    this.written += changes.lines.length + changes.gone.length;
    this.changed += result.imported + result.updated + result.removed;
    this.options.onProgress?.(this.written);
  }

  /**
   * A store's backfill writes its orders page by page, like an import of many small files: at the
   * end of a pass that wrote a thousand orders or more, the statistics are refreshed as an import's
   * are (statistics.ts), when much of the table changed or the planner misses the organization.
   * PGlite runs no autovacuum, and the pages leave no dead orders for vacuumIfBloated to see: after
   * a first backfill the planner never learnt of the organization's orders; a server's autovacuum
   * comes up to a minute later. Once a pass, not every thousand orders: refreshed along the way
   * (each thousand, or each time the pass had doubled), a backfill of 20,000 orders took 10–35%
   * longer (npm run bench:sync).
   */
  private async refreshStatistics(): Promise<void> {
    await analyzeIfStale(this.db, {
      written: this.changed,
      organizationId: this.connection.organizationId,
    }).catch(() => undefined);
  }

  async finish(ok: boolean): Promise<void> {
    if (!this.jobId) return;
    if (this.changed >= SMALL_MERGE) await this.refreshStatistics();
    const { lines, imported, updated, rejected } = this.counts;
    await finishJob(
      this.db,
      this.connection.organizationId,
      this.jobId,
      ok
        ? {
            state: 'succeeded',
            lines,
            imported,
            updated,
            rejected,
            errorCount: rejected,
            errors: this.errors,
          }
        : { state: 'failed', message: INTERRUPTED_PASS, written: { lines, imported, updated } },
    ).catch(() => undefined);
  }
}

function skippedText(rejected: readonly UnmappedOrder[]): string | null {
  const first = rejected[0];
  return first ? `commande ${first.id.slice(0, 20)} : ${first.message}`.slice(0, 1000) : null;
}

/** Orders read one by one as the store has them now: what they are, gone, or not mappable. */
async function statesOf(pass: Pass, ids: readonly string[]) {
  const lines: OrderLine[] = [];
  const gone: string[] = [];
  const unmapped: UnmappedOrder[] = [];
  for (const id of ids) {
    await pass.keepLease();
    const state = await pass.api.order(id);
    if ('line' in state) lines.push(state.line);
    else if ('gone' in state) gone.push(id);
    else unmapped.push({ id, message: state.message });
  }
  return { lines, gone, unmapped };
}

/** Orders a webhook named, fetched as they are now: a late or repeated delivery changes nothing. */
async function refetchNamed(pass: Pass): Promise<void> {
  const named = await pass.db.query<{ external_id: string; queued_at: string }>(
    `SELECT external_id, queued_at::text FROM store_order_refetches WHERE connection_id = $1
     ORDER BY queued_at LIMIT $2`,
    [pass.connection.id, REFETCHES_PER_PASS],
  );
  if (named.length === 0) return;
  const { lines, gone, unmapped } = await statesOf(
    pass,
    named.map((n) => n.external_id),
  );
  await pass.write({ lines, gone }, unmapped, async (tx) => {
    // Only the deliveries read above: one that arrived meanwhile stays queued for the next pass.
    await tx.query(
      `DELETE FROM store_order_refetches r USING unnest($2::text[], $3::timestamptz[]) AS d (id, at)
       WHERE r.connection_id = $1 AND r.external_id = d.id AND r.queued_at <= d.at`,
      [pass.connection.id, named.map((n) => n.external_id), named.map((n) => n.queued_at)],
    );
  });
}

/** Up to pagesPerPass pages of the history; true when the last page was written. */
async function backfill(pass: Pass): Promise<boolean> {
  let cursor = pass.connection.backfillCursor ?? undefined;
  for (let pages = 0; pages < pass.settings.pagesPerPass && !pass.options.stopping?.(); pages++) {
    const starting = cursor === undefined;
    if (starting) {
      // A new backfill counts its skipped orders afresh (later passes re-read changed orders).
      await pass.db.query(
        'UPDATE store_connections SET skipped_orders = 0, last_skipped = NULL WHERE id = $1 AND lease_owner = $2',
        [pass.connection.id, pass.owner],
      );
    }
    const page = await pass.api.history(cursor);
    const next = page.next ?? null;
    await pass.write({ lines: page.orders, gone: page.removed }, page.unmapped, async (tx) => {
      await tx.query(
        `UPDATE store_connections SET backfill_cursor = $2, backfill_total = COALESCE($3, backfill_total),
           changes_since = CASE WHEN $4 THEN $5::timestamptz ELSE changes_since END,
           run_started_at = CASE WHEN $4 THEN now() ELSE run_started_at END,
           run_orders = CASE WHEN $4 THEN $6 ELSE run_orders END,
           export_objects = CASE WHEN $4 THEN $7 ELSE COALESCE($7, export_objects) END,
           phase = CASE WHEN $2::text IS NULL THEN 'incremental' ELSE phase END,
           swept_at = CASE WHEN $2::text IS NULL THEN NULL ELSE swept_at END
         WHERE id = $1`,
        [
          pass.connection.id,
          next,
          page.total ?? null,
          starting,
          (page.storeDate ?? new Date()).toISOString(),
          page.orders.length + page.removed.length + page.unmapped.length,
          page.exportObjects ?? null,
        ],
      );
    });
    if (next === null) return true;
    cursor = next;
  }
  return false;
}

/** Every page of the changes since the last pass (less the overlap), trashed orders included. */
async function changes(pass: Pass): Promise<void> {
  const last = pass.connection.changesSince ?? new Date(Date.now() - 86_400_000);
  const since = new Date(last.getTime() - pass.settings.overlapS * 1000);
  let cursor: string | undefined;
  let storeDate: Date | undefined;
  do {
    const page = await pass.api.changes(since, cursor);
    storeDate ??= page.storeDate ?? new Date();
    if (page.orders.length + page.removed.length + page.unmapped.length > 0) {
      await pass.write({ lines: page.orders, gone: page.removed }, page.unmapped);
    } else await pass.keepLease();
    cursor = page.next;
  } while (cursor !== undefined && !pass.options.stopping?.());
  if (cursor !== undefined) return; // stopped: the same changes are asked again next time
  await pass.db.query('UPDATE store_connections SET changes_since = $3 WHERE id = $1 AND lease_owner = $2', [
    pass.connection.id,
    pass.owner,
    (storeDate ?? new Date()).toISOString(),
  ]);
}

/**
 * Orders deleted for good in the store (no webhook told us): every id the store has is listed,
 * and each order we have that was not listed (and did not change during the sweep) is asked for
 * by id before it is removed, so that a page shifted by a deletion mid-sweep removes nothing.
 */
async function sweep(pass: Pass): Promise<void> {
  const { db, connection } = pass;
  const [{ started } = { started: new Date().toISOString() }] = await db.query<{ started: string }>(
    'SELECT now()::text AS started',
  );
  await db.query('DELETE FROM store_sweep_ids WHERE connection_id = $1', [connection.id]);
  let cursor: string | undefined;
  do {
    await pass.keepLease();
    const page = await pass.api.ids(cursor);
    await db.query(
      `INSERT INTO store_sweep_ids (connection_id, external_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
      [connection.id, [...page.ids]],
    );
    cursor = page.next;
    if (pass.options.stopping?.()) return;
  } while (cursor !== undefined);
  const candidates = await db.query<{ external_id: string }>(
    `SELECT o.external_id FROM orders o WHERE o.organization_id = $1 AND o.store_id = $2
       AND o.updated_at < $4::timestamptz
       AND NOT EXISTS (SELECT 1 FROM store_sweep_ids w WHERE w.connection_id = $3 AND w.external_id = o.external_id)
     LIMIT $5`,
    [connection.organizationId, connection.storeId, connection.id, started, SWEEP_CANDIDATES],
  );
  // An order now unmapped (say, its currency changed) stays as it is until it is read again.
  const { lines, gone } = await statesOf(
    pass,
    candidates.map((c) => c.external_id),
  );
  const mark = async (tx: Queryable) => {
    await tx.query('UPDATE store_connections SET swept_at = now() WHERE id = $1', [connection.id]);
    await tx.query('DELETE FROM store_sweep_ids WHERE connection_id = $1', [connection.id]);
  };
  if (lines.length + gone.length > 0) await pass.write({ lines, gone }, [], mark);
  else await db.transaction(mark);
}

/** The plain-French outcome of a failed pass, and when to try again. */
export function failed(
  connection: Pick<StoreConnection, 'failures'>,
  error: unknown,
  baseS: number,
): PassOutcome {
  const failures = connection.failures + 1;
  if (error instanceof ConnectorError) {
    // Refused keys or a wrong address do not mend by themselves: tried again less often. A
    // passing failure (429, 5xx, a timeout, a request's retries used up) is tried again in
    // seconds, doubling while it lasts: a minute's wait after one blip made a backfill lose far
    // more time than its faults did (issue 26 item 3). The store's Retry-After still holds.
    const floor = error.transient ? 0 : 15 * baseS;
    const base = error.transient ? Math.max(1, Math.round(baseS / TRANSIENT_BASE_DIVISOR)) : baseS;
    return {
      ok: false,
      error: error.message,
      nextInS: Math.max(floor, retryDelayS(failures, error.retryAfterS, base)),
    };
  }
  if (error instanceof UnsealError) {
    return {
      ok: false,
      error:
        'Les clés de cette boutique ne peuvent plus être lues (SECRET_KEY a changé) : reconnectez la boutique',
      nextInS: 60 * baseS,
    };
  }
  if (databaseMomentarilyOut(error)) {
    // Our own database busy (every pool connection taken) or unreachable for a moment: nothing is
    // wrong with the store nor with the service's code. Tried again in seconds, as a passing
    // failure of the store is, and said so in the shop owner's words, not as an internal error.
    return {
      ok: false,
      error:
        'Base de données occupée ou injoignable pendant la synchronisation : nouvel essai dans quelques secondes',
      nextInS: retryDelayS(
        failures,
        error.retryAfterS,
        Math.max(1, Math.round(baseS / TRANSIENT_BASE_DIVISOR)),
      ),
    };
  }
  return {
    ok: false,
    error: 'Erreur interne pendant la synchronisation (voir le journal du serveur)',
    nextInS: retryDelayS(failures, undefined, baseS),
  };
}

/**
 * One pass over a connection whose lease `owner` holds. Throws LeaseLost when the lease was lost
 * (the caller gives nothing back); any other failure becomes the outcome. `error` is set for the
 * log when the failure was not the store's.
 */
export async function runPass(
  db: Database,
  connector: StoreConnector,
  connection: StoreConnection,
  owner: string,
  settings: SyncSettings,
  options: PassOptions = {},
): Promise<{ outcome: PassOutcome; written: number; internalError?: unknown }> {
  let pass: Pass | undefined;
  const keptConnections = new KeptConnections();
  try {
    const credentials = openCredentials(db.secretKey, connection);
    const http = { ...settings.http, keptConnections };
    const api = connector.open(new URL(connection.apiBase), credentials, http, connection.currency);
    pass = new Pass(db, connection, owner, api, settings, options);
    await refetchNamed(pass);
    const finished = connection.phase === 'backfill' ? await backfill(pass) : (await changes(pass), true);
    if (finished && !options.stopping?.() && sweepDue(connection)) await sweep(pass);
    await pass.finish(true);
    const stopped = options.stopping?.() ?? false;
    return {
      outcome: {
        ok: true,
        finished: finished && !stopped,
        nextInS: finished && !stopped ? settings.intervalS : 0,
      },
      written: pass.written,
    };
  } catch (error) {
    await pass?.finish(false);
    if (error instanceof LeaseLost) throw error;
    const outcome = failed(connection, error, settings.failureBaseS);
    const known =
      error instanceof ConnectorError || error instanceof UnsealError || databaseMomentarilyOut(error);
    return { outcome, written: pass?.written ?? 0, ...(known ? {} : { internalError: error }) };
  } finally {
    keptConnections.close();
  }
}
