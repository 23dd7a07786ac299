// buildApp(config, deps) returns the server without listening (tests call it in-process too).
import crypto from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { AppError } from './errors.js';
import type { ReportEngine } from './metrics/engine.js';
import { reportEngineFor } from './metrics/report-engine.js';
import { loadTimeZones } from './metrics/time-zones.js';
import { sendError } from './api/error-response.js';
import { reportsApi } from './api/reports-api.js';
import { healthRoutes } from './api/health.js';
import { webApp, webAssets } from './web/web-app.js';
import { notFoundPage } from './web/not-found.js';
import { MemoryResponseCache, RedisResponseCache, type ResponseCache } from './api/response-cache.js';
import { connectRedis, redisFallbackWarning } from './limits/redis.js';
import { loggerOptions, type LogDestination } from './logging.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface AppDeps {
  readonly db: Database;
  readonly engine?: ReportEngine;
  readonly cache?: ResponseCache;
  /** false: no logs; a destination: JSON lines there instead of stdout (tests capture them). */
  readonly logger?: boolean | LogDestination;
}

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // Secrets are never logged, whatever a log call passes in (K2, src/logging.ts).
    logger:
      deps.logger === false
        ? false
        : loggerOptions(config.logLevel, typeof deps.logger === 'object' ? deps.logger : process.stdout),
    genReqId: () => crypto.randomUUID(),
    trustProxy: config.trustProxy === false ? false : [...config.trustProxy],
    // A slow or stalled client cannot hold a connection for long.
    requestTimeout: 60_000,
    connectionTimeout: 65_000,
    keepAliveTimeout: 5_000,
    bodyLimit: 64 * 1024,
    frameworkErrors: (error, request, reply) => void sendError(error, request, reply),
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // B2: before any body is read, whatever the method (TRACE, PROPFIND…) or content type.
    if (request.url.startsWith('/api/') && !READ_METHODS.has(request.method)) {
      reply.header('allow', 'GET, HEAD, OPTIONS');
      throw new AppError(
        'METHOD_NOT_ALLOWED',
        `Méthode ${request.method} non autorisée : l’API est en lecture seule (GET)`,
      );
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

  let zones: Promise<ReadonlySet<string>> | undefined;
  const timeZones = (): Promise<ReadonlySet<string>> => {
    zones ??= loadTimeZones(deps.db).catch((error: unknown) => {
      zones = undefined; // try again on the next request
      throw error;
    });
    return zones;
  };
  const redis = config.redisUrl === undefined ? undefined : connectRedis(config.redisUrl, app.log);
  if (redis) app.addHook('onClose', async () => void redis.disconnect());
  const cacheFallback = redisFallbackWarning(app.log, 'cache local');
  // Issue 9: the columnar engine unless REPORT_ENGINE=sql; the API and the Revenue page share it (S3).
  const engine =
    deps.engine ??
    reportEngineFor(config, deps.db, (event) =>
      event.event === 'failed'
        ? app.log.warn({ err: event.error, organizationId: event.organizationId }, 'report snapshot failed')
        : app.log.info(event, 'report snapshot'),
    );
  app.decorate('reportEngine', engine);
  await app.register(reportsApi, {
    config,
    db: deps.db,
    engine,
    cache: deps.cache ?? (redis ? new RedisResponseCache(redis, cacheFallback) : new MemoryResponseCache()),
    redis,
    timeZones,
  });
  await app.register(healthRoutes, { db: deps.db, redis });
  await app.register(webAssets);
  await app.register(webApp, { config, db: deps.db, redis });
  app.server.headersTimeout = 10_000;
  return app;
}
