// The outbound HTTP client for a shop's REST API, at an address a user typed: GET only, bounded in
// time and size, with French errors for the shop owner. It refuses to reach internal services
// (SSRF): every hop's address is checked after name resolution, at connection time, so a name
// that changes its answer between a check and the connection (DNS rebinding) gains nothing.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import zlib from 'node:zlib';
import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import ipaddr from 'ipaddr.js';

export interface StoreHttpOptions {
  /** STORE_ALLOW_PRIVATE=1: loopback/private/link-local addresses and plain http:// are allowed (dev, tests). */
  readonly allowPrivate: boolean;
  /** Extra trusted CA certificates (PEM), added to Node's default ones (a test's self-signed stand-in). */
  readonly ca?: string | readonly string[];
  /** Whole-exchange timeout: connection + headers + body (default 30_000). */
  readonly timeoutMs?: number;
  /** Largest body accepted (default 16 MiB); past it the request is aborted. */
  readonly maxBodyBytes?: number;
  /** Redirects followed (default 5). */
  readonly maxRedirects?: number;
  /** Name resolution, for tests (default: dns.promises.lookup with { all: true, verbatim: true }). */
  readonly resolve?: (hostname: string) => Promise<readonly { address: string; family: number }[]>;
  /** Connections kept open between requests (one sync pass's); without, a new one per request. */
  readonly keptConnections?: KeptConnections;
}

/**
 * The connections of one sync pass, to one store, kept open between its requests: a backfill of
 * a thousand pages otherwise pays a thousand name lookups and TLS handshakes. Each new connection
 * still resolves and checks its address (checkedLookup); an open one only goes back to the address
 * already checked. Never shared between stores or passes: the pass closes it when it ends.
 */
export class KeptConnections {
  readonly #http = new http.Agent({ keepAlive: true, maxSockets: 2 });
  readonly #https = new https.Agent({ keepAlive: true, maxSockets: 2 });

  agentFor(url: URL): http.Agent {
    return url.protocol === 'https:' ? this.#https : this.#http;
  }

  close(): void {
    this.#http.destroy();
    this.#https.destroy();
  }
}

export interface StoreResponse {
  readonly status: number;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
  /** The URL that answered, after redirects. */
  readonly url: URL;
  /** The answering server's clock (its Date header), if it sent a valid one. */
  readonly date: Date | undefined;
}

export type StoreHttpErrorKind =
  | 'invalid-address' // not http(s), credentials in the URL, no host, bad redirect
  | 'insecure' // http:// without allowPrivate (typed, or reached by a redirect)
  | 'blocked-address' // an IP literal or a resolved address that is not public, without allowPrivate
  | 'dns' // name not found
  | 'tls' // certificate refused, handshake failure
  | 'connection' // refused, reset, unreachable, not HTTP, bad compression
  | 'timeout'
  | 'too-large'
  | 'too-many-redirects';

