// Shopify through its Admin GraphQL API (issue 21): the second implementation of the connector
// interface. An app's access token (or its client id and secret, exchanged for a token), read
// scopes only (read_orders, read_all_orders); orders walked by id for the history, by update date
// for the changes (Shopify lists no deleted orders: the deletion sweep and the orders/delete
// webhook find those), each order's refunds read with it when it has some. Only reads are sent.
import {
  ConnectorError,
  type OrderLine,
  type OrderState,
  type OrdersPage,
  type StoreApi,
  type StoreConnector,
  type StoreCredentials,
  type UnmappedOrder,
  type WebhookDelivery,
} from '../connector.js';
import { newWebhookSecret } from '../credentials.js';
import { readSignedOrderDelivery } from '../signed-webhook.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../polite-get.js';
import { checkStoreUrl, StoreHttpError, type StoreHttpOptions } from '../store-http.js';
import { BULK_POLL_MS, pollBulk, readBulkSlice } from './bulk.js';
import { TooManyOpenOrders } from './bulk-file.js';
import { startBulk } from './bulk-start.js';
import { accessDenied, graphqlUrl, ShopifyGraphql } from './graphql.js';
import { nodesOf, orderLine, shopCents } from './mapping.js';
import * as Q from './queries.js';
import { accessToken } from './token.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const gid = (id: string) => `gid://shopify/Order/${id}`;
/** The most pages of one order's line items read (about 25,000 line items, 80 a page). */
const MAX_LINE_ITEM_PAGES = 313;
/** The most orders read one by one after a bulk file named them without their line. */
const MAX_STRAYS = 1_000;
/** The most refunds of one order read (each is one request past the first three). */
const MAX_REFUNDS = 1_000;

/** Shopify's search syntax for "updated since": the instant in UTC, quoted. */
const updatedSince = (since: Date) => `updated_at:>='${since.toISOString().replace(/\.\d{3}Z$/, 'Z')}'`;

function connection(value: unknown): { nodes: Json[]; next: string | undefined } {
  const info = isObject(value) && isObject(value.pageInfo) ? value.pageInfo : {};
  const cursor = typeof info.endCursor === 'string' ? info.endCursor : undefined;
  return { nodes: nodesOf(value), next: info.hasNextPage === true ? cursor : undefined };
}

class ShopifyApi implements StoreApi {
  constructor(
    private readonly client: ShopifyGraphql,
    private readonly currency: string,
    private readonly http: StoreHttpOptions,
    private readonly retry: RetryPolicy,
    private readonly version: string,
    private readonly bulkPollMs: number,
  ) {}

  /** The order with all its line items and its refunds (the page gave only the first ones). */
  private async detail(id: string): Promise<Json | undefined> {
    const data = await this.client.query(Q.ORDER_DETAIL, { id: gid(id) }, Q.ORDER_DETAIL_COST);
    if (!isObject(data.order)) return undefined;
    const order = data.order;
    const items = connection(order.lineItems);
    const all = [...items.nodes];
    let after = items.next;
    for (let pages = 0; after !== undefined && pages < MAX_LINE_ITEM_PAGES; pages++) {
      const more = await this.client.query(Q.LINE_ITEMS, { id: gid(id), after }, Q.LINE_ITEMS_COST);
      const page = connection(isObject(more.order) ? more.order.lineItems : undefined);
      all.push(...page.nodes);
      after = page.next;
    }
    const shippingLines = await this.allShippingLines(id, order.shippingLines);
    return { ...order, lineItems: { nodes: all }, shippingLines, refunds: await this.allRefunds(order) };
  }

