// How the service treats a store's server (issue 11, item 4): one request at a time (the sync
// engine never overlaps two for a store), a deadline on each, and on 429, 5xx or a network failure
// a few retries after an exponential delay with full jitter, or after the store's Retry-After when
// it sends one. A wait longer than the policy allows ends the attempt: the sync engine schedules
// the store again at that time instead of holding a worker.
import { ConnectorError } from './connector.js';
import {
  StoreHttpError,
  storeRequest,
  type StoreHttpOptions,
  type StoreRequest,
  type StoreResponse,
} from './store-http.js';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** The longest Retry-After (or Shopify cost-bucket refill) waited for in place; a longer one ends the attempt. */
  readonly maxRetryAfterS: number;
  /**
   * Told of each wait the store asks for: `waited` when it is waited for in place, not when it
   * is too long and ends the attempt (`store sync` shows the first and hands the second over).
   */
  readonly onWait?: (wait: { readonly seconds: number; readonly waited: boolean }) => void;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRetryAfterS: 60,
};

const TRANSIENT_HTTP: ReadonlySet<string> = new Set(['timeout', 'connection', 'dns']);

/** Retry-After in seconds (delta-seconds or an HTTP date), undefined when absent or unreadable. */
export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/** Full jitter: a uniform delay up to the exponential bound. */
const backoff = (policy: RetryPolicy, attempt: number): number =>
  Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);

function failure(response: StoreResponse, host: string): ConnectorError {
  const wait = retryAfterSeconds(response.headers['retry-after']);
  if (response.status === 429) {
    return new ConnectorError(
      'rate-limited',
      `La boutique ${host} limite le nombre de requêtes (429)${wait === undefined ? '' : ` : nouvel essai dans ${wait} s`}`,
      wait,
    );
  }
  return new ConnectorError(
    'unavailable',
    `La boutique ${host} est momentanément indisponible (erreur ${response.status})`,
    wait,
  );
}

/**
 * GET with the policy's retries. Answers other than 429 and 5xx are returned as they are (the
 * platform reads them); a store still failing after the last attempt gives a ConnectorError.
 */
export function politeGet(
  url: URL,
  headers: Readonly<Record<string, string>>,
  http: StoreHttpOptions,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<StoreResponse> {
  return politeRequest(url, { method: 'GET' }, headers, http, policy, signal);
}

/** politeGet for any request (a GraphQL POST reads only: retrying it is as harmless as a GET). */
export async function politeRequest(
  url: URL,
  request: StoreRequest,
  headers: Readonly<Record<string, string>>,
  http: StoreHttpOptions,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<StoreResponse> {
  for (let attempt = 0; ; attempt++) {
    const last = attempt + 1 >= policy.attempts;
    let error: ConnectorError;
    try {
      const response = await storeRequest(url, request, headers, http, signal);
      if (response.status !== 429 && response.status < 500) return response;
      error = failure(response, url.host);
    } catch (cause) {
      if (!(cause instanceof StoreHttpError)) throw cause;
      if (!TRANSIENT_HTTP.has(cause.kind)) throw new ConnectorError('address', cause.message);
      error = new ConnectorError('unavailable', cause.message);
    }
    if (last) throw error;
    const wait = error.retryAfterS;
    if (wait !== undefined) policy.onWait?.({ seconds: wait, waited: wait <= policy.maxRetryAfterS });
    if (wait !== undefined && wait > policy.maxRetryAfterS) throw error;
    await sleep(wait === undefined ? backoff(policy, attempt) : wait * 1000 + Math.random() * 250, signal);
  }
}
