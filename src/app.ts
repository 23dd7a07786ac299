// buildApp(config, deps) returns the server without listening (tests call it in-process too).
import crypto from 'node:crypto';
import path from 'node:path';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import cors from '@fastify/cors';
import helmet from 'helmet';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { appError, AppError, databaseMomentarilyOut, ERROR_KINDS, type ErrorCode } from './errors.js';
import type { ReportEngine } from './metrics/engine.js';
import { reportEngineFor } from './metrics/report-engine.js';
import { ColumnarReportEngine } from './metrics/columnar/columnar-engine.js';
import { ColdStart } from './metrics/columnar/cold-start.js';
import { LimitedReportEngine } from './metrics/limited-engine.js';
import { ReportSlots } from './limits/report-slots.js';
import { AnswerBudget } from './limits/answer-budget.js';
import { loadTimeZones, savedTimeZones, TIME_ZONES_FILE, type TimeZones } from './metrics/time-zones.js';
import { pgliteVersion } from './db/embedded.js';
import { errorBody, sendError } from './api/error-response.js';
import { reportsApi } from './api/reports-api.js';
import { openApi } from './api/openapi.js';
import { healthRoutes } from './api/health.js';
import { instrumentation } from './api/instrumentation.js';
import { instanceHeader } from './api/instance-header.js';
import { LazyCompilers } from './api/lazy-compilers.js';
import { webApp, webAssets } from './web/web-app.js';
import { importExamples } from './web/import-examples.js';
import { notFoundPage } from './web/not-found.js';
import { MemoryResponseCache, RedisResponseCache, type ResponseCache } from './api/response-cache.js';
import { connectRedis, redisFallbackWarning } from './limits/redis.js';
import { loggerOptions, stdoutLines, type LogDestination } from './logging.js';
import { storeWebhooks } from './api/store-webhooks.js';
import { storeSyncSetup } from './ingest/connectors/registry.js';
import { StoreSyncWorker } from './ingest/connectors/worker.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/**
 * At most this long a start waits for the saved snapshots' read-back before it listens (issue 28):
 * about 0.3 s a million orders on a quiet 2-core machine; a file slower than this is read on. Well
 * under Fastify's 10 s for an onReady hook, past which the server would not start at all.
 */
const READ_BACK_WAIT_MS = 5_000;
/** At most this long of warm-up questions on the snapshot read back, before listening (issue 28). */
const WARM_UP_MS = 2_000;

export interface AppDeps {
  readonly db: Database;
  readonly engine?: ReportEngine;
  readonly cache?: ResponseCache;
  /** false: no logs; a destination: JSON lines there instead of stdout (tests capture them). */
  readonly logger?: boolean | LogDestination;
  /** Certificates the store connector trusts besides the usual ones (a test's stand-in store). */
  readonly storeCa?: string | readonly string[];
}

/**
 * One access line per request, when it ends, instead of Fastify's two (issue 9, item 5: logging
 * was a large share of a cached answer's time): what was asked, by whom, the status and the time.
 */
class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

