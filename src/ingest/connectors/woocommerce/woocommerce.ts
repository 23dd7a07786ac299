// WooCommerce through its REST API v3 (issue 11): keys created in WooCommerce → Settings →
// Advanced → REST API with the "Read" permission, sent by HTTP Basic over HTTPS (never in a URL).
// Orders are walked by id, oldest first, 100 a page, pages counted by X-WP-TotalPages; changes by
// modified_after (GMT); trashed orders by status=trash. Only GET requests are ever made.
import {
  ConnectorError,
  type OrderState,
  type OrdersPage,
  type StoreApi,
  type StoreConnector,
  type StoreCredentials,
  type WebhookDelivery,
} from '../connector.js';
import { DEFAULT_RETRY, politeGet, type RetryPolicy } from '../polite-get.js';
import { checkStoreUrl, StoreHttpError, type StoreHttpOptions, type StoreResponse } from '../store-http.js';
import { newWebhookSecret } from '../credentials.js';
import { readSignedOrderDelivery } from '../signed-webhook.js';
import { orderLine } from './mapping.js';
import { productIdsOf } from './lines.js';
import { categoryNames } from './categories.js';

const PER_PAGE = 100;
/** The most pages a walk believes X-WP-TotalPages about (10 million orders). */
const MAX_PAGES = 100_000;

/** A site path ending without its slash: `https://a.fr/shop/` → `https://a.fr/shop`. */
const siteOf = (url: URL): string => url.href.replace(/[?#].*$/, '').replace(/\/+$/, '');

function restUrl(apiBase: URL, route: string, query: Record<string, string> = {}): URL {
  const url = new URL(`${siteOf(apiBase)}/wp-json/wc/v3/${route}`);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}

function json(response: StoreResponse, what: string): unknown {
  try {
    return JSON.parse(response.body.toString('utf8'));
  } catch {
    throw new ConnectorError('protocol', `Réponse illisible de la boutique ${response.url.host} (${what})`);
  }
}

/** WooCommerce's date format for modified_after with dates_are_gmt: no zone, no fraction. */
const gmtText = (date: Date): string => date.toISOString().slice(0, 19);

function refused(response: StoreResponse): ConnectorError | undefined {
  const host = response.url.host;
  if (response.status === 401) {
    return new ConnectorError(
      'credentials',
      `Clés refusées par la boutique ${host} : vérifiez la clé client (ck_…) et le secret client (cs_…), et qu’elles n’ont pas été révoquées`,
    );
  }
  if (response.status === 403) {
    return new ConnectorError(
      'permissions',
      `Ces clés ne permettent pas de lire les commandes de ${host} : créez une clé avec la permission « Lecture »`,
    );
  }
  if (response.status < 200 || response.status >= 300) {
    return new ConnectorError(
      'protocol',
      `La boutique ${host} a répondu ${response.status} à la lecture des commandes`,
    );
  }
  return undefined;
}

/** HTTP Basic with the REST keys: a header, never the query string (a URL gets logged). */
const authHeaders = (credentials: StoreCredentials): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${credentials.key}:${credentials.secret}`).toString('base64')}`,
  accept: 'application/json',
});

/** Products whose categories a pass keeps (issue 27): a catalogue's worth, then forgotten. */
const MAX_KNOWN_PRODUCTS = 10_000;

class WooCommerceApi implements StoreApi {
  private readonly headers: Record<string, string>;
  /** Each product's category names, read once per product and pass (not once per order). */
  private readonly categories = new Map<string, readonly string[]>();

  constructor(
    private readonly apiBase: URL,
    credentials: StoreCredentials,
    private readonly http: StoreHttpOptions,
    private readonly currency: string,
    private readonly retry: RetryPolicy,
  ) {
    this.headers = authHeaders(credentials);
  }

  private async get(route: string, query: Record<string, string> = {}): Promise<StoreResponse> {
    const response = await politeGet(
      restUrl(this.apiBase, route, query),
      this.headers,
      this.http,
      this.retry,
    );
    const error = response.status === 404 ? undefined : refused(response);
    if (error) throw error;
    return response;
  }