export class StoreHttpError extends Error {
  constructor(
    readonly kind: StoreHttpErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreHttpError';
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials, dropped once a redirect leaves the original origin. */
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization', 'x-shopify-access-token'];
const KIB = 1024;
const MIB = 1024 * KIB;
const decimal = (n: number) => n.toLocaleString('fr-FR', { maximumFractionDigits: 1 });
const size = (n: number) =>
  n >= MIB ? `${decimal(n / MIB)} Mio` : n >= KIB ? `${decimal(n / KIB)} Kio` : `${n} octets`;
const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

const COMPATIBLE = ipaddr.IPv6.parse('::'); // ::/96, IPv4-compatible IPv6 (deprecated): 'unicast' to ipaddr

/** 'unicast' is ipaddr's only public range; IPv4-mapped IPv6 is judged as the IPv4 it maps. */
function isPublic(address: string): boolean {
  if (net.isIP(address) === 0 || !ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address);
  return ip.range() === 'unicast' && !(ip instanceof ipaddr.IPv6 && ip.match(COMPATIBLE, 96));
}

function blocked(host: string, address: string): StoreHttpError {
  return new StoreHttpError(
    'blocked-address',
    `Adresse refusée : ${host} désigne une adresse privée ou interne (${address}) ; pour un essai local, ` +
      'l’opérateur du service peut les autoriser avec STORE_ALLOW_PRIVATE=1',
  );
}

const invalid = (why: string) => new StoreHttpError('invalid-address', `Adresse invalide : ${why}`);
const CLEAR = 'Adresse en http:// refusée : la connexion à la boutique doit être chiffrée (https://)';

/** Checks a typed address before anything is fetched (scheme, no user:password@, host, http and IP literals). */
export function checkStoreUrl(url: URL, options: Pick<StoreHttpOptions, 'allowPrivate'>): void {
  const host = bareHost(url);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalid('elle doit commencer par https://');
  if (url.username !== '' || url.password !== '') {
    throw invalid('elle ne doit contenir ni identifiant ni mot de passe (utilisateur:mot-de-passe@)');
  }
  if (host === '') throw invalid('nom de la boutique absent');
  if (options.allowPrivate) return;
  if (url.protocol === 'http:') throw new StoreHttpError('insecure', CLEAR);
  // Node does not call `lookup` for an IP literal: it is checked here (and cannot change).
  if (net.isIP(host) !== 0 && !isPublic(host)) throw blocked(url.hostname, host);
}

const defaultResolve = (hostname: string) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * A `lookup` for net.connect: resolves with `options.resolve`, refuses the name if any of its addresses
 * is not public, and hands the socket the addresses it checked, so nothing is resolved twice.
 */
function checkedLookup(options: StoreHttpOptions): net.LookupFunction {
  const resolve = options.resolve ?? defaultResolve;
  return (host, lookup, done) => {
    const answer = (found: readonly { address: string; family: number }[]) => {
      const family = lookup.family === 'IPv4' ? 4 : lookup.family === 'IPv6' ? 6 : lookup.family;
      const addresses = found.filter((a) => !family || a.family === family).map((a) => ({ ...a }));
      const refused = found.find((a) => !options.allowPrivate && !isPublic(a.address));
      const [first] = addresses;
      if (refused) return done(blocked(host, refused.address), '');
      if (!first) return done(Object.assign(new Error(`introuvable : ${host}`), { code: 'ENOTFOUND' }), '');
      // With `all` (Node >= 20 net's autoSelectFamily, "happy eyeballs"), the callback takes the list.
      if (lookup.all) return done(null, addresses);
      done(null, first.address, first.family);
    };
    Promise.resolve(host)
      .then(resolve)
      .then(answer, (error: NodeJS.ErrnoException) => done(error, ''));
  };
}

/** Extra CAs with Node's own; one context per set, as building one parses every root (~20 ms). */
const contexts = new Map<string, tls.SecureContext>();
function secureContext(ca: StoreHttpOptions['ca']): tls.SecureContext | undefined {
  const extra = ca === undefined ? [] : typeof ca === 'string' ? [ca] : [...ca];
  if (extra.length === 0) return undefined;
  const key = extra.join('\n');
  const context = contexts.get(key) ?? tls.createSecureContext({ ca: [...tls.rootCertificates, ...extra] });
  contexts.set(key, context);
  return context;
}

/** A request's method and body: GET (REST) or POST (a GraphQL query, a token grant). */
export interface StoreRequest {
  readonly method: 'GET' | 'POST';
  readonly body?: Buffer;
  /**
   * Reads a 2xx answer's body as it arrives (a large file read in part: Shopify's bulk result)
   * and returns what to keep of it, bounded by the reader; the download stops when it returns.
   */
  readonly consume?: (body: AsyncIterable<Buffer>, status: number) => Promise<Buffer>;
}
const GET: StoreRequest = { method: 'GET' };

function requestOptions(url: URL, options: StoreHttpOptions, method: StoreRequest['method']) {
  const host = bareHost(url);
  return {
    host,
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    method,
    // A pass's own kept connections, or a fresh connection each time: no proxy, nothing shared
    // between stores.
    agent: options.keptConnections?.agentFor(url) ?? (false as const),
    lookup: checkedLookup(options),
    insecureHTTPParser: false,
    rejectUnauthorized: true,
    servername: net.isIP(host) === 0 ? host : undefined, // SNI and certificate checked on the name
    secureContext: secureContext(options.ca),
  };
}

const certificate = (why: string) => (host: string) => `Certificat TLS invalide pour ${host} : ${why}`;
const unreachable = (why: string) => (host: string) => `Adresse injoignable : ${host} ne répond pas (${why})`;
const unknownAuthority = certificate('autorité de certification inconnue ou chaîne incomplète');
type Reason = readonly [StoreHttpErrorKind, (host: string) => string];
const KNOWN = new Map<string, Reason>(
  Object.entries({
    ENOTFOUND: ['dns', (host) => `Adresse introuvable : le nom ${host} n’existe pas`],
    ENODATA: ['dns', (host) => `Adresse introuvable : le nom ${host} n’existe pas`],
    EAI_AGAIN: [
      'dns',
      (host) => `Adresse introuvable : le nom ${host} n’a pas pu être résolu (DNS indisponible)`,
    ],
    CERT_HAS_EXPIRED: ['tls', certificate('certificat expiré')],
    CERT_NOT_YET_VALID: ['tls', certificate('certificat pas encore valide')],
    DEPTH_ZERO_SELF_SIGNED_CERT: ['tls', certificate('certificat auto-signé')],
    SELF_SIGNED_CERT_IN_CHAIN: ['tls', certificate('certificat auto-signé dans la chaîne')],
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: ['tls', unknownAuthority],
    UNABLE_TO_GET_ISSUER_CERT_LOCALLY: ['tls', unknownAuthority],
    UNABLE_TO_GET_ISSUER_CERT: ['tls', unknownAuthority],
    ERR_TLS_CERT_ALTNAME_INVALID: ['tls', certificate('le certificat est établi pour un autre nom')],
    ECONNREFUSED: ['connection', unreachable('connexion refusée')],
    ECONNRESET: ['connection', unreachable('connexion interrompue')],
    EPIPE: ['connection', unreachable('connexion interrompue')],
    EHOSTUNREACH: ['connection', unreachable('hôte inaccessible')],
    ENETUNREACH: ['connection', unreachable('réseau inaccessible')],
    ETIMEDOUT: ['connection', unreachable('délai de connexion dépassé')],
  } satisfies Record<string, Reason>),
);

/** The kind and message for a Node/OpenSSL error code; they name the host only, never the URL or a header. */
function describe(code: string): Reason {
  const known = KNOWN.get(code);
  if (known) return known;
  if (/^(CERT_|ERR_TLS_)/.test(code)) return ['tls', certificate(`certificat refusé (${code})`)];
  if (/^(EPROTO$|ERR_SSL_)/.test(code)) {
    return ['tls', (host) => `Connexion chiffrée impossible avec ${host} : échec de la négociation TLS`];
  }
  if (/^(Z_|ERR__ERROR|ERR_BROTLI|ERR_ZLIB)/.test(code)) {
    // zlib, brotli
    return ['connection', (host) => `Réponse illisible de ${host} : compression invalide`];
  }
  return ['connection', unreachable(code.startsWith('HPE_') ? 'réponse HTTP invalide' : 'erreur réseau')];
}

function toStoreError(error: unknown, host: string): StoreHttpError {
  if (error instanceof StoreHttpError) return error;
  const first: unknown = error instanceof AggregateError ? error.errors[0] : error; // autoSelectFamily's tries
  const [kind, message] = describe(String((first as { code?: unknown } | undefined)?.code ?? ''));
  return new StoreHttpError(kind, message(host), { cause: error });
}

const DECODERS = new Map<string, () => Transform>([
  ['gzip', () => zlib.createGunzip()],
  ['x-gzip', () => zlib.createGunzip()],
  ['deflate', () => zlib.createInflate()],
  ['br', () => zlib.createBrotliDecompress()],
]);

/** The body, decompressed; both the bytes received and the bytes decompressed are bounded by `max`. */
async function readBody(res: IncomingMessage, max: number, host: string): Promise<Buffer> {
  const tooLarge = () =>
    new StoreHttpError('too-large', `Réponse trop volumineuse : ${host} a renvoyé plus de ${size(max)}`);
  const limit = async function* (source: AsyncIterable<Buffer>) {
    let total = 0;
    for await (const chunk of source) {
      total += chunk.length;
      if (total > max) throw tooLarge();
      yield chunk;
    }
  };
  const chunks: Buffer[] = [];
  const collect = async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of limit(source)) chunks.push(chunk);
  };
  const decoder = DECODERS.get(res.headers['content-encoding']?.trim().toLowerCase() ?? '')?.();
  await (decoder ? pipeline(res, limit, decoder, collect) : pipeline(res, collect));
  return Buffer.concat(chunks);
}

