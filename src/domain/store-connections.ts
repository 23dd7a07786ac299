// Connecting a store through its platform's API (issue 11), for the web page and the CLI alike:
// check the address and keys against the store, seal the secrets, register the connection (the
// sync worker then backfills it); disconnect, optionally with the store's orders; ask for a sync.
import crypto from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { refreshFirstOrders } from '../metrics/first-orders.js';
import { ConnectorError, PLATFORMS, type Platform } from '../ingest/connectors/connector.js';
import {
  claimNow,
  connectionById,
  connectionsOf,
  queueRefetch,
  webhookTarget,
  release,
  type StoreConnection,
} from '../ingest/connectors/connections.js';
import { openWebhookSecret, sealSecrets } from '../ingest/connectors/credentials.js';
import type { StoreSyncSetup } from '../ingest/connectors/registry.js';
import { removeStoreOrders } from '../ingest/connectors/order-writes.js';
import { discardStaged, lockOrganization } from '../ingest/merge.js';
import { runPass } from '../ingest/connectors/sync.js';
import { checkStoreAddress, NOT_A_URL, normalizeStoreAddress } from '../ingest/store-address.js';
import { FIELD_BOUNDS } from '../ingest/validate-order.js';

export type { StoreConnection } from '../ingest/connectors/connections.js';

export interface ConnectRequest {
  readonly organizationId: string;
  readonly platform: string;
  readonly address: string;
  /** WooCommerce's consumer key; Shopify's client id, or '' with an access token. */
  readonly consumerKey: string;
  /** WooCommerce's consumer secret; Shopify's access token or client secret. */
  readonly consumerSecret: string;
  /** Shopify: the app's API secret key, which signs its webhooks (optional). */
  readonly webhookSecret?: string;
}

export interface Connected {
  readonly connectionId: string;
  readonly address: string;
  readonly platform: Platform;
  /** Shown once, for the owner to paste into WooCommerce's webhook settings (Shopify: undefined). */
  readonly webhookSecret: string | undefined;
  readonly webhookPath: string;
}

/** The form field an error is about: the page shows it next to that field. */
export type ConnectField = 'address' | 'credentials' | 'platform';
const fieldError = (field: ConnectField, message: string) =>
  new AppError('INVALID_PARAMETER', message, { field });

export const webhookPathOf = (platform: Platform, connectionId: string) =>
  `/webhooks/${platform}/${connectionId}`;

function checkedRequest(
  setup: StoreSyncSetup,
  request: ConnectRequest,
): {
  platform: Platform;
  address: string;
  key: string;
  secret: string;
} {
  const platform = PLATFORMS.find((p) => p === request.platform);
  if (!platform)
    throw fieldError(
      'platform',
      `Plateforme inconnue : « ${request.platform.slice(0, 40)} » (${PLATFORMS.join(' ou ')} attendu)`,
    );
  const checked =
    request.address.length > FIELD_BOUNDS.store
      ? { problem: NOT_A_URL, shown: request.address }
      : checkStoreAddress(request.address);
  if (checked.problem !== undefined) {
    const problem = checked.problem === NOT_A_URL ? 'URL https:// attendue' : checked.problem;
    throw fieldError(
      'address',
      `Adresse de boutique invalide : « ${checked.shown.slice(0, 200)} » (${problem})`,
    );
  }
  const key = request.consumerKey.trim();
  const secret = request.consumerSecret.trim();
  const invalid = setup.connectors[platform].credentialsError({ key, secret });
  if (invalid !== undefined) throw fieldError('credentials', invalid);
  return { platform, address: checked.address, key, secret };
}

