// store_connections rows (migration 008): reading them, and the lease that makes a row a job. A
// worker claims a due connection with FOR UPDATE SKIP LOCKED, renews its lease while it works and
// gives it back with the time of the next sync; a lease left by a killed process runs out.
import type { Database, Queryable } from '../../db/database.js';
import { PLATFORMS, type Platform } from './connector.js';

export interface StoreConnection {
  readonly id: string;
  readonly organizationId: string;
  readonly storeId: string;
  readonly address: string;
  readonly currency: string;
  readonly platform: Platform;
  readonly apiBase: string;
  readonly credentials: Buffer;
  readonly webhookSecret: Buffer;
  readonly secretHint: string;
  readonly phase: 'backfill' | 'incremental';
  readonly backfillCursor: string | null;
  readonly backfillTotal: number | null;
  readonly changesSince: Date | null;
  readonly sweptAt: Date | null;
  readonly runStartedAt: Date | null;
  readonly runOrders: number;
  /** Objects the store's export gathered so far (a Shopify bulk operation), null without one. */
  readonly exportObjects: number | null;
  readonly skippedOrders: number;
  readonly lastSkipped: string | null;
  readonly nextSyncAt: Date;
  readonly lastSuccessAt: Date | null;
  readonly failures: number;
  readonly lastError: string | null;
  /** Someone holds the lease now: a sync is running. */
  readonly running: boolean;
  /** Orders of this store in the database. */
  readonly orders: number;
}

/** Failures in a row after which the store shows as in error. */
export const FAILURES_FOR_ERROR = 3;
/** How long a lease lasts without renewal. */
export const LEASE_S = 60;

export const CONNECTION_COLUMNS = `c.id, c.organization_id, c.store_id, s.address, g.currency, c.platform,
  c.api_base, c.credentials, c.webhook_secret, c.secret_hint, c.phase, c.backfill_cursor, c.backfill_total,
  c.changes_since, c.swept_at, c.run_started_at, c.run_orders, c.export_objects, c.skipped_orders, c.last_skipped,
  c.next_sync_at, c.last_success_at, c.failures, c.last_error,
  (c.lease_until IS NOT NULL AND c.lease_until > now()) AS running,
  (SELECT count(*) FROM orders o WHERE o.organization_id = c.organization_id AND o.store_id = c.store_id) AS orders`;
export const CONNECTION_FROM = `store_connections c
  JOIN stores s ON s.organization_id = c.organization_id AND s.id = c.store_id
  JOIN organizations g ON g.id = c.organization_id`;

// pg gives timestamptz as Date: kept as it is (String() of a Date drops its milliseconds).
const date = (value: unknown): Date | null =>
  value === null || value === undefined ? null : value instanceof Date ? value : new Date(String(value));
/** A stored value checked, not cast: a hand-edited or corrupt row is an internal error. */
function platformOf(value: unknown): Platform {
  const platform = PLATFORMS.find((p) => p === value);
  if (!platform) throw new Error(`store_connections.platform inattendu : ${String(value).slice(0, 40)}`);
  return platform;
}

function sealedOf(value: unknown): Buffer {
  if (!Buffer.isBuffer(value)) throw new Error('store_connections : secret scellé illisible');
  return value;
}

/** Orders a second over the current run, 0 before it has lasted a second. */
export function runRate(
  connection: Pick<StoreConnection, 'runOrders' | 'runStartedAt'>,
  now = Date.now(),
): number {
  if (!connection.runStartedAt) return 0;
  const seconds = (now - connection.runStartedAt.getTime()) / 1000;
  return seconds >= 1 ? Math.round(connection.runOrders / seconds) : 0;
}

/** The export's objects a second over the current run (a bulk operation gathering them). */
export function exportRate(
  connection: Pick<StoreConnection, 'exportObjects' | 'runStartedAt'>,
  now = Date.now(),
): number {
  if (!connection.runStartedAt || connection.exportObjects === null) return 0;
  const seconds = (now - connection.runStartedAt.getTime()) / 1000;
  return seconds >= 1 ? Math.round(connection.exportObjects / seconds) : 0;
}

