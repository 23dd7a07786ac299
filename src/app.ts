// buildApp(config, deps) returns the server without listening (tests call it in-process too).
import crypto from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { AppError } from './errors.js';
import { SqlReportEngine, type ReportEngine } from './metrics/engine.js';
import { loadTimeZones } from './metrics/time-zones.js';
import { MemoryAuthFailureCounter, type AuthFailureCounter } from './api/auth-failures.js';
import { sendError } from './api/error-response.js';
import { readOnlyApi, reportsApi } from './api/reports-api.js';
import { MemoryResponseCache, type ResponseCache } from './api/response-cache.js';

export interface AppDeps {
  readonly db: Database;
  readonly engine?: ReportEngine;
  readonly cache?: ResponseCache;
  readonly authFailures?: AuthFailureCounter;
  readonly logger?: boolean;
}

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger === false ? false : { level: config.logLevel },
    genReqId: () => crypto.randomUUID(),
    requestTimeout: 60_000,
    connectionTimeout: 0,
    keepAliveTimeout: 5_000,
    bodyLimit: 64 * 1024,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
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
  app.setNotFoundHandler((request, reply) =>
    sendError(
      new AppError('NOT_FOUND', `Chemin inconnu : ${request.method} ${request.url.split('?')[0]}`),
      request,
      reply,
    ),
  );

  let zones: Promise<ReadonlySet<string>> | undefined;
  const timeZones = (): Promise<ReadonlySet<string>> => {
    zones ??= loadTimeZones(deps.db).catch((error: unknown) => {
      zones = undefined; // try again on the next request
      throw error;
    });
    return zones;
  };
  await app.register(reportsApi, {
    config,
    db: deps.db,
    engine: deps.engine ?? new SqlReportEngine(deps.db),
    cache: deps.cache ?? new MemoryResponseCache(),
    authFailures: deps.authFailures ?? new MemoryAuthFailureCounter(config.rateLimitWindowS),
    timeZones,
  });
  await app.register(readOnlyApi);
  return app;
}