/** Checks the keys against the store (reads only), then records the connection. */
export async function connectStore(
  db: Database,
  setup: StoreSyncSetup,
  request: ConnectRequest,
): Promise<Connected> {
  const { platform, address, key, secret } = checkedRequest(setup, request);
  const connector = setup.connectors[platform];
  const existing = await db.query(
    `SELECT 1 FROM store_connections c JOIN stores s ON s.organization_id = c.organization_id AND s.id = c.store_id
     WHERE c.organization_id = $1 AND s.address = $2`,
    [request.organizationId, address],
  );
  if (existing.length > 0)
    throw new AppError('CONFLICT', `Boutique déjà connectée : ${address}`, { field: 'address' });
  let apiBase: URL;
  try {
    const [organization] = await db.query<{ currency: string }>(
      'SELECT currency FROM organizations WHERE id = $1',
      [request.organizationId],
    );
    ({ apiBase } = await connector.verify(
      new URL(address),
      { key, secret },
      setup.settings.http,
      organization?.currency ?? '',
    ));
  } catch (error) {
    if (!(error instanceof ConnectorError)) throw error;
    const field = error.kind === 'credentials' || error.kind === 'permissions' ? 'credentials' : 'address';
    throw fieldError(field, error.message);
  }
  const connectionId = crypto.randomUUID();
  const given = request.webhookSecret?.trim();
  const webhook = connector.webhookSecret({ key, secret }, given === '' ? undefined : given);
  const sealed = sealSecrets(db.secretKey, connectionId, { key, secret }, webhook.secret);
  await db.transaction(async (tx) => {
    await lockOrganization(tx, request.organizationId); // before the store, as an import does (stores.ts)
    await tx.query(
      `INSERT INTO stores (organization_id, address) VALUES ($1, $2) ON CONFLICT (organization_id, address) DO NOTHING`,
      [request.organizationId, address],
    );
    const inserted = await tx.query(
      `INSERT INTO store_connections (organization_id, store_id, id, platform, api_base, credentials, webhook_secret, secret_hint)
       SELECT $1, s.id, $3, $4, $5, $6, $7, $8 FROM stores s WHERE s.organization_id = $1 AND s.address = $2
       ON CONFLICT (organization_id, store_id) DO NOTHING RETURNING id`,
      [
        request.organizationId,
        address,
        connectionId,
        platform,
        apiBase.href,
        sealed.credentials,
        sealed.webhookSecret,
        sealed.secretHint,
      ],
    );
    if (inserted.length === 0)
      throw new AppError('CONFLICT', `Boutique déjà connectée : ${address}`, { field: 'address' });
  });
  return {
    connectionId,
    address,
    platform,
    webhookSecret: webhook.show ? webhook.secret : undefined,
    webhookPath: webhookPathOf(platform, connectionId),
  };
}

export const listConnections = (db: Queryable, organizationId: string): Promise<StoreConnection[]> =>
  connectionsOf(db, organizationId);

async function connectionAt(
  db: Queryable,
  organizationId: string,
  rawAddress: string,
): Promise<StoreConnection> {
  const address = normalizeStoreAddress(rawAddress);
  const found = (await connectionsOf(db, organizationId)).find((c) => c.address === address);
  if (!found)
    throw new AppError('NOT_FOUND', `Aucune boutique connectée à l’adresse « ${address.slice(0, 200)} »`);
  return found;
}

/** Makes the store due now, with a deletion sweep (the page's button, `store sync` when busy). */
export async function requestSync(
  db: Queryable,
  organizationId: string,
  address: string,
): Promise<StoreConnection> {
  const connection = await connectionAt(db, organizationId, address);
  await db.query('UPDATE store_connections SET next_sync_at = now(), swept_at = NULL WHERE id = $1', [
    connection.id,
  ]);
  return connection;
}

/**
 * Stops syncing the store (a pass under way loses its lease at its next page). With
 * `removeOrders`, its orders go too, first orders (U2) recomputed, and the store is forgotten.
 */
export async function disconnectStore(
  db: Database,
  organizationId: string,
  address: string,
  options: { removeOrders: boolean },
): Promise<{ address: string; removedOrders: number }> {
  const connection = await connectionAt(db, organizationId, address);
  return db.transaction(async (tx) => {
    await tx.query('DELETE FROM store_connections WHERE id = $1', [connection.id]);
    if (!options.removeOrders) return { address: connection.address, removedOrders: 0 };
    // The connection, then the organization's row, as a connector page does (order-writes.ts):
    // an import holds that row while it writes, so this waits for it instead of deadlocking.
    await lockOrganization(tx, organizationId);
    const scratch = crypto.randomUUID();
    const removed = await removeStoreOrders(tx, organizationId, connection.storeId, scratch, 'all');
    await refreshFirstOrders(tx, organizationId, { customersOfImport: scratch });
    await discardStaged(tx, organizationId, scratch);
    await tx.query('DELETE FROM stores WHERE organization_id = $1 AND id = $2', [
      organizationId,
      connection.storeId,
    ]);
    return { address: connection.address, removedOrders: removed };
  });
}

