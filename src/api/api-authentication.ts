// Who is calling the API (K3, K4, K5), behind the failed-authentication limit per address (R2).
// Every request looks its key up afresh; the limit counts only failures, and keys this instance
// has not seen succeed lately are looked up one at a time per address (src/limits/attempt-limit).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import crypto from 'node:crypto';
import { finished } from 'node:stream';
import { LRUCache } from 'lru-cache';
import type { Queryable } from '../db/database.js';
import { appError, AppError } from '../errors.js';
import { authenticateApiKey, LastUsedRecorder, type ApiCaller } from '../auth/authenticate.js';
import { batchedKeyLookup } from '../auth/key-lookup.js';
import { AttemptLimit } from '../limits/attempt-limit.js';
import { UNKNOWN_ORGANIZATION, workUnderWay } from '../limits/organization-turns.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: ApiCaller;
  }
}

const AUTH_FAILURE_WINDOW_MS = 60_000; // R2: the count is configurable, the window is not

function limitHeaders(reply: FastifyReply, limit: number, remaining: number, resetS: number): void {
  reply.header('x-ratelimit-limit', String(limit));
  reply.header('x-ratelimit-remaining', String(Math.max(0, remaining)));
  reply.header('x-ratelimit-reset', String(resetS));
}

/** The onRequest hook of every API route: sets request.caller, or throws the AppError to answer. */
export function apiAuthentication(
  app: FastifyInstance,
  deps: { readonly db: Queryable; readonly authFailureLimit: number },
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const lookUpKey = batchedKeyLookup(deps.db); // K4: one fresh statement per batch of requests
  const lastUsed = new LastUsedRecorder(deps.db, (error) =>
    app.log.warn({ err: error }, 'last-used update failed'),
  );
  const failures = new AttemptLimit(
    app.createRateLimit({
      max: deps.authFailureLimit,
      timeWindow: AUTH_FAILURE_WINDOW_MS,
      keyGenerator: (request) => `auth-failures:${request.ip}`,
    }),
  );
  // Keys seen to succeed lately skip their address's queue: they will not count as failures.
  const recentlyValid = new LRUCache<string, true>({ max: 10_000, ttl: 10 * 60_000 });

  return async (request, reply) => {
    // Issue 29, item 2: from its first byte, a request is work under way that shortens the other
    // organizations' slices (src/limits/time-slice.ts): its organization's once known, until
    // its response is over; before that, of an organization not known yet.
    const beforeItsOrganization = workUnderWay(UNKNOWN_ORGANIZATION);
    try {
      await authenticate(request, reply);
    } finally {
      beforeItsOrganization();
    }
    if (!request.caller) return;
    finished(reply.raw, workUnderWay(request.caller.organization.id));
  };

  async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const fingerprint = crypto
      .createHash('sha256')
      .update(header ?? '')
      .digest('hex');
    const attempted = await failures.run(
      request,
      () =>
        authenticateApiKey(lookUpKey, header).then(
          (caller) => ({ caller }),
          (error: unknown) => {
            if (error instanceof AppError && error.code === 'UNAUTHENTICATED') return { refused: error };
            throw error;
          },
        ),
      (outcome) => 'refused' in outcome,
      { serialize: !recentlyValid.has(fingerprint) },
    );
    if ('limitedForMs' in attempted) {
      const resetS = Math.max(1, Math.ceil(attempted.limitedForMs / 1000));
      limitHeaders(reply, deps.authFailureLimit, 0, resetS);
      reply.header('retry-after', String(resetS));
      throw appError('AUTH_FAILURES_LIMITED', resetS);
    }
    const { outcome } = attempted;
    if ('refused' in outcome) throw outcome.refused;
    recentlyValid.set(fingerprint, true);
    request.caller = outcome.caller;
    lastUsed.record(outcome.caller);
  }
}
