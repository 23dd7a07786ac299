// Shopify's Admin GraphQL API (issue 21): every read is a POST of a query to
// ADDRESS/admin/api/VERSION/graphql.json, the access token in the X-Shopify-Access-Token header
// (never in a URL), through store-http.ts (the SSRF rules of every store request). Shopify limits
// each app by cost: a bucket of points (throttleStatus: maximumAvailable, refilled at restoreRate
// a second) from which each query's cost is taken. The client remembers the bucket from each
// answer's extensions.cost, waits for it to refill before a query it cannot afford, and on
// THROTTLED waits and tries again; 429, 5xx and network failures are retried by politeRequest.
import { ConnectorError } from '../connector.js';
import { politeRequest, sleep, type RetryPolicy } from '../polite-get.js';
import type { StoreHttpOptions, StoreResponse } from '../store-http.js';

/** Where a request's token comes from (token.ts). */
export interface AccessToken {
  value(): Promise<string>;
  /** Obtained by the grant: a 401 is worth one try with a fresh one. */
  readonly renewable: boolean;
  forget(): void;
}

/** The most Shopify accepts for one query's requested cost. */
export const MAX_QUERY_COST = 1_000;
const THROTTLED_ATTEMPTS = 5;

/** A site address without its trailing slash: `https://a.myshopify.com/` → `https://a.myshopify.com`. */
export const siteOf = (url: URL): string => url.href.replace(/[?#].*$/, '').replace(/\/+$/, '');

export const graphqlUrl = (apiBase: URL, version: string): URL =>
  new URL(`${siteOf(apiBase)}/admin/api/${version}/graphql.json`);

interface Bucket {
  available: number;
  maximum: number;
  restoreRate: number;
  at: number;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface GraphqlError {
  readonly message: string;
  readonly code: string;
}

function errorsOf(body: Json): GraphqlError[] {
  const { errors } = body;
  if (typeof errors === 'string') return [{ message: errors, code: '' }];
  if (!Array.isArray(errors)) return [];
  return errors.map((e: unknown) => ({
    message: isObject(e) && typeof e.message === 'string' ? e.message : 'erreur',
    code: isObject(e) && isObject(e.extensions) ? String(e.extensions.code ?? '') : '',
  }));
}

/** The French error for an answer that is not data: refused token, missing scope, wrong address. */
export function refusal(response: StoreResponse): ConnectorError | undefined {
  const host = response.url.host;
  if (response.status === 401) {
    return new ConnectorError(
      'credentials',
      `Jeton refusé par la boutique Shopify ${host} (401) : vérifiez le jeton d’accès de l’API Admin (shpat_…) ou les identifiants de l’application, et qu’ils n’ont pas été révoqués`,
    );
  }
  if (response.status === 403) return accessDenied(host);
  if (response.status === 402 || response.status === 423) {
    return new ConnectorError(
      'unavailable',
      `La boutique Shopify ${host} est ${response.status === 402 ? 'gelée (abonnement impayé)' : 'verrouillée'} : ses commandes ne peuvent pas être lues pour l’instant`,
    );
  }
  if (response.status === 404 || (response.status >= 300 && response.status < 400)) {
    return new ConnectorError(
      'address',
      `Aucune API Admin Shopify à l’adresse ${host} (réponse ${response.status}) : donnez l’adresse de la boutique, https://NOM.myshopify.com`,
    );
  }
  if (response.status < 200 || response.status >= 300) {
    return new ConnectorError('protocol', `La boutique Shopify ${host} a répondu ${response.status}`);
  }
  return undefined;
}

export const accessDenied = (host: string) =>
  new ConnectorError(
    'permissions',
    `Accès refusé par la boutique Shopify ${host} : l’application doit avoir la permission read_orders, et read_all_orders pour les commandes de plus de 60 jours`,
  );

export class ShopifyGraphql {
  private bucket: Bucket | undefined;
  /** The shop's clock at its last answer (its Date header). */
  lastDate: Date | undefined;

  constructor(
    private readonly url: URL,
    private readonly token: AccessToken,
    private readonly http: StoreHttpOptions,
    private readonly retry: RetryPolicy,
  ) {}

  /** The shop's host (names what this client reads, never sent anywhere). */
  get host(): string {
    return this.url.host;
  }

  /** Points the bucket holds now, by the last answer and the time since. */
  private availableNow(): number {
    const b = this.bucket;
    if (!b) return Number.POSITIVE_INFINITY;
    return Math.min(b.maximum, b.available + (b.restoreRate * (Date.now() - b.at)) / 1000);
  }

  /**
   * Waits until the bucket can afford `cost`: the time its throttleStatus says the missing points
   * take to restore (issue 26 item 2). A wait longer than the policy's maxRetryAfterS ends the
   * attempt instead (the pass is scheduled again then; `store sync` allows a longer one).
   */
  private async afford(cost: number): Promise<void> {
    const b = this.bucket;
    const missing = Math.min(cost, b?.maximum ?? cost) - this.availableNow();
    if (!b || missing <= 0) return;
    const waitS = missing / Math.max(b.restoreRate, 1);
    const bounded = waitS <= this.retry.maxRetryAfterS;
    this.retry.onWait?.({ seconds: Math.ceil(waitS), waited: bounded });
    if (!bounded) {
      throw new ConnectorError(
        'rate-limited',
        `La boutique Shopify ${this.url.host} limite les requêtes : nouvel essai dans ${Math.ceil(waitS)} s`,
        Math.ceil(waitS),
      );
    }
    await sleep(waitS * 1000 + 50);
  }

  private remember(body: Json): number | undefined {
    const cost = isObject(body.extensions) ? body.extensions.cost : undefined;
    if (!isObject(cost) || !isObject(cost.throttleStatus)) return undefined;
    const s = cost.throttleStatus;
    const [maximum, available, restoreRate] = [s.maximumAvailable, s.currentlyAvailable, s.restoreRate].map(
      Number,
    );
    if ([maximum, available, restoreRate].every((n) => Number.isFinite(n) && n! >= 0)) {
      this.bucket = { maximum: maximum!, available: available!, restoreRate: restoreRate!, at: Date.now() };
    }
    const requested = Number(cost.requestedQueryCost);
    return Number.isFinite(requested) ? requested : undefined;
  }

  private async post(query: string, variables: Json, once: boolean): Promise<StoreResponse> {
    const body = Buffer.from(JSON.stringify({ query, variables }), 'utf8');
    for (let renewed = false; ; renewed = true) {
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-shopify-access-token': await this.token.value(),
      };
      const response = await politeRequest(
        this.url,
        { method: 'POST', body },
        headers,
        this.http,
        once ? { ...this.retry, attempts: 1 } : this.retry,
      );
      // A token renewed by the client-credentials grant may have expired early: one fresh try.
      if (response.status !== 401 || renewed || !this.token.renewable) return response;
      this.token.forget();
    }
  }

  /**
   * The query's data; `cost`: its requested cost, waited for when the bucket is short of it.
   * `once`: no transport retry after a timeout, a 429 or a 5xx (a mutation that may have been
   * applied: the caller looks before asking again, bulk.ts).
   */
  async query(query: string, variables: Json, cost: number, once = false): Promise<Json> {
    for (let attempt = 1; ; attempt++) {
      await this.afford(cost);
      const response = await this.post(query, variables, once);
      this.lastDate = response.date;
      const refused = refusal(response);
      if (refused) throw refused;
      let body: unknown;
      try {
        body = JSON.parse(response.body.toString('utf8'));
      } catch {
        body = undefined;
      }
      if (!isObject(body)) {
        throw new ConnectorError(
          'address',
          `Réponse illisible de ${response.url.host} : est-ce bien l’adresse d’une boutique Shopify ?`,
        );
      }
      const requested = this.remember(body);
      const errors = errorsOf(body);
      if (errors.some((e) => e.code === 'THROTTLED') && attempt < THROTTLED_ATTEMPTS) {
        // The bucket is now known: afford() waits for the points this query asked for.
        cost = requested ?? cost;
        if (!this.bucket) await sleep(1000 * attempt);
        continue;
      }
      this.fail(errors, response.url.host);
      if (!isObject(body.data)) {
        throw new ConnectorError(
          'protocol',
          `La boutique Shopify ${response.url.host} n’a pas renvoyé de données`,
        );
      }
      return body.data;
    }
  }

  private fail(errors: readonly GraphqlError[], host: string): void {
    const [first] = errors;
    if (!first) return;
    if (errors.some((e) => e.code === 'ACCESS_DENIED' || /access denied/i.test(e.message))) {
      throw accessDenied(host);
    }
    if (errors.some((e) => e.code === 'THROTTLED')) {
      throw new ConnectorError(
        'rate-limited',
        `La boutique Shopify ${host} limite les requêtes (THROTTLED)`,
        60,
      );
    }
    throw new ConnectorError(
      'protocol',
      `La boutique Shopify ${host} a refusé la requête : ${first.message.slice(0, 200)}`,
    );
  }
}