export type WebhookOutcome = 'ping' | 'queued' | 'ignored' | 'refused' | 'unknown';

/**
 * A webhook delivery (issue 11, item 3): authenticated by its signature, then the order it names
 * is queued for the worker, which reads the order's current state from the store. `unknown`: no
 * such connection (or not of that platform).
 */
export async function receiveWebhook(
  db: Database,
  setup: StoreSyncSetup,
  delivery: {
    platform: string;
    connectionId: string;
    headers: Readonly<Record<string, string | undefined>>;
    body: Buffer;
  },
): Promise<WebhookOutcome> {
  const connection = await webhookTarget(db, delivery.connectionId);
  if (!connection || connection.platform !== delivery.platform) return 'unknown';
  const secret = openWebhookSecret(db.secretKey, connection);
  const read = setup.connectors[connection.platform].readWebhook(delivery.headers, delivery.body, secret);
  if (read.kind !== 'order') return read.kind;
  if (read.deliveryId !== undefined && !(await firstDelivery(db, connection.id, read.deliveryId))) {
    return 'ignored';
  }
  // A full queue asks for a whole incremental pass instead (deletions wait for the next sweep).
  if (!(await queueRefetch(db, connection.id, read.id))) {
    await db.query('UPDATE store_connections SET next_sync_at = now() WHERE id = $1', [connection.id]);
  }
  return 'queued';
}

/** False when this delivery id was seen in the last day (Shopify sends a late-answered one again). */
async function firstDelivery(db: Database, connectionId: string, deliveryId: string): Promise<boolean> {
  await db.query(
    `DELETE FROM store_webhook_deliveries WHERE connection_id = $1 AND received_at < now() - interval '1 day'`,
    [connectionId],
  );
  const rows = await db.query(
    `INSERT INTO store_webhook_deliveries (connection_id, delivery_id) VALUES ($1, $2)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [connectionId, deliveryId],
  );
  return rows.length > 0;
}

export interface ForegroundSync {
  /** False when another process holds the store's lease (its sync goes on there). */
  readonly ran: boolean;
  readonly address: string;
  readonly written: number;
  readonly error?: string;
}

/**
 * `store sync`: syncs the store now in this process, passes after passes until it is up to date
 * (a whole backfill if one is under way), with a deletion sweep; `onProgress` gets the orders
 * written so far. When the server holds the store, the sync is only asked for.
 */
export async function syncStoreNow(
  db: Database,
  setup: StoreSyncSetup,
  organizationId: string,
  address: string,
  onProgress: (written: number) => void,
): Promise<ForegroundSync> {
  const found = await connectionAt(db, organizationId, address);
  const owner = crypto.randomUUID();
  // Claimed first: marking the store due before would let a server's worker take it in between.
  let connection = await claimNow(db, found.id, owner);
  if (!connection) {
    await requestSync(db, organizationId, address);
    return { ran: false, address: found.address, written: 0 };
  }
  // With a deletion sweep, like the page's « Synchroniser maintenant ».
  connection = { ...connection, sweptAt: null };
  let written = 0;
  for (;;) {
    const done = written;
    const pass = await runPass(db, setup.connectors[connection.platform], connection, owner, setup.settings, {
      onProgress: (n) => onProgress(done + n),
    });
    written += pass.written;
    const { outcome } = pass;
    if (!outcome.ok || outcome.finished) {
      await release(db, connection.id, owner, outcome);
      return {
        ran: true,
        address: connection.address,
        written,
        ...(outcome.ok ? {} : { error: outcome.error }),
      };
    }
    connection = (await connectionById(db, connection.id)) ?? connection;
  }
}