  /** One page of the orders list, oldest id first: its resources, the next cursor, the store's total. */
  private async list(query: Record<string, string>, cursor: string | undefined) {
    const page = cursor === undefined ? 1 : Number(cursor);
    if (!Number.isSafeInteger(page) || page < 1 || page > MAX_PAGES) {
      throw new ConnectorError(
        'protocol',
        `Curseur de synchronisation invalide : ${String(cursor).slice(0, 20)}`,
      );
    }
    const response = await this.get('orders', {
      ...query,
      per_page: String(PER_PAGE),
      page: String(page),
      orderby: 'id',
      order: 'asc',
    });
    const body = response.status === 404 ? undefined : json(response, 'liste des commandes');
    if (!Array.isArray(body)) {
      throw new ConnectorError(
        'protocol',
        `La boutique ${response.url.host} n’a pas renvoyé de liste de commandes`,
      );
    }
    const pages = Number(response.headers['x-wp-totalpages'] ?? 0);
    const total = Number(response.headers['x-wp-total'] ?? Number.NaN);
    return {
      resources: body as unknown[],
      next: body.length > 0 && page < Math.min(pages, MAX_PAGES) ? String(page + 1) : undefined,
      total: Number.isFinite(total) ? total : undefined,
      storeDate: response.date,
    };
  }

  /**
   * Reads the categories of the products these orders name that the pass has not seen yet: one
   * request a hundred products (`include`), whatever the number of orders naming them.
   */
  private async learnCategories(orders: readonly unknown[]): Promise<void> {
    const unknown = new Set<string>();
    for (const order of orders)
      if (typeof order === 'object' && order !== null && !Array.isArray(order))
        for (const id of productIdsOf(order as Record<string, unknown>))
          if (!this.categories.has(id)) unknown.add(id);
    const ids = [...unknown];
    if (this.categories.size + ids.length > MAX_KNOWN_PRODUCTS) this.categories.clear();
    for (let at = 0; at < ids.length; at += PER_PAGE) {
      const chunk = ids.slice(at, at + PER_PAGE);
      const response = await this.get('products', {
        include: chunk.join(','),
        per_page: String(PER_PAGE),
        _fields: 'id,categories',
      });
      const body = response.status === 404 ? [] : json(response, 'produits');
      const found = categoryNames(body);
      // A product the store no longer has (deleted) has no categories: not asked again.
      for (const id of chunk) this.categories.set(id, found.get(id) ?? []);
    }
  }

  private readonly categoriesOf = (productId: string): readonly string[] =>
    this.categories.get(productId) ?? [];

  private async page(query: Record<string, string>, cursor: string | undefined): Promise<OrdersPage> {
    const { resources, ...rest } = await this.list(query, cursor);
    await this.learnCategories(resources);
    const orders: OrdersPage['orders'][number][] = [];
    const removed: string[] = [];
    const unmapped: OrdersPage['unmapped'][number][] = [];
    for (const order of resources) {
      const state = await this.stateOf(order);
      if ('line' in state) orders.push(state.line);
      else if ('gone' in state) removed.push(String((order as { id?: unknown }).id));
      else unmapped.push(state);
    }
    return { orders, removed, unmapped, ...rest };
  }

  /** An order resource's state, its refunds read when it has some. */
  private async stateOf(order: unknown): Promise<OrderState> {
    if (typeof order !== 'object' || order === null || Array.isArray(order)) {
      return { id: '', message: 'commande illisible' };
    }
    const resource = order as Record<string, unknown>;
    if (resource.status === 'trash') return { gone: true };
    const summary = Array.isArray(resource.refunds) ? resource.refunds : [];
    let refunds: unknown = [];
    if (summary.length > 0) {
      const response = await this.get(`orders/${encodeURIComponent(String(resource.id))}/refunds`, {
        per_page: String(PER_PAGE),
      });
      refunds = response.status === 404 ? [] : json(response, 'remboursements');
    }
    return orderLine(resource, Array.isArray(refunds) ? refunds : [], this.currency, this.categoriesOf);
  }

  history(cursor: string | undefined): Promise<OrdersPage> {
    return this.page({ status: 'any' }, cursor);
  }

  /** Cursor `any:N` walks changed orders, then `trash:N` the ones trashed since. */
  async changes(since: Date, cursor: string | undefined): Promise<OrdersPage> {
    const [list = 'any', page] = (cursor ?? 'any:1').split(':');
    const status = list === 'trash' ? 'trash' : 'any';
    const result = await this.page({ status, modified_after: gmtText(since), dates_are_gmt: 'true' }, page);
    const next = result.next ? `${status}:${result.next}` : status === 'any' ? 'trash:1' : undefined;
    return { ...result, next };
  }

  async order(id: string): Promise<OrderState> {
    if (!/^\d{1,19}$/.test(id)) return { gone: true };
    const response = await this.get(`orders/${id}`);
    if (response.status === 404) return { gone: true };
    const order = json(response, `commande ${id}`);
    await this.learnCategories([order]);
    return this.stateOf(order);
  }