  /**
   * Every refund of the order, whole: `Order.refunds` is a list without `after`, so the detail
   * asks for the first three with their parts and every id; the others are read by id (issue 21
   * item 4: refund_tax and refund_shipping exact for any number of refunds).
   */
  private async allRefunds(order: Json): Promise<Json[]> {
    const first = Array.isArray(order.refunds) ? order.refunds.filter(isObject) : [];
    const ids = Array.isArray(order.refundIds) ? order.refundIds.filter(isObject).map((r) => r.id) : [];
    const known = new Set(first.map((r) => r.id));
    const refunds: Json[] = [];
    // One request at a time, as for every store (polite-get.ts).
    for (const refund of first) refunds.push(await this.wholeRefund(refund));
    for (const id of ids.slice(0, MAX_REFUNDS)) {
      if (typeof id !== 'string' || known.has(id)) continue;
      const data = await this.client.query(Q.REFUND, { id }, Q.REFUND_QUERY_COST);
      if (isObject(data.refund)) refunds.push(await this.wholeRefund(data.refund));
    }
    return refunds;
  }

  /** The order's shipping lines, all of them (the page gave the first 5), for their taxes. */
  private async allShippingLines(id: string, first: unknown): Promise<{ nodes: Json[] }> {
    const lines = connection(first);
    const nodes = [...lines.nodes];
    await this.rest(lines.next, nodes, async (after) => {
      const more = await this.client.query(Q.SHIPPING_LINES, { id: gid(id), after }, Q.SHIPPING_LINES_COST);
      return connection(isObject(more.order) ? more.order.shippingLines : undefined);
    });
    return { nodes };
  }

  /** A refund with all its line items and shipping lines (the detail gave the first 20 and 3). */
  private async wholeRefund(refund: Json): Promise<Json> {
    if (typeof refund.id !== 'string') return refund;
    const id = refund.id;
    const items = connection(refund.refundLineItems);
    const itemNodes = [...items.nodes];
    await this.rest(items.next, itemNodes, async (after) => {
      const more = await this.client.query(Q.REFUND_LINE_ITEMS_PAGE, { id, after }, Q.REFUND_LINE_ITEMS_COST);
      return connection(isObject(more.refund) ? more.refund.refundLineItems : undefined);
    });
    const shipping = connection(refund.refundShippingLines);
    const shippingNodes = [...shipping.nodes];
    await this.rest(shipping.next, shippingNodes, async (after) => {
      const more = await this.client.query(
        Q.REFUND_SHIPPING_LINES_PAGE,
        { id, after },
        Q.REFUND_SHIPPING_LINES_COST,
      );
      return connection(isObject(more.refund) ? more.refund.refundShippingLines : undefined);
    });
    return {
      ...refund,
      refundLineItems: { nodes: itemNodes },
      refundShippingLines: { nodes: shippingNodes },
    };
  }

  /** The further pages of a connection, appended to `nodes` (at most MAX_LINE_ITEM_PAGES). */
  private async rest(
    next: string | undefined,
    nodes: Json[],
    read: (after: string) => Promise<{ nodes: Json[]; next: string | undefined }>,
  ): Promise<void> {
    let after = next;
    for (let pages = 0; after !== undefined && pages < MAX_LINE_ITEM_PAGES; pages++) {
      const page = await read(after);
      nodes.push(...page.nodes);
      after = page.next;
    }
  }

  private async stateOf(node: Json): Promise<OrderState> {
    const id = String(node.legacyResourceId ?? '');
    if (node.test === true) return { gone: true };
    const refunded = shopCents(node.totalRefundedSet);
    // Shipping lines past the page's first 5 only matter for their taxes (taxes included).
    const moreItems = hasMore(node.lineItems) || (node.taxesIncluded === true && hasMore(node.shippingLines));
    if ((refunded !== undefined && refunded !== 0n) || moreItems) {
      if (!/^\d{1,19}$/.test(id)) return { id, message: 'identifiant de commande manquant' };
      const whole = await this.detail(id);
      return whole ? orderLine(whole, this.currency) : { gone: true };
    }
    return orderLine(node, this.currency);
  }

  private async page(variables: Json): Promise<OrdersPage> {
    const data = await this.client.query(
      Q.ORDERS_PAGE,
      { first: Q.ORDERS_PER_PAGE, ...variables },
      Q.ORDERS_PAGE_COST,
    );
    const storeDate = this.client.lastDate;
    const { nodes, next } = connection(data.orders);
    const mapped = await this.mapped(nodes);
    const total =
      variables.after === undefined && variables.sortKey === 'ID' ? await this.count() : undefined;
    return { ...mapped, next, total, storeDate };
  }