export function toConnection(row: Record<string, unknown>): StoreConnection {
  const { phase } = row;
  if (phase !== 'backfill' && phase !== 'incremental') throw new Error('store_connections.phase inattendue');
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    storeId: String(row.store_id),
    address: String(row.address),
    currency: String(row.currency),
    platform: platformOf(row.platform),
    apiBase: String(row.api_base),
    credentials: sealedOf(row.credentials),
    webhookSecret: sealedOf(row.webhook_secret),
    secretHint: String(row.secret_hint),
    phase,
    backfillCursor: row.backfill_cursor === null ? null : String(row.backfill_cursor),
    backfillTotal: row.backfill_total === null ? null : Number(row.backfill_total),
    changesSince: date(row.changes_since),
    sweptAt: date(row.swept_at),
    runStartedAt: date(row.run_started_at),
    runOrders: Number(row.run_orders),
    exportObjects:
      row.export_objects === null || row.export_objects === undefined ? null : Number(row.export_objects),
    skippedOrders: Number(row.skipped_orders),
    lastSkipped: row.last_skipped === null ? null : String(row.last_skipped),
    nextSyncAt: date(row.next_sync_at) ?? new Date(),
    lastSuccessAt: date(row.last_success_at),
    failures: Number(row.failures),
    lastError: row.last_error === null ? null : String(row.last_error),
    running: row.running === true,
    orders: Number(row.orders),
  };
}

/** The connections of an organization, by store address. */
export async function connectionsOf(db: Queryable, organizationId: string): Promise<StoreConnection[]> {
  const rows = await db.query(
    `SELECT ${CONNECTION_COLUMNS} FROM ${CONNECTION_FROM} WHERE c.organization_id = $1 ORDER BY s.address`,
    [organizationId],
  );
  return rows.map(toConnection);
}

const isUuid = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

/** A connection by its public id, any organization. */
export async function connectionById(db: Queryable, id: string): Promise<StoreConnection | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db.query(`SELECT ${CONNECTION_COLUMNS} FROM ${CONNECTION_FROM} WHERE c.id = $1`, [id]);
  return row ? toConnection(row) : undefined;
}

/**
 * What a webhook delivery needs of its connection: its platform and sealed secret, read by the
 * primary key alone (not the status columns, whose order count scans the store's orders).
 */
export async function webhookTarget(
  db: Queryable,
  id: string,
): Promise<Pick<StoreConnection, 'id' | 'platform' | 'webhookSecret'> | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db.query('SELECT id, platform, webhook_secret FROM store_connections WHERE id = $1', [
    id,
  ]);
  if (!row) return undefined;
  return {
    id: String(row.id),
    platform: platformOf(row.platform),
    webhookSecret: sealedOf(row.webhook_secret),
  };
}

/** Claims the connection most overdue whose lease is free; undefined when none is due. */
export async function claimDue(db: Queryable, owner: string): Promise<StoreConnection | undefined> {
  const [claimed] = await db.query<{ id: string }>(
    `UPDATE store_connections c SET lease_owner = $1, lease_until = now() + make_interval(secs => $2)
     WHERE c.id = (
       SELECT id FROM store_connections
       WHERE next_sync_at <= now() AND (lease_until IS NULL OR lease_until < now())
       ORDER BY next_sync_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       AND (c.lease_until IS NULL OR c.lease_until < now())
     RETURNING c.id`,
    [owner, LEASE_S],
  );
  return claimed ? connectionById(db, claimed.id) : undefined;
}

/** Claims one connection now, whatever its schedule (`store sync`); undefined when it is leased. */
export async function claimNow(
  db: Queryable,
  id: string,
  owner: string,
): Promise<StoreConnection | undefined> {
  const rows = await db.query(
    `UPDATE store_connections SET lease_owner = $2, lease_until = now() + make_interval(secs => $3)
     WHERE id = $1 AND (lease_until IS NULL OR lease_until < now()) RETURNING id`,
    [id, owner, LEASE_S],
  );
  return rows.length > 0 ? connectionById(db, id) : undefined;
}