const flatHeaders = (res: IncomingMessage): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]));

/** One exchange; a redirect's body is not read. */
function exchange(
  url: URL,
  request: StoreRequest,
  headers: Record<string, string>,
  options: StoreHttpOptions,
  signal: AbortSignal,
) {
  return new Promise<StoreResponse>((resolve, reject) => {
    const fail = (error: unknown) =>
      reject(signal.aborted ? signal.reason : toStoreError(error, url.hostname));
    const send = url.protocol === 'https:' ? https.request : http.request;
    const req = send({ ...requestOptions(url, options, request.method), headers, signal }, (res) => {
      const respond = (body: Buffer) => {
        const date = res.headers.date === undefined ? undefined : new Date(res.headers.date);
        const valid = date && Number.isFinite(date.getTime()) ? date : undefined;
        resolve({ status: res.statusCode ?? 0, headers: flatHeaders(res), body, url, date: valid });
      };
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status) && res.headers.location !== undefined) {
        respond(Buffer.alloc(0));
        req.destroy();
      } else if (request.consume && status >= 200 && status < 300) {
        request.consume(res, status).then((kept) => (respond(kept), req.destroy()), fail);
      } else readBody(res, options.maxBodyBytes ?? 16 * MIB, url.hostname).then(respond, fail);
    });
    req.on('error', fail);
    req.end(request.body);
  });
}