  async ids(cursor: string | undefined) {
    const { resources, next } = await this.list({ status: 'any', _fields: 'id' }, cursor);
    return { ids: resources.map((o) => String((o as { id?: unknown } | null)?.id)), next };
  }
}

const ORDERS_ROUTE = /\/wp-json\/wc\/v3\/orders\/?(?:[?#].*)?$/;

/**
 * Where WooCommerce's API answers: the orders route asked without the keys (they never follow a
 * redirect this way), which WooCommerce answers 401; the address it answered at, after any
 * redirect (http → https, a www prefix), is the API's base. Anything but WooCommerce's own JSON
 * says the address is not a WooCommerce store.
 */
async function findApi(address: URL, http: StoreHttpOptions, retry: RetryPolicy): Promise<URL> {
  const probe = await politeGet(
    restUrl(address, 'orders', { per_page: '1' }),
    { accept: 'application/json' },
    http,
    retry,
  );
  const host = address.host;
  let body: unknown;
  try {
    body = JSON.parse(probe.body.toString('utf8'));
  } catch {
    body = undefined;
  }
  const code = typeof body === 'object' && body !== null && 'code' in body ? String(body.code) : '';
  const wooCommerce =
    probe.status === 200 ? Array.isArray(body) : [401, 403].includes(probe.status) && code !== '';
  if (!wooCommerce) {
    throw new ConnectorError(
      'address',
      code === 'rest_no_route'
        ? `${host} est un site WordPress sans l’API REST de WooCommerce (wc/v3) : WooCommerce est-il installé et activé ?`
        : `Aucune API REST WooCommerce à l’adresse ${host} (réponse ${probe.status}) : vérifiez l’adresse de la boutique`,
    );
  }
  return new URL(probe.url.href.replace(ORDERS_ROUTE, '') || siteOf(address));
}

export function woocommerceConnector(retry: RetryPolicy = DEFAULT_RETRY): StoreConnector {
  return {
    platform: 'woocommerce',
    label: 'WooCommerce',
    credentialsError: (credentials) =>
      !KEY_FORMS.key.test(credentials.key)
        ? 'Clé client invalide : elle commence par ck_ (WooCommerce → Réglages → Avancé → API REST)'
        : !KEY_FORMS.secret.test(credentials.secret)
          ? 'Secret client invalide : il commence par cs_ (il n’est affiché qu’une fois par WooCommerce)'
          : undefined,
    // The owner pastes it into WooCommerce's webhook settings: shown once, at connection.
    webhookSecret: () => ({ secret: newWebhookSecret(), show: true }),
    // Each order says its currency; one in another currency is skipped (mapping.ts).
    async verify(address, credentials, http) {
      try {
        checkStoreUrl(address, http);
      } catch (error) {
        if (error instanceof StoreHttpError) throw new ConnectorError('address', error.message);
        throw error;
      }
      const apiBase = await findApi(address, http, retry);
      const probe = restUrl(apiBase, 'orders', { per_page: '1' });
      const response = await politeGet(probe, authHeaders(credentials), http, retry);
      const error = refused(response);
      if (error) throw error;
      return { apiBase };
    },
    open: (apiBase, credentials, http, currency) =>
      new WooCommerceApi(apiBase, credentials, http, currency, retry),
    readWebhook: (headers, body, secret) => readWebhook(headers, body, secret),
  };
}

const KEY_FORMS = { key: /^ck_[A-Za-z0-9]{8,120}$/, secret: /^cs_[A-Za-z0-9]{8,120}$/ };

const ORDER_TOPICS = new Set(['order.created', 'order.updated', 'order.deleted', 'order.restored']);

/**
 * A delivery: X-WC-Webhook-Signature is the base64 HMAC-SHA256 of the raw body with the webhook's
 * secret. WooCommerce's ping when a webhook is saved (`webhook_id=N`) does nothing and is answered.
 */
export function readWebhook(
  headers: Readonly<Record<string, string | undefined>>,
  body: Buffer,
  secret: string,
): WebhookDelivery {
  if (/^webhook_id=\d{1,19}$/.test(body.toString('latin1'))) return { kind: 'ping' };
  const read = readSignedOrderDelivery(
    { signature: headers['x-wc-webhook-signature'], topic: headers['x-wc-webhook-topic'], body },
    secret,
    ORDER_TOPICS,
  );
  return 'id' in read ? { kind: 'order', id: read.id } : read;
}