/** Extends the lease; false when it was lost (expired and taken, or the store disconnected). */
export async function renewLease(db: Queryable, id: string, owner: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE store_connections SET lease_until = now() + make_interval(secs => $3)
     WHERE id = $1 AND lease_owner = $2 RETURNING 1`,
    [id, owner, LEASE_S],
  );
  return rows.length > 0;
}

export type PassOutcome =
  | { readonly ok: true; readonly nextInS: number; readonly finished: boolean }
  | { readonly ok: false; readonly error: string; readonly nextInS: number };

/**
 * Gives the lease back with the pass's outcome and the time of the next sync. The connection's row
 * is locked first, as a webhook's `queueRefetch` does before it queues an order: the UPDATE that
 * follows takes its snapshot after any webhook holding the row has committed, so its EXISTS sees
 * that webhook's delivery. (As one statement, an UPDATE that waited for the webhook's lock kept the
 * snapshot taken before the wait: the store was put an interval away with a delivery queued, and a
 * deleted order still counted an hour later.) A delivery committed after it makes the store due itself.
 */
export async function release(db: Database, id: string, owner: string, outcome: PassOutcome): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM store_connections WHERE id = $1 FOR NO KEY UPDATE', [id]);
    await tx.query(
      outcome.ok
        ? `UPDATE store_connections SET lease_owner = NULL, lease_until = NULL,
             -- An order a webhook queued during the pass is fetched at once, not after the interval.
             next_sync_at = CASE WHEN EXISTS (SELECT 1 FROM store_order_refetches r WHERE r.connection_id = $1)
               THEN now() ELSE now() + make_interval(secs => $3) END,
             last_success_at = CASE WHEN $4 THEN now() ELSE last_success_at END,
             failures = 0, last_error = NULL
           WHERE id = $1 AND lease_owner = $2`
        : `UPDATE store_connections SET lease_owner = NULL, lease_until = NULL,
             next_sync_at = now() + make_interval(secs => $3), failures = failures + 1, last_error = $4
           WHERE id = $1 AND lease_owner = $2`,
      [id, owner, outcome.nextInS, outcome.ok ? outcome.finished : outcome.error.slice(0, 1000)],
    );
  });
}

/** Most orders a connection's webhook queue holds; past it a full incremental sync is asked for. */
export const MAX_REFETCHES = 10_000;

/**
 * Queues an order a webhook named and makes the store due; false when the queue was full (or the
 * connection is gone). The connection's row is locked first, as a sync pass does (order-writes.ts,
 * `fence`) before it deletes the deliveries it read: a repeated delivery used to lock its queued
 * row, then wait for the connection's, while the pass held that one and waited for the queued
 * row: a deadlock, the delivery answered 500.
 */
export async function queueRefetch(db: Database, connectionId: string, externalId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const found = await tx.query('SELECT 1 FROM store_connections WHERE id = $1 FOR NO KEY UPDATE', [
      connectionId,
    ]);
    if (found.length === 0) return false;
    return queueIn(tx, connectionId, externalId);
  });
}

async function queueIn(tx: Queryable, connectionId: string, externalId: string): Promise<boolean> {
  const [row] = await tx.query<{ queued: boolean }>(
    `WITH room AS (
       SELECT count(*) < $3 AS ok FROM store_order_refetches WHERE connection_id = $1
     ), queued AS (
       INSERT INTO store_order_refetches (connection_id, external_id)
       SELECT $1, $2 WHERE (SELECT ok FROM room)
       ON CONFLICT (connection_id, external_id) DO UPDATE SET queued_at = now()
       RETURNING 1
     ), due AS (
       UPDATE store_connections SET next_sync_at = LEAST(next_sync_at, now())
       WHERE id = $1 AND failures = 0
     )
     SELECT EXISTS (SELECT 1 FROM queued) AS queued`,
    [connectionId, externalId, MAX_REFETCHES],
  );
  return row?.queued === true;
}

/**
 * At the start of the embedded database's server, no other process can hold a lease: those of a
 * killed server are given back at once, so its stores resume now rather than when they run out.
 */
export async function releaseAllLeases(db: Queryable): Promise<number> {
  const rows = await db.query(
    'UPDATE store_connections SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL RETURNING id',
  );
  return rows.length;
}
