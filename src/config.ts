// The only reader of the environment (STYLE: "Configuration is read once").
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from './config/config-error.js';
import { parseTrustProxy, type TrustedProxies } from './config/trust-proxy.js';
import { secretKeyOf } from './config/secret-key.js';

export { ConfigError } from './config/config-error.js';
export type { TrustedProxies } from './config/trust-proxy.js';

export type LogFormat = 'json' | 'text';

export interface Config {
  readonly port: number;
  readonly host: string;
  /** postgres://… for a PostgreSQL server; undefined for the embedded database in dataDir. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly redisUrl: string | undefined;
  readonly rateLimitMax: number;
  readonly rateLimitWindowS: number;
  readonly authFailureLimit: number;
  readonly demo: boolean;
  /**
   * DEMO_DAYS: the days of orders the demo is made with (730: two years, about 46,000 orders);
   * fewer for a quick start or a test that needs a demo but not its size (issue 28).
   */
  readonly demoDays: number;
  /** Milliseconds a single SQL statement may run before it is cancelled. */
  readonly statementTimeoutMs: number;
  readonly logLevel: string;
  /**
   * LOG_FORMAT: json (one JSON line per event, for a log collector) or text (short lines for a
   * person at a terminal, successful requests left out so that the demo banner stays in sight;
   * issue 30). Default: text with DEMO=1, json otherwise.
   */
  readonly logFormat: LogFormat;
  /**
   * The reverse proxies whose X-Forwarded-For/-Proto entries are believed (client address for R2
   * and the login limit, HTTPS for Secure cookies): false (none), their addresses/CIDRs, or a hop
   * count. Never "everyone" (issue 7, finding 8).
   */
  readonly trustProxy: TrustedProxies;
  /**
   * SECRET_KEY (32 bytes or more): keys the customer hashes (U1). Read from the environment, or on
   * the embedded default from DATA_DIR/secret.key, created on first use. Not enumerable, so that
   * printing or logging the configuration never shows it.
   */
  readonly secretKey: Buffer;
  /** REPORT_ENGINE: columnar (in-memory snapshots, SQL as fallback) or sql only (issue 9). */
  readonly reportEngine: 'columnar' | 'sql';
  /** REPORT_CONCURRENCY: report computations at once (0: 2 embedded, 8 on a server); finding 6. */
  readonly reportConcurrency: number;
  /** REPORT_CONCURRENCY_PER_ORG: of which one organization may hold (0: half of them, at least 1). */
  readonly reportConcurrencyPerOrg: number;
  /** REPORT_QUEUE_WAIT_MS: how long a report waits for a slot before 503 SERVICE_BUSY. */
  readonly reportQueueWaitMs: number;
  /**
   * PAGE_DEADLINE_MS: a web page not answered within this many ms (its database busy, as behind a
   * large import on the embedded database) gets a 503 page with Retry-After instead; 0: none.
   */
  readonly pageDeadlineMs: number;
  /** IMPORT_MAX_BYTES: the largest order file the web application accepts (finding 1). */
  readonly importMaxBytes: number;
  /** REPORT_MEMORY_MB: memory for the columnar engine's snapshots, all organizations together. */
  readonly reportMemoryMb: number;
  /**
   * ANSWER_MEMORY_MB: report answers held by responses being sent, all organizations together
   * (one organization at most half); past it 503 SERVICE_BUSY (issue 18, finding 2).
   */
  readonly answerMemoryMb: number;
  /** RESPONSE_CACHE_MB: the in-process response cache (C1), in bytes of answers. */
  readonly responseCacheMb: number;
  /** RESPONSE_CACHE_ENTRY_MB: the largest answer cached (here and in Redis); larger ones are not. */
  readonly responseCacheEntryMb: number;
  /**
   * REPORT_BUILDING_SQL_MS: while an organization's snapshot builds, how long a report waits for
   * its answer before 503 SNAPSHOT_BUILDING (issue 28); 0: as long as the statement timeout.
   */
  readonly reportBuildingSqlMs: number;
  /**
   * REPORT_WARM_INTERVAL_MS: how often the server looks for organizations whose snapshot is
   * missing or behind a large write, to prepare it in the background (issue 28); 0: never.
   */
  readonly reportWarmIntervalMs: number;
  /**
   * REPORT_WARM_SCOPE (issue 29): `all`, every organization that fits is prepared at start and
   * after its writes (one instance); `held`, only the snapshots this instance already holds are
   * brought up to date (several instances behind a balancer that places organizations).
   */
  readonly reportWarmScope: 'all' | 'held';
  /**
   * REPORT_LARGE_BUILD_ROWS (issue 29): an organization of more rows than this (orders and lines)
   * has its snapshot built from the database in a lane of its own, never ahead of the small ones'.
   */
  readonly reportLargeBuildRows: number;
  /** REPORT_SNAPSHOT_DIR: where the columnar snapshots are saved for the next start (issue 19); undefined: not saved. */
  readonly reportSnapshotDir: string | undefined;
  /** PUBLIC_URL: the address people and stores reach this service at (webhook addresses). */
  readonly publicUrl: string | undefined;
  /**
   * STORE_ALLOW_PRIVATE=1: store addresses may be loopback, private or link-local, and plain
   * http:// (development, a stand-in store); off, a store address can never reach an internal service.
   */
  readonly storeAllowPrivate: boolean;
  /** STORE_SYNC_INTERVAL_S: seconds between two incremental syncs of a connected store. */
  readonly storeSyncIntervalS: number;
  /** STORE_SYNC_WORKERS: stores this instance syncs at once (0: this instance syncs none). */
  readonly storeSyncWorkers: number;
  /** STORE_SYNC_POLL_MS: how often an instance looks for due stores. */
  readonly storeSyncPollMs: number;
  /** STORE_HTTP_TIMEOUT_MS: the longest a store may take to answer one request. */
  readonly storeHttpTimeoutMs: number;
  /** STORE_RETRY_BASE_MS: the first retry delay after a 429, 5xx or network failure (doubling). */
  readonly storeRetryBaseMs: number;
  /** SHOPIFY_API_VERSION: the Admin API version a Shopify store is read with (YYYY-MM). */
  readonly shopifyApiVersion: string;
  /** SHOPIFY_BULK_POLL_MS: how long a sync pass waits between two looks at a running bulk operation. */
  readonly shopifyBulkPollMs: number;
  /** METRICS_PORT: the port of the separate /metrics listener (issue 29); undefined: no listener. */
  readonly metricsPort: number | undefined;
  /** METRICS_HOST: the address the /metrics listener binds (loopback unless set). */
  readonly metricsHost: string;
  /** INSTANCE_NAME: this instance's name in the X-Instance header (issue 29); default host name:port. */
  readonly instanceName: string;
}

