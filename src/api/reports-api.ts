// The public read-only API (SPEC sections 6–11). Routes are thin: authenticate (api-authentication),
// parse, call the core (runTabularReport), map the result or the error to HTTP.
import type { FastifyInstance, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { FULL_CATALOG, REFERENCE_CATALOG } from '../catalog.js';
import type { Config } from '../config.js';
import type { Queryable } from '../db/database.js';
import { appError, AppError, invalidParameter } from '../errors.js';
import type { ApiCaller } from '../auth/authenticate.js';
import { runTabularReport } from '../domain/tabular-report.js';
import type { ReportEngine } from '../metrics/engine.js';
import type { TimeZones } from '../metrics/time-zones.js';
import {
  parseCatalogScope,
  parseTabularQuery,
  type CatalogScope,
  type Format,
  type RawQuery,
} from '../query/parse.js';
import { sharedCounterStore } from '../limits/rate-limit-store.js';
import { redisFallbackWarning } from '../limits/redis.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { apiAuthentication } from './api-authentication.js';
import { answerFormat } from './negotiation.js';
import {
  CATALOG_RESPONSES,
  CatalogParameters,
  rawQuery,
  schemaView,
  TABULAR_RESPONSES,
  TabularParameters,
} from './schemas.js';
import { CACHE_TTL_S, type ResponseCache } from './response-cache.js';
import type { AnswerBudget } from '../limits/answer-budget.js';
import { sendAnswer } from './send-answer.js';

export interface ReportsApiDeps {
  readonly config: Config;
  readonly db: Queryable;
  readonly engine: ReportEngine;
  readonly cache: ResponseCache;
  /** The bytes of answers being sent (issue 18, finding 2). */
  readonly answers: AnswerBudget;
  /** Shared limits (R3); the instance's own counters when undefined. */
  readonly redis?: Redis;
  readonly timeZones: () => Promise<TimeZones>;
}

/** G1 without `scope`; L9 with `scope=all`. */
const CATALOG_BODIES: Readonly<Record<CatalogScope, string>> = {
  reference: JSON.stringify(REFERENCE_CATALOG),
  all: JSON.stringify(FULL_CATALOG),
};

const CONTENT_TYPES: Readonly<Record<Format, string>> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/** A query the schema refused though the parse step accepted it: the parameter at fault, in French. */
function schemaRefusal(errors: readonly FastifySchemaValidationError[]) {
  const first = errors[0];
  const name = first?.instancePath.split('/')[1]?.replace(/~1/g, '/').replace(/~0/g, '~') ?? '';
  return invalidParameter(name || 'requête', '', `refusé par le schéma de l’API : ${first?.message ?? ''}`);
}

export async function reportsApi(app: FastifyInstance, deps: ReportsApiDeps): Promise<void> {
  const { config } = deps;
  const redisFallback = redisFallbackWarning(app.log, 'compteurs locaux');
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler', // after authentication: the limit is per key (R1)
    max: config.rateLimitMax,
    timeWindow: config.rateLimitWindowS * 1000,
    ...(deps.redis ? { store: sharedCounterStore(deps.redis, redisFallback) } : {}),
    keyGenerator: (request) => `key:${request.caller?.keyId ?? request.ip}`,
    errorResponseBuilder: (_request, context) =>
      appError(
        'RATE_LIMITED',
        context.max,
        config.rateLimitWindowS,
        Math.max(1, Math.ceil(context.ttl / 1000)),
      ),
  });
  // Authentication runs first (C1), behind the failed-authentication limit (R2).
  const authenticate = apiAuthentication(app, { db: deps.db, authFailureLimit: config.authFailureLimit });
  const callerOf = (request: { caller?: ApiCaller }): ApiCaller => {
    if (!request.caller) throw new AppError('INTERNAL', 'route de l’API sans authentification');
    return request.caller;
  };

  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get(
    '/api/reports/catalog',
    {
      onRequest: authenticate,
      schema: { querystring: CatalogParameters },
      attachValidation: true,
      config: {
        docResponses: CATALOG_RESPONSES,
        docOperation: {
          summary:
            "The dimensions and metrics, with their French labels (and, with scope=all, the order lines' ones and each one's grain)",
          operationId: 'getCatalog',
        },
      },
    },
    async (request, reply) => {
      // The parse step's French message (E1) for a `scope` the schema refused too.
      const scope = parseCatalogScope(rawQuery(request.query));
      if (request.validationError) throw schemaRefusal(request.validationError.validation);
      return reply
        .header('cache-control', `private, max-age=${CACHE_TTL_S}`)
        .type('application/json; charset=utf-8')
        .send(CATALOG_BODIES[scope]);
    },
  );

  // The schema reads the query with its lists split (schemaView); the parse step reads it as it came.
  const rawQueries = new WeakMap<FastifyRequest, RawQuery>();
  typed.get(
    '/api/reports/tabular',
    {
      onRequest: authenticate,
      schema: { querystring: TabularParameters },
      attachValidation: true,
      preValidation: async (request) => {
        const raw = rawQuery(request.query);
        rawQueries.set(request, raw);
        Object.assign(request, { query: schemaView(raw) });
      },
      config: {
        docResponses: TABULAR_RESPONSES,
        docOperation: {
          summary: 'The sales metrics table',
          operationId: 'getTabularReport',
          description:
            'Metrics per combination of dimension values over a period of UTC days, sorted, with filters, weekly to yearly buckets, paging and CSV.',
        },
      },
    },
    async (request, reply) => {
      const { organization, dataVersion } = callerOf(request);
      const raw = rawQueries.get(request) ?? {};
      const zones = await deps.timeZones();
      // The parse step's French message for whatever the schema refused (E1)…
      const query = parseTabularQuery(raw, { isTimeZone: (name) => zones.has(name), calendarEdges: zones });
      const format = answerFormat(raw, request.headers.accept);
      // …and a refusal of the schema's own should the two ever disagree (they are tested not to).
      if (request.validationError) throw schemaRefusal(request.validationError.validation);
      // A client that goes away cancels a computation and frees its slot (finding 6).
      const whileComputing = () => {
        const gone = new AbortController();
        const onClose = () => {
          if (!reply.raw.writableFinished)
            gone.abort(new AppError('SERVICE_BUSY', 'Requête abandonnée par le client'));
        };
        reply.raw.once('close', onClose);
        return { signal: gone.signal, done: () => reply.raw.off('close', onClose) };
      };
      const answer = await runTabularReport(
        { engine: deps.engine, cache: deps.cache, room: deps.answers },
        organization,
        query,
        format,
        whileComputing,
        dataVersion,
      );
      // Counted until the client has read it all or gone (finding 2); past the budget, 503 busy.
      const release = deps.answers.hold(organization.id, answer.body);
      reply.header('cache-control', `private, max-age=${CACHE_TTL_S}`).header('vary', 'Accept');
      if (answer.truncated) reply.header('x-rows-truncated', 'true'); // T6, O1
      return sendAnswer(reply.type(CONTENT_TYPES[format]), organization.id, answer.body, release);
    },
  );
}