  private async mapped(nodes: readonly Json[]): Promise<Mapped> {
    const orders: OrderLine[] = [];
    const removed: string[] = [];
    const unmapped: UnmappedOrder[] = [];
    for (const node of nodes) {
      const state = await this.stateOf(node);
      if ('line' in state) orders.push(state.line);
      else if ('gone' in state) removed.push(String(node.legacyResourceId));
      else unmapped.push(state);
    }
    return { orders, removed, unmapped };
  }

  /** The shop's order count, for the progress; undefined when the shop does not say. */
  private async count(): Promise<number | undefined> {
    try {
      const data = await this.client.query(Q.ORDERS_COUNT, {}, 1);
      const count = isObject(data.ordersCount) ? Number(data.ordersCount.count) : Number.NaN;
      return Number.isSafeInteger(count) && count >= 0 ? count : undefined;
    } catch (error) {
      if (error instanceof ConnectorError && error.kind === 'protocol') return undefined;
      throw error;
    }
  }

  /**
   * The history through a bulk operation (bulk.ts), or page by page when the shop refuses one:
   * cursors `bulk:ID`, `bulk:ID:OFFSET`, `pages:CURSOR`.
   */
  async history(cursor: string | undefined): Promise<OrdersPage> {
    const empty = (next: string | undefined, total?: number, exportObjects?: number): OrdersPage => ({
      orders: [],
      removed: [],
      unmapped: [],
      next,
      total,
      storeDate: this.client.lastDate,
      ...(exportObjects === undefined ? {} : { exportObjects }),
    });
    if (cursor === undefined) {
      const started = await startBulk(this.client, this.version, this.retry);
      // The shop's order count is the progress's estimate (the operation counts objects, not orders).
      const total = await this.count();
      if (started.kind !== 'started') return empty('pages:', total);
      const page = empty(`bulk:${started.id}`, total, 0);
      // An operation adopted (bulk-start.ts) holds the shop as it was when it began.
      return started.createdAt ? { ...page, storeDate: started.createdAt } : page;
    }
    if (cursor.startsWith('pages:')) {
      const after = cursor.slice('pages:'.length);
      const page = await this.page({ sortKey: 'ID', after: after === '' ? undefined : after });
      return { ...page, next: page.next === undefined ? undefined : `pages:${page.next}` };
    }
    // `bulk:ID:OFFSET` (a file read forward by an older release, its children assumed grouped):
    // read again whole, from its end, so that no order keeps the line items it lost.
    const m = /^bulk:(gid:\/\/shopify\/BulkOperation\/\d{1,19})(?::to:(\d{1,15})|:\d{1,15})?$/.exec(cursor);
    if (!m) return empty('pages:'); // a cursor of another kind (an older walk): pages from the start
    const id = m[1]!;
    const step = await pollBulk(this.client, id, this.bulkPollMs);
    // Objects so far (orders, line items, shipping lines): the progress while it gathers them.
    if (step.kind === 'running') return empty(cursor, undefined, step.objects);
    if (step.kind !== 'done') return empty('pages:');
    if (step.url === undefined) return empty(undefined); // no order at all
    const to = m[2] === undefined ? undefined : Number(m[2]);
    const file = { key: `${this.client.host}|${id}`, size: step.size, to };
    let slice;
    try {
      slice = await readBulkSlice(step.url, file, this.http, this.retry);
    } catch (error) {
      // Children too far from their orders to be carried in bounded memory: page by page.
      if (error instanceof TooManyOpenOrders) return empty('pages:');
      throw error;
    }
    const page = await this.mapped(slice.orders);
    const strays = await this.strays(slice.strays);
    if (strays === undefined)
      return { ...page, next: 'pages:', total: undefined, storeDate: this.client.lastDate };
    return {
      ...merged(page, strays),
      next: slice.next === undefined ? undefined : `bulk:${id}:to:${slice.next}`,
      total: undefined,
      storeDate: this.client.lastDate,
    };
  }