/** Requests Node refuses before Fastify sees them (finding 14): a French JSON answer too (E1). */
function frenchClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) return;
  const code: ErrorCode =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'HEADERS_TOO_LARGE'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'REQUEST_TIMEOUT'
        : 'BAD_REQUEST';
  const message = ERROR_KINDS[code].message();
  const { status } = ERROR_KINDS[code];
  const reason = STATUS_CODES[status] ?? 'Error';
  const body = errorBody(message, code);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>;

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  // Issue 28: the routes' schemas compiled on first use or once listening, not before.
  const compilers = new LazyCompilers();
  const app = Fastify({
    // Secrets are never logged, whatever a log call passes in (K2, src/logging.ts).
    logger:
      deps.logger === false
        ? false
        : loggerOptions(
            config.logLevel,
            typeof deps.logger === 'object' ? deps.logger : stdoutLines,
            config.logFormat,
          ),
    genReqId: () => crypto.randomUUID(),
    logController: new AccessLog(),
    trustProxy: config.trustProxy === false ? false : [...config.trustProxy],
    // A slow or stalled client cannot hold a connection for long.
    requestTimeout: 60_000,
    connectionTimeout: 65_000,
    keepAliveTimeout: 5_000,
    bodyLimit: 64 * 1024,
    frameworkErrors: (error, request, reply) => void sendError(error, request, reply),
    clientErrorHandler: frenchClientError,
    schemaController: {
      compilersFactory: {
        buildValidator: compilers.buildValidator as unknown as CompilersFactory['buildValidator'],
        buildSerializer: compilers.buildSerializer as unknown as CompilersFactory['buildSerializer'],
      },
    },
  });
  // Requests under way (their socket's answer not yet finished or closed): the schemas are
  // compiled in the background only while there are none, and while the start's snapshots are not
  // being prepared (below): a starting server's first build waited a quarter of a second behind
  // them, statement after statement (issue 28). A request compiles what it needs itself.
  let underWay = 0;
  let preparing = (): boolean => false;
  app.addHook('onRequest', async (_request, reply) => {
    underWay++;
    reply.raw.once('close', () => underWay--);
  });
  app.addHook('onListen', async () =>
    compilers.compileRest(
      (err: unknown) => app.log.error({ err }, 'route schema failed to compile'),
      () => underWay > 0 || preparing(),
    ),
  );
  // Security headers on every answer (finding 11): scripts and styles from this origin only, no
  // inline script, no framing, no sniffing, the referrer kept within the site (the organization
  // switch returns to the page it was sent from). HSTS only on an HTTPS request: sent over plain
  // HTTP it would lock a local install out.
  const securityHeaders = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        scriptSrcAttr: ["'none'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
    strictTransportSecurity: false,
    crossOriginResourcePolicy: false, // the API is read cross-origin by browsers (B1)
  });
  // Built once: @fastify/helmet rebuilt this middleware, CSP parsing included, on every request
  // (issue 9, item 5).
  app.addHook('onRequest', (request, reply, done) => securityHeaders(request.raw, reply.raw, () => done()));
  app.addHook('onRequest', async (request, reply) => {
    if (request.protocol === 'https')
      reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // B2: before any body is read, whatever the method (TRACE, PROPFIND…) or content type.
    if (request.url.startsWith('/api/') && !READ_METHODS.has(request.method)) {
      reply.header('allow', 'GET, HEAD, OPTIONS');
      throw appError('METHOD_NOT_ALLOWED', request.method);
    }
  });
  await app.register(cors, {
    origin: '*', // B1: the API accepts calls from browsers; the key, not the origin, authenticates
    methods: ['GET', 'HEAD', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    exposedHeaders: [
      'Retry-After',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Rows-Truncated',
      'X-Request-Id',
      'X-Instance',
    ],
    strictPreflight: false,
    optionsSuccessStatus: 204,
    maxAge: 600,
  });
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    // A person's browser gets a page; API clients (and everything under /api/) get JSON (E2).
    if (!path.startsWith('/api/') && (request.headers.accept ?? '').includes('text/html')) {
      return reply.code(404).type('text/html; charset=utf-8').send(notFoundPage(path));
    }
    return sendError(new AppError('NOT_FOUND', `Chemin inconnu : ${request.method} ${path}`), request, reply);
  });

  let zones: Promise<TimeZones> | undefined;
  // Issue 28: an embedded database's list is kept in its DATA_DIR (savedTimeZones).
  const loadZones = (): Promise<TimeZones> =>
    deps.db.engine === 'embedded' && config.databaseUrl === undefined
      ? savedTimeZones(deps.db, path.join(config.dataDir, TIME_ZONES_FILE), pgliteVersion())
      : loadTimeZones(deps.db);
  const timeZones = (): Promise<TimeZones> => {
    zones ??= loadZones().catch((error: unknown) => {
      zones = undefined; // try again on the next request
      throw error;
    });
    return zones;
  };
  const redis = config.redisUrl === undefined ? undefined : await connectRedis(config.redisUrl, app.log);
  if (redis) app.addHook('onClose', async () => void redis.disconnect());
  const cacheFallback = redisFallbackWarning(app.log, 'cache local');
  // Issue 9: the columnar engine unless REPORT_ENGINE=sql; the API and the Revenue page share it (S3).
  const computing =
    deps.engine ??
    reportEngineFor(config, deps.db, {
      onEvent: (event) =>
        event.event === 'failed'
          ? app.log.warn({ err: event.error, organizationId: event.organizationId }, 'report snapshot failed')
          : event.event === 'updated' // issue 19: one a change, many an hour
            ? app.log.debug(event, 'report snapshot')
            : app.log.info(event, 'report snapshot'),
    });
  app.addHook('onClose', async () => computing.close?.());
  // Issue 28: snapshots prepared in the background, at start and after large writes. Started
  // here, not once the server is ready: the saved files are read back while the routes and their
  // schemas are set up, so that the first report asked when the server listens finds them ready.
  if (computing instanceof ColumnarReportEngine && config.reportWarmIntervalMs > 0) {
    const cold = new ColdStart(deps.db, computing, {
      intervalMs: config.reportWarmIntervalMs,
      memoryBudgetBytes: config.reportMemoryMb * 1024 * 1024,
      heldOnly: config.reportWarmScope === 'held',
      onError: (err: unknown) => app.log.warn({ err }, 'report snapshot preparation failed'),
    });
    cold.start();
    preparing = () => cold.preparing || computing.buildsUnderWay;
    // Listening waits for the saved files' read-back (bounded), not for any build.
    // Then the scan's loops warmed on what was read back (bounded), for the first report's sake.
    app.addHook('onReady', async () => {
      const started = performance.now();
      await cold.savedFilesRead(READ_BACK_WAIT_MS);
      await computing
        .warmUp(Math.min(WARM_UP_MS, READ_BACK_WAIT_MS - (performance.now() - started)))
        .catch((err: unknown) => app.log.warn({ err }, 'report warm-up failed'));
    });
    app.addHook('onClose', async () => cold.stop());
    // The time zones too (every report checks its zone among them): pg_timezone_names reads every
    // zone's rules, a few hundred ms the first time, seconds on PGlite under load, which the first
    // report waited for after the read-back (issue 28).
    void timeZones().catch(() => undefined);
  }
  // Finding 6: computations behind slots, per organization and overall; past them, 503 busy.
  const total = config.reportConcurrency || (deps.db.engine === 'embedded' ? 2 : 8);
  // Issue 29: each organization queues up to 4 × its share behind itself; the queue as a whole
  // keeps 4 × the slots beyond one organization's, for the others.
  const perOrganization = config.reportConcurrencyPerOrg || Math.max(1, Math.floor(total / 2));
  const slots = new ReportSlots({
    total,
    perOrganization,

    maxQueued: 4 * total + 4 * perOrganization,
    maxWaitMs: config.reportQueueWaitMs,
  });
  const engine = new LimitedReportEngine(computing, slots);
  app.decorate('reportEngine', engine);
  // Issue 18, finding 2: the bytes of answers being sent, bounded; the cache sized in bytes.
  const answerBytes = config.answerMemoryMb * 1024 ** 2;
  const answers = new AnswerBudget({ totalBytes: answerBytes, perOrganizationBytes: answerBytes / 2 });
  const cacheLimits = {
    maxBytes: config.responseCacheMb * 1024 ** 2,
    maxEntryBytes: config.responseCacheEntryMb * 1024 ** 2,
  };
  await app.register(instanceHeader, { name: config.instanceName });
  await app.register(instrumentation, {
    metricsPort: config.metricsPort,
    metricsHost: config.metricsHost,
    db: deps.db,
    computing,
    slots,
    answers,
  });
  await openApi(app); // on the root, before the routes it describes: it collects them as they are added
  await app.register(reportsApi, {
    config,
    db: deps.db,
    engine,
    cache:
      deps.cache ??
      (redis
        ? new RedisResponseCache(redis, cacheFallback, cacheLimits)
        : new MemoryResponseCache(cacheLimits)),
    answers,
    redis,
    timeZones,
  });
  await app.register(healthRoutes, { db: deps.db, redis });
  // Issue 11: this instance's store sync worker (none with STORE_SYNC_WORKERS=0), started once
  // the server is ready, stopped (its passes at their next page) when it closes.
  const setup = storeSyncSetup(config, deps.storeCa);
  const worker =
    config.storeSyncWorkers > 0
      ? new StoreSyncWorker(
          deps.db,
          setup.connectors,
          setup.settings,
          {
            passEnded: (event) => app.log.info(event, 'store sync pass'),
            // Looking for due stores while our database is busy or away is tried again at the next
            // poll: a warning, not an error.
            failed: (error, connectionId) =>
              databaseMomentarilyOut(error)
                ? app.log.warn(
                    { code: error.code, connectionId },
                    'store sync waits: database busy or unreachable',
                  )
                : app.log.error({ err: error, connectionId }, 'store sync failed'),
          },
          { concurrency: config.storeSyncWorkers, pollMs: config.storeSyncPollMs },
        )
      : undefined;
  if (worker) {
    app.addHook('onReady', async () => worker.start());
    app.addHook('onClose', async () => worker.close());
  }
  const stores = { setup, kick: () => worker?.kick(), publicUrl: config.publicUrl };
  await app.register(storeWebhooks, { db: deps.db, setup, kick: stores.kick });
  await app.register(webAssets);
  await app.register(importExamples);
  await app.register(webApp, { config, db: deps.db, redis, stores });
  app.server.headersTimeout = 10_000;
  // Issue 28: ajv loaded while a starting server waits for its database, not by the first request.
  setImmediate(() => compilers.loadValidators());
  return app;
}
