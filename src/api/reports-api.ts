// The public read-only API (SPEC sections 6–11). Routes are thin: check input, call the core, map
// the result or the error to HTTP.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import crypto from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import { LRUCache } from 'lru-cache';
import { DIMENSIONS, METRICS } from '../catalog.js';
import type { Config } from '../config.js';
import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { authenticateApiKey, LastUsedRecorder, type ApiCaller } from '../auth/authenticate.js';
import { batchedKeyLookup } from '../auth/key-lookup.js';
import type { ReportEngine } from '../metrics/engine.js';
import { parseTabularQuery, type RawQuery, type TabularQuery } from '../query/parse.js';
import { planReport } from '../query/plan.js';
import type { Redis } from 'ioredis';
import { KeyedLock } from '../limits/keyed-lock.js';
import { sharedCounterStore } from '../limits/rate-limit-store.js';
import { redisFallbackWarning } from '../limits/redis.js';
import { CACHE_TTL_S, type ResponseCache } from './response-cache.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: ApiCaller;
  }
}

export interface ReportsApiDeps {
  readonly config: Config;
  readonly db: Queryable;
  readonly engine: ReportEngine;
  readonly cache: ResponseCache;
  /** Shared limits (R3); the instance's own counters when undefined. */
  readonly redis?: Redis;
  readonly timeZones: () => Promise<ReadonlySet<string>>;
}

const AUTH_FAILURE_WINDOW_MS = 60_000; // R2: the count is configurable, the window is not
const CATALOG_BODY = JSON.stringify({ dimensions: DIMENSIONS, metrics: METRICS }); // G1

function limitHeaders(reply: FastifyReply, limit: number, remaining: number, resetS: number): void {
  reply.header('x-ratelimit-limit', String(limit));
  reply.header('x-ratelimit-remaining', String(Math.max(0, remaining)));
  reply.header('x-ratelimit-reset', String(resetS));
}

function cacheKey(organizationId: string, caller: ApiCaller, q: TabularQuery): string {
  // C1 plus the Report settings, so that a settings change is never hidden by a cached answer.
  const { excludedStatuses, deductions } = caller.organization.settings;
  return JSON.stringify([
    organizationId,
    q.dimensions,
    q.metrics,
    q.from,
    q.to,
    q.timezone,
    q.limit,
    excludedStatuses,
    deductions,
  ]);
}

export async function reportsApi(app: FastifyInstance, deps: ReportsApiDeps): Promise<void> {
  const { config } = deps;
  const lookUpKey = batchedKeyLookup(deps.db); // K4: one fresh statement per batch of requests
  const lastUsed = new LastUsedRecorder(deps.db, (error) =>
    app.log.warn({ err: error }, 'last-used update failed'),
  );

  const redisFallback = redisFallbackWarning(app.log, 'compteurs locaux');
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler', // after authentication: the limit is per key (R1)
    max: config.rateLimitMax,
    timeWindow: config.rateLimitWindowS * 1000,
    ...(deps.redis ? { store: sharedCounterStore(deps.redis, redisFallback) } : {}),
    keyGenerator: (request) => `key:${request.caller?.keyId ?? request.ip}`,
    errorResponseBuilder: (_request, context) =>
      new AppError(
        'RATE_LIMITED',
        `Trop de requêtes : ${context.max} requêtes par ${config.rateLimitWindowS} s au plus pour une clé, réessayez dans ${Math.max(1, Math.ceil(context.ttl / 1000))} s`,
      ),
  });
  // R2: failed authentications per client address in 60 s windows, counted on failure only.
  const authFailures = app.createRateLimit({
    max: config.authFailureLimit,
    timeWindow: AUTH_FAILURE_WINDOW_MS,
    keyGenerator: (request) => `auth-failures:${request.ip}`,
  });
  // Parallel guesses would all pass the check before any failure is counted: keys this instance
  // has not seen succeed lately are looked up one at a time per address.
  const recentlyValid = new LRUCache<string, true>({ max: 10_000, ttl: 10 * 60_000 });
  const perAddress = new KeyedLock();

  // Authentication runs first (C1), behind the failed-authentication limit (R2).
  async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const fingerprint = crypto
      .createHash('sha256')
      .update(request.headers.authorization ?? '')
      .digest('hex');
    if (recentlyValid.has(fingerprint)) await checkAndAuthenticate(request, reply);
    else await perAddress.run(request.ip, () => checkAndAuthenticate(request, reply));
    recentlyValid.set(fingerprint, true);
    lastUsed.record(request.caller as ApiCaller);
  }

  async function checkAndAuthenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const failures = await authFailures(request, { increment: false });
    if (!failures.isAllowed && failures.remaining === 0) {
      const resetS = Math.max(1, failures.ttlInSeconds);
      limitHeaders(reply, config.authFailureLimit, 0, resetS);
      reply.header('retry-after', String(resetS));
      throw new AppError(
        'AUTH_FAILURES_LIMITED',
        `Trop d’échecs d’authentification depuis cette adresse : réessayez dans ${resetS} s`,
      );
    }
    try {
      request.caller = await authenticateApiKey(lookUpKey, request.headers.authorization);
    } catch (error) {
      if (error instanceof AppError && error.code === 'UNAUTHENTICATED') await authFailures(request);
      throw error;
    }
  }

  app.get('/api/reports/catalog', { onRequest: authenticate }, async (_request, reply) =>
    reply
      .header('cache-control', `private, max-age=${CACHE_TTL_S}`)
      .type('application/json; charset=utf-8')
      .send(CATALOG_BODY),
  );

  app.get('/api/reports/tabular', { onRequest: authenticate }, async (request, reply) => {
    const caller = request.caller as ApiCaller;
    const zones = await deps.timeZones();
    const query = parseTabularQuery(request.query as RawQuery, { isTimeZone: (name) => zones.has(name) });
    const key = cacheKey(caller.organization.id, caller, query);
    let answer = await deps.cache.get(key);
    if (!answer) {
      // A client that goes away cancels its computation and frees its slot (finding 6).
      const gone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished)
          gone.abort(new AppError('SERVICE_BUSY', 'Requête abandonnée par le client'));
      };
      reply.raw.once('close', onClose);
      const { rows, truncated } = await deps.engine
        .run(planReport(query, caller.organization), gone.signal)
        .finally(() => reply.raw.off('close', onClose));
      const body = {
        dimensions: query.dimensions,
        metrics: query.metrics,
        from: query.from,
        to: query.to,
        timezone: query.timezone,
        rows,
        rowCount: rows.length,
      };
      answer = { body: JSON.stringify(body), truncated };
      await deps.cache.set(key, answer);
    }
    reply.header('cache-control', `private, max-age=${CACHE_TTL_S}`);
    if (answer.truncated) reply.header('x-rows-truncated', 'true'); // T6
    return reply.type('application/json; charset=utf-8').send(answer.body);
  });
}