  /**
   * Orders whose children were met but not their line after them (a file not as Shopify documents
   * it): each read whole by id. Undefined when there are too many: the history is walked page by page.
   */
  private async strays(gids: readonly string[]): Promise<Mapped | undefined> {
    if (gids.length > MAX_STRAYS) return undefined;
    const orders: OrderLine[] = [];
    const removed: string[] = [];
    const unmapped: UnmappedOrder[] = [];
    for (const gidText of gids) {
      const id = /^gid:\/\/shopify\/Order\/(\d{1,19})$/.exec(gidText)?.[1];
      if (id === undefined) continue;
      const state = await this.order(id);
      if ('line' in state) orders.push(state.line);
      else if ('gone' in state) removed.push(id);
      else unmapped.push(state);
    }
    return { orders, removed, unmapped };
  }

  changes(since: Date, cursor: string | undefined): Promise<OrdersPage> {
    return this.page({ sortKey: 'UPDATED_AT', query: updatedSince(since), after: cursor });
  }

  async order(id: string): Promise<OrderState> {
    if (!/^\d{1,19}$/.test(id)) return { gone: true };
    const whole = await this.detail(id);
    return whole ? orderLine(whole, this.currency) : { gone: true };
  }

  async ids(cursor: string | undefined) {
    const data = await this.client.query(
      Q.ORDER_IDS,
      { first: Q.IDS_PER_PAGE, after: cursor },
      Q.ORDER_IDS_COST,
    );
    const { nodes, next } = connection(data.orders);
    return { ids: nodes.map((n) => String(n.legacyResourceId)), next };
  }
}

type Mapped = { orders: OrderLine[]; removed: string[]; unmapped: UnmappedOrder[] };

/** A page's orders and those read again by id, the second reading of an order replacing the first. */
function merged(page: Mapped, again: Mapped): Mapped {
  const ids = new Set([
    ...again.orders.map((o) => o.id),
    ...again.removed,
    ...again.unmapped.map((u) => u.id),
  ]);
  return {
    orders: [...page.orders.filter((o) => !ids.has(o.id)), ...again.orders],
    removed: [...page.removed.filter((id) => !ids.has(id)), ...again.removed],
    unmapped: [...page.unmapped.filter((u) => !ids.has(u.id)), ...again.unmapped],
  };
}

/** A connection with more nodes than the page gave. */
const hasMore = (value: unknown): boolean =>
  isObject(value) && isObject(value.pageInfo) && value.pageInfo.hasNextPage === true;

/** An access token (custom app) or a client id and secret (Dev Dashboard app). */
const TOKEN = /^[A-Za-z0-9_-]{8,512}$/;
const CLIENT_ID = /^[A-Za-z0-9_-]{8,200}$/;

function credentialsError(credentials: StoreCredentials): string | undefined {
  if (credentials.key === '') {
    return TOKEN.test(credentials.secret)
      ? undefined
      : 'Jeton d’accès invalide : celui de l’API Admin de l’application personnalisée (shpat_…), affiché une fois par Shopify';
  }
  if (!CLIENT_ID.test(credentials.key)) {
    return 'Identifiant client invalide : celui de l’application (Dev Dashboard → Paramètres)';
  }
  return TOKEN.test(credentials.secret)
    ? undefined
    : 'Secret client invalide : celui de l’application (Dev Dashboard → Paramètres)';
}

async function verify(
  address: URL,
  credentials: StoreCredentials,
  http: StoreHttpOptions,
  currency: string,
  version: string,
  retry: RetryPolicy,
): Promise<{ apiBase: URL }> {
  try {
    checkStoreUrl(address, http);
  } catch (error) {
    if (error instanceof StoreHttpError) throw new ConnectorError('address', error.message);
    throw error;
  }
  const token = accessToken(address, credentials, http, retry);
  const client = new ShopifyGraphql(graphqlUrl(address, version), token, http, retry);
  const data = await client.query(Q.SHOP, {}, 1);
  const shop = isObject(data.shop) ? data.shop : undefined;
  if (!shop || typeof shop.currencyCode !== 'string') {
    throw new ConnectorError('address', `${address.host} n’a pas répondu comme une boutique Shopify`);
  }
  if (shop.currencyCode !== currency) {
    throw new ConnectorError(
      'currency',
      `La boutique ${String(shop.name ?? address.host).slice(0, 100)} est en ${shop.currencyCode.slice(0, 8)}, l’organisation en ${currency} : les montants ne sont jamais convertis ; connectez-la à une organisation en ${shop.currencyCode.slice(0, 8)}`,
    );
  }
  await client.query(Q.FIRST_ORDER, {}, 4);
  await checkScopes(client, address.host);
  return { apiBase: address };
}

