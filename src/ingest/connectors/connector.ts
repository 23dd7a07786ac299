// The store-connector interface (issue 11). A platform (WooCommerce today, Shopify next) says how
// to check a store's address and keys, how to read its orders page by page, and how to read its
// webhooks; the sync engine (sync.ts) does the rest the same way for every platform: leases,
// retries, progress, writing orders through the import's own validation and merge. Nothing here
// knows about reports: a connector only produces order lines in the import format (SPEC 12).
import type { StoreHttpOptions } from './store-http.js';

export type Platform = 'woocommerce' | 'shopify';
export const PLATFORMS: readonly Platform[] = ['woocommerce', 'shopify'];

/**
 * A store's API credentials, as the owner pasted them: WooCommerce's consumer key and secret;
 * Shopify's app client id and client secret, or no key and an Admin API access token as secret.
 */
export interface StoreCredentials {
  readonly key: string;
  readonly secret: string;
}

/** One order as an import line (SPEC section 12 field names), its `store` set by the sync engine. */
export type OrderLine = Readonly<Record<string, unknown>> & { readonly id: string };

/** A line the connector could not map; reported like an import's faulty line. */
export interface UnmappedOrder {
  readonly id: string;
  readonly message: string;
}

export interface OrdersPage {
  readonly orders: readonly OrderLine[];
  /** Ids of orders the page says no longer count (trashed). */
  readonly removed: readonly string[];
  readonly unmapped: readonly UnmappedOrder[];
  /** The next page's cursor, undefined after the last page. */
  readonly next: string | undefined;
  /** The store's estimate of the orders the whole walk will read. */
  readonly total: number | undefined;
  /** The store's clock when it answered. */
  readonly storeDate: Date | undefined;
  /**
   * Objects the store's own export has gathered so far, while it runs and before any order is
   * read from it (a Shopify bulk operation's objectCount); absent for a walk without one.
   */
  readonly exportObjects?: number;
}

export interface IdsPage {
  readonly ids: readonly string[];
  readonly next: string | undefined;
}

/** What a store says about one order: its line, or that it no longer counts (deleted, trashed). */
export type OrderState = { readonly line: OrderLine } | { readonly gone: true } | UnmappedOrder;

/** One store's API, opened with its credentials. */
export interface StoreApi {
  /** Every order, oldest first; `cursor` undefined for the first page. */
  history(cursor: string | undefined): Promise<OrdersPage>;
  /** Orders created, changed or trashed since `since` (the store's clock). */
  changes(since: Date, cursor: string | undefined): Promise<OrdersPage>;
  order(id: string): Promise<OrderState>;
  /** Every id the store still has (the deletion sweep). */
  ids(cursor: string | undefined): Promise<IdsPage>;
}

export type WebhookDelivery =
  | { readonly kind: 'ping' }
  /** `deliveryId`: the platform's id of this delivery, when it sends one (repeats are dropped). */
  | { readonly kind: 'order'; readonly id: string; readonly deliveryId?: string }
  | { readonly kind: 'ignored'; readonly reason: string }
  | { readonly kind: 'refused'; readonly reason: string };

export interface StoreConnector {
  readonly platform: Platform;
  readonly label: string;
  /** Why the credentials cannot be this platform's (checked before any request), in French. */
  credentialsError(credentials: StoreCredentials): string | undefined;
  /**
   * The secret that signs the store's webhooks: WooCommerce's is made here and shown once for the
   * owner to paste (`show`); Shopify's is the app's own (given, or the client secret).
   */
  webhookSecret(credentials: StoreCredentials, given: string | undefined): { secret: string; show: boolean };
  /**
   * Checks the address and the keys against the store (reads only), with French errors a shop
   * owner can act on (ConnectorError); returns the base address its API answers at. `currency`:
   * the organization's, when the platform can tell the store's (amounts are never converted).
   */
  verify(
    address: URL,
    credentials: StoreCredentials,
    http: StoreHttpOptions,
    currency: string,
  ): Promise<{ apiBase: URL }>;
  open(apiBase: URL, credentials: StoreCredentials, http: StoreHttpOptions, currency: string): StoreApi;
  /** Authenticates and reads a webhook delivery (the raw body, as received). */
  readWebhook(
    headers: Readonly<Record<string, string | undefined>>,
    body: Buffer,
    secret: string,
  ): WebhookDelivery;
}

export type ConnectorErrorKind =
  'address' | 'credentials' | 'permissions' | 'currency' | 'unavailable' | 'rate-limited' | 'protocol';

/** A failure a person can act on, in French. `retryAfterS`: the store asked to wait. */
export class ConnectorError extends Error {
  constructor(
    readonly kind: ConnectorErrorKind,
    message: string,
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = 'ConnectorError';
  }

  /** Transient: worth retrying soon (a store down, slow or asking to wait). */
  get transient(): boolean {
    return this.kind === 'unavailable' || this.kind === 'rate-limited';
  }
}
