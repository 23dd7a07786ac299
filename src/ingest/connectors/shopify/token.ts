// The access token a Shopify request carries (issue 21). A custom app's Admin API token (shpat_…)
// is used as given. An app of the Dev Dashboard gives a client id and secret instead: the token
// is obtained with the client-credentials grant (a POST to ADDRESS/admin/oauth/access_token, the
// secret in the body, never in the URL) and lasts about 24 hours; it is kept in memory only, per
// process, and asked for again before it expires (renewMarginMs), so no request is refused for it.
import crypto from 'node:crypto';
import { ConnectorError, type StoreCredentials } from '../connector.js';
import { politeRequest, type RetryPolicy } from '../polite-get.js';
import type { StoreHttpOptions } from '../store-http.js';
import { siteOf, type AccessToken } from './graphql.js';

interface Granted {
  readonly token: string;
  readonly renewAt: number;
}

/** Tokens by shop and client (a hash: the map never holds a secret as a key). */
const granted = new Map<string, Granted>();
const MAX_KEPT = 10_000;

async function grant(
  apiBase: URL,
  credentials: StoreCredentials,
  http: StoreHttpOptions,
  retry: RetryPolicy,
) {
  const url = new URL(`${siteOf(apiBase)}/admin/oauth/access_token`);
  const body = Buffer.from(
    new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credentials.key,
      client_secret: credentials.secret,
    }).toString(),
  );
  const response = await politeRequest(
    url,
    { method: 'POST', body },
    { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    http,
    retry,
  );
  const host = url.host;
  if ([400, 401, 403].includes(response.status)) {
    throw new ConnectorError(
      'credentials',
      `Identifiants de l’application refusés par la boutique Shopify ${host} (${response.status}) : vérifiez l’identifiant client, le secret client, et que l’application est installée sur cette boutique`,
    );
  }
  let answer: unknown;
  try {
    answer = JSON.parse(response.body.toString('utf8'));
  } catch {
    answer = undefined;
  }
  const token = (answer as { access_token?: unknown } | undefined)?.access_token;
  if (response.status !== 200 || typeof token !== 'string' || token === '') {
    throw new ConnectorError(
      'address',
      `Aucun jeton obtenu de ${host} (réponse ${response.status}) : est-ce bien l’adresse d’une boutique Shopify ?`,
    );
  }
  const expiresS = Number((answer as { expires_in?: unknown }).expires_in);
  const lifeMs = Number.isFinite(expiresS) && expiresS > 0 ? expiresS * 1000 : 3_600_000;
  return { token, renewAt: Date.now() + lifeMs - renewMarginMs(lifeMs) };
}

/**
 * How long before its expiry a token is replaced: a tenth of its life, at most 30 minutes (a
 * 24 h token is renewed after 23 h 30), but at least a minute or half its life, whichever is
 * shorter: a request with its retries and a slow shop can take tens of seconds, and the token must
 * still be valid when it reaches the shop (a 5 s token is renewed after 2.5 s, not 4.5 s).
 */
export function renewMarginMs(lifeMs: number): number {
  return Math.min(Math.max(lifeMs / 10, Math.min(60_000, lifeMs / 2)), 1_800_000);
}

export function accessToken(
  apiBase: URL,
  credentials: StoreCredentials,
  http: StoreHttpOptions,
  retry: RetryPolicy,
): AccessToken {
  if (credentials.key === '') {
    return { value: () => Promise.resolve(credentials.secret), renewable: false, forget: () => undefined };
  }
  const id = crypto
    .createHash('sha256')
    .update(`${siteOf(apiBase)}\n${credentials.key}\n${credentials.secret}`)
    .digest('base64url');
  return {
    renewable: true,
    forget: () => void granted.delete(id),
    async value() {
      const kept = granted.get(id);
      if (kept && kept.renewAt > Date.now()) return kept.token;
      const fresh = await grant(apiBase, credentials, http, retry);
      if (granted.size >= MAX_KEPT) granted.clear();
      granted.set(id, fresh);
      return fresh.token;
    },
  };
}