/**
 * Issue 19: a quarter of the machine's memory (or of the container's limit), at least 256 MB. The
 * snapshots are typed arrays, outside the JavaScript heap and its limit: 10,000,000 orders of
 * 5,000,000 customers take about 800 MB, within the default of any machine with 4 GB.
 */
function defaultReportMemoryMb(): number {
  const limit = process.constrainedMemory?.() || Infinity;
  const memory = Math.min(os.totalmem(), limit > 0 ? limit : Infinity);
  return Math.max(256, Math.floor(memory / 4 / 1024 / 1024));
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number, max = 1_000_000_000): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new ConfigError(`${name} doit être un entier entre 1 et ${max} (reçu « ${raw} »)`);
  }
  return Number(raw);
}

function nonNegativeInt(env: NodeJS.ProcessEnv, name: string, fallback: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) > max) {
    throw new ConfigError(`${name} doit être un entier entre 0 et ${max} (reçu « ${raw} »)`);
  }
  return Number(raw);
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} doit valoir 1 ou 0 (reçu « ${raw} »)`);
}

function publicUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash) {
    throw new ConfigError(
      `PUBLIC_URL doit être une adresse http(s) sans paramètres (reçu « ${raw.slice(0, 80)} »)`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * Shopify's versions are quarterly (YYYY-01, -04, -07, -10); each is supported for at least a
 * year, so the default moves forward yearly (2026-10: supported until October 2027 at least).
 */
export const DEFAULT_SHOPIFY_API_VERSION = '2026-10';

function shopifyApiVersion(raw: string | undefined): string {
  if (raw === undefined || raw === '') return DEFAULT_SHOPIFY_API_VERSION;
  if (!/^20\d\d-(01|04|07|10)$/.test(raw)) {
    throw new ConfigError(
      `SHOPIFY_API_VERSION doit être une version trimestrielle comme ${DEFAULT_SHOPIFY_API_VERSION} (reçu « ${raw.slice(0, 40)} »)`,
    );
  }
  return raw;
}

function logFormat(raw: string | undefined, demo: boolean): LogFormat {
  if (raw === undefined || raw === '') return demo ? 'text' : 'json';
  if (raw === 'json' || raw === 'text') return raw;
  throw new ConfigError(`LOG_FORMAT doit valoir json ou text (reçu « ${raw.slice(0, 40)} »)`);
}

/** Issue 29: a name for the X-Instance header, printable and short (it is no secret, and no place for one). */
function instanceName(raw: string | undefined, port: number): string {
  if (raw === undefined || raw === '') return `${os.hostname()}:${port}`;
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(raw)) {
    throw new ConfigError(
      `INSTANCE_NAME doit faire 1 à 64 lettres, chiffres, points, tirets ou deux-points (reçu « ${raw.slice(0, 80)} »)`,
    );
  }
  return raw;
}

function reportWarmScope(raw: string | undefined): 'all' | 'held' {
  if (raw === undefined || raw === '' || raw === 'all') return 'all';
  if (raw === 'held') return 'held';
  throw new ConfigError(`REPORT_WARM_SCOPE doit valoir all ou held (reçu « ${raw.slice(0, 80)} »)`);
}

function reportEngine(raw: string | undefined): 'columnar' | 'sql' {
  if (raw === undefined || raw === '' || raw === 'columnar') return 'columnar';
  if (raw === 'sql') return 'sql';
  throw new ConfigError(`REPORT_ENGINE doit valoir columnar ou sql (reçu « ${raw} »)`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL doit commencer par postgres:// ou postgresql://');
  }
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL doit commencer par redis:// ou rediss://');
  }
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const demo = flag(env, 'DEMO', false);
  const secretKey = secretKeyOf(env.SECRET_KEY, databaseUrl === undefined ? dataDir : undefined);
  const port = positiveInt(env, 'PORT', 3000, 65535);
  const metricsPort = env.METRICS_PORT ? positiveInt(env, 'METRICS_PORT', 0, 65535) : undefined;
  if (metricsPort === port)
    throw new ConfigError('METRICS_PORT doit différer de PORT : /metrics ne doit pas être public');
  const config = {
    port,
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    dataDir,
    redisUrl,
    rateLimitMax: positiveInt(env, 'RATE_LIMIT_MAX', 120),
    rateLimitWindowS: positiveInt(env, 'RATE_LIMIT_WINDOW_S', 60, 86_400),
    authFailureLimit: positiveInt(env, 'AUTH_FAILURE_LIMIT', 30),
    demo,
    demoDays: positiveInt(env, 'DEMO_DAYS', 730, 3650),
    statementTimeoutMs: positiveInt(env, 'STATEMENT_TIMEOUT_MS', 30_000),
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: logFormat(env.LOG_FORMAT, demo),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    reportEngine: reportEngine(env.REPORT_ENGINE),
    reportConcurrency: nonNegativeInt(env, 'REPORT_CONCURRENCY', 0, 1000),
    reportConcurrencyPerOrg: nonNegativeInt(env, 'REPORT_CONCURRENCY_PER_ORG', 0, 1000),
    reportQueueWaitMs: nonNegativeInt(env, 'REPORT_QUEUE_WAIT_MS', 2000, 60_000),
    pageDeadlineMs: nonNegativeInt(env, 'PAGE_DEADLINE_MS', 20_000, 60_000),
    importMaxBytes: positiveInt(env, 'IMPORT_MAX_BYTES', 512 * 1024 * 1024, 64 * 1024 ** 3),
    reportMemoryMb: positiveInt(env, 'REPORT_MEMORY_MB', defaultReportMemoryMb(), 1_000_000),
    reportBuildingSqlMs: nonNegativeInt(env, 'REPORT_BUILDING_SQL_MS', 3000, 600_000),
    reportWarmIntervalMs: nonNegativeInt(env, 'REPORT_WARM_INTERVAL_MS', 5000, 3_600_000),
    reportWarmScope: reportWarmScope(env.REPORT_WARM_SCOPE),
    reportLargeBuildRows: positiveInt(env, 'REPORT_LARGE_BUILD_ROWS', 200_000),
    reportSnapshotDir:
      env.REPORT_SNAPSHOT_DIR === 'none'
        ? undefined
        : path.resolve(env.REPORT_SNAPSHOT_DIR || path.join(dataDir, 'report-snapshots')),
    answerMemoryMb: positiveInt(env, 'ANSWER_MEMORY_MB', 256, 1_000_000),
    responseCacheMb: positiveInt(env, 'RESPONSE_CACHE_MB', 256, 1_000_000),
    responseCacheEntryMb: positiveInt(env, 'RESPONSE_CACHE_ENTRY_MB', 64, 1_000_000),
    publicUrl: publicUrl(env.PUBLIC_URL),
    storeAllowPrivate: flag(env, 'STORE_ALLOW_PRIVATE', false),
    storeSyncIntervalS: positiveInt(env, 'STORE_SYNC_INTERVAL_S', 300, 86_400),
    storeSyncWorkers: nonNegativeInt(env, 'STORE_SYNC_WORKERS', 2, 64),
    storeSyncPollMs: positiveInt(env, 'STORE_SYNC_POLL_MS', 2_000, 600_000),
    storeHttpTimeoutMs: positiveInt(env, 'STORE_HTTP_TIMEOUT_MS', 30_000, 600_000),
    storeRetryBaseMs: positiveInt(env, 'STORE_RETRY_BASE_MS', 1_000, 600_000),
    shopifyApiVersion: shopifyApiVersion(env.SHOPIFY_API_VERSION),
    shopifyBulkPollMs: positiveInt(env, 'SHOPIFY_BULK_POLL_MS', 1_000, 60_000),
    metricsPort,
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    instanceName: instanceName(env.INSTANCE_NAME, port),
  };
  Object.defineProperty(config, 'secretKey', { get: secretKey, enumerable: false });
  return Object.freeze(config as Omit<Config, 'secretKey'> as Config);
}