function nextHop(response: StoreResponse, options: StoreHttpOptions, hop: number): URL | undefined {
  const location = response.headers.location;
  if (!REDIRECTS.has(response.status) || location === undefined) return undefined;
  const host = response.url.hostname;
  const max = options.maxRedirects ?? 5;
  if (hop >= max) {
    throw new StoreHttpError(
      'too-many-redirects',
      `Trop de redirections : ${host} redirige plus de ${max} fois`,
    );
  }
  let next: URL;
  try {
    next = new URL(location, response.url);
  } catch (cause) {
    throw new StoreHttpError('invalid-address', `Redirection invalide depuis ${host}`, { cause });
  }
  if (response.url.protocol === 'https:' && next.protocol === 'http:' && !options.allowPrivate) {
    throw new StoreHttpError(
      'insecure',
      `Redirection refusée : ${host} renvoie vers une adresse non chiffrée (http://)`,
    );
  }
  return next;
}

/**
 * GET url with the given headers. Follows redirects (301, 302, 303, 307, 308) up to maxRedirects, each hop
 * checked like the first; credentials (authorization, cookie) are dropped for good once a redirect leaves
 * the original origin; https→http is refused unless allowPrivate. Non-2xx statuses are answers, not errors.
 * `signal` aborts the request (rejecting with its reason).
 */
export function storeGet(
  url: URL,
  headers: Readonly<Record<string, string>>,
  options: StoreHttpOptions,
  signal?: AbortSignal,
): Promise<StoreResponse> {
  return storeRequest(url, GET, headers, options, signal);
}

/**
 * storeGet for any request: a POST's body is sent with the length it has, and a redirect answering
 * a POST is returned as it is, not followed (a body and its credentials never go to another place).
 */
export async function storeRequest(
  url: URL,
  request: StoreRequest,
  headers: Readonly<Record<string, string>>,
  options: StoreHttpOptions,
  signal?: AbortSignal,
): Promise<StoreResponse> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  const late = new StoreHttpError('timeout', `La boutique n’a pas répondu en ${decimal(timeoutMs / 1000)} s`);
  const timer = setTimeout(() => controller.abort(late), timeoutMs);
  signal?.addEventListener('abort', onAbort, { once: true });
  const lowerCased = Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]);
  const sent: Record<string, string> = {
    ...Object.fromEntries(lowerCased),
    // A body read in part is read as sent (a byte range of a compressed one means nothing).
    'accept-encoding': request.consume ? 'identity' : 'gzip, deflate, br',
    ...(request.body === undefined ? {} : { 'content-length': String(request.body.length) }),
  };
  try {
    if (signal?.aborted) throw signal.reason;
    let current = new URL(url.href);
    for (let hop = 0; ; hop++) {
      checkStoreUrl(current, options);
      controller.signal.throwIfAborted();
      const response = await exchange(current, request, sent, options, controller.signal);
      const next = request.method === 'GET' ? nextHop(response, options, hop) : undefined;
      if (!next) return response;
      if (next.origin !== url.origin) for (const name of CREDENTIALS) delete sent[name];
      current = next;
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