/** read_all_orders missing: Shopify would give only the last 60 days, silently. */
async function checkScopes(client: ShopifyGraphql, host: string): Promise<void> {
  let data: Json;
  try {
    data = await client.query(Q.SCOPES, {}, 2);
  } catch (error) {
    // A shop that does not answer this (an older or partial API) is checked by its orders alone.
    if (error instanceof ConnectorError && error.kind === 'protocol') return;
    throw error;
  }
  const installation = isObject(data.currentAppInstallation) ? data.currentAppInstallation : undefined;
  if (!installation || !Array.isArray(installation.accessScopes)) return;
  const scopes = new Set(installation.accessScopes.map((s) => (isObject(s) ? String(s.handle) : '')));
  if (!scopes.has('read_orders') && !scopes.has('write_orders')) throw accessDenied(host);
  if (!scopes.has('read_all_orders')) {
    throw new ConnectorError(
      'permissions',
      `L’application n’a pas la permission read_all_orders sur ${host} : sans elle, Shopify ne donne que les commandes des 60 derniers jours ; ajoutez-la (avec read_orders) puis réessayez`,
    );
  }
}

/** `bulkPollMs`: the wait between two looks at a running bulk operation (SHOPIFY_BULK_POLL_MS). */
export function shopifyConnector(
  version: string,
  retry: RetryPolicy = DEFAULT_RETRY,
  bulkPollMs = BULK_POLL_MS,
): StoreConnector {
  return {
    platform: 'shopify',
    label: 'Shopify',
    credentialsError,
    webhookSecret: (credentials, given) =>
      // The app's API secret key signs its webhooks; a Dev Dashboard app's is its client secret.
      // Without either, a random one: deliveries are refused, sync passes alone keep the store.
      ({ secret: given ?? (credentials.key === '' ? newWebhookSecret() : credentials.secret), show: false }),
    verify: (address, credentials, http, currency) =>
      verify(address, credentials, http, currency, version, retry),
    open: (apiBase, credentials, http, currency) =>
      new ShopifyApi(
        new ShopifyGraphql(
          graphqlUrl(apiBase, version),
          accessToken(apiBase, credentials, http, retry),
          http,
          retry,
        ),
        currency,
        http,
        retry,
        version,
        bulkPollMs,
      ),
    readWebhook,
  };
}

const ORDER_TOPICS = new Set([
  'orders/create',
  'orders/updated',
  'orders/delete',
  'orders/cancelled',
  'orders/paid',
  // A refund's body is the refund: its order is `order_id` (issue 27: its lines refunded).
  'refunds/create',
]);

/**
 * A delivery: X-Shopify-Hmac-Sha256 is the base64 HMAC-SHA256 of the raw body with the app's
 * secret. The order is named by the body's `id` (its legacy id; a refund's `order_id`); the body's
 * own figures are not used, the order is read again whole. X-Shopify-Webhook-Id names the
 * delivery (Shopify sends one again when an answer is late).
 */
export function readWebhook(
  headers: Readonly<Record<string, string | undefined>>,
  body: Buffer,
  secret: string,
): WebhookDelivery {
  const read = readSignedOrderDelivery(
    { signature: headers['x-shopify-hmac-sha256'], topic: headers['x-shopify-topic'], body },
    secret,
    ORDER_TOPICS,
    (topic) => (topic === 'refunds/create' ? 'order_id' : 'id'),
  );
  if (!('id' in read)) return read;
  const deliveryId = headers['x-shopify-webhook-id'];
  return { kind: 'order', id: read.id, ...(deliveryId ? { deliveryId: deliveryId.slice(0, 200) } : {}) };
}
