// The one place where errors become HTTP responses (E1, E2, E3). Internal detail never reaches a
// client; every body carries the `code` of its kind in the catalogue (src/errors.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, ERROR_KINDS, errorFields, isAppError, type ErrorCode } from '../errors.js';
import { countRefusal } from '../observability/metrics.js';

export const RETRY_AFTER_UNAVAILABLE_S = 5;

/** Fastify's own refusals, by its error code: our kind and a French message. */
const FRAMEWORK_ERRORS: Record<string, readonly [ErrorCode, string]> = {
  FST_ERR_BAD_URL: ['BAD_REQUEST', 'URL invalide : encodage incorrect dans le chemin'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['UNSUPPORTED_MEDIA_TYPE', ERROR_KINDS.UNSUPPORTED_MEDIA_TYPE.message()],
  FST_ERR_CTP_BODY_TOO_LARGE: ['PAYLOAD_TOO_LARGE', ERROR_KINDS.PAYLOAD_TOO_LARGE.message()],
  FST_ERR_CTP_INVALID_JSON_BODY: ['BAD_REQUEST', 'Corps JSON invalide'],
};

/** The kind whose status this is, for a framework refusal we have no entry for. */
function kindOfStatus(status: number): ErrorCode {
  return ERROR_CODES.find((code) => ERROR_KINDS[code].status === status) ?? 'BAD_REQUEST';
}

/** An error body (E1, E3): the French message, the kind's extra fields, then its code. */
export function errorBody(message: string, code: ErrorCode, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ error: message, ...extra, code });
}

export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const json = (status: number, body: string) =>
    reply.code(status).type('application/json; charset=utf-8').send(body);
  if (isAppError(error)) {
    countRefusal(error.code); // issue 29: R1, R2 and busy refusals, in /metrics
    // Busy is the service shedding load as designed (finding 6): no error log line for each one.
    if (error.status >= 500 && error.code !== 'SERVICE_BUSY' && error.code !== 'SNAPSHOT_BUILDING')
      request.log.error({ err: error.cause ?? error, code: error.code }, error.message);
    if (error.code === 'DATABASE_UNAVAILABLE') reply.header('retry-after', String(RETRY_AFTER_UNAVAILABLE_S));
    if (error.retryAfterS !== undefined) reply.header('retry-after', String(error.retryAfterS));
    const extra = error.status >= 500 ? { ...error.body, requestId: request.id } : error.body;
    return json(error.status, errorBody(error.message, error.code, extra));
  }
  const { code: frameworkCode = '', statusCode: status } = errorFields(error);
  if (status !== undefined && status >= 400 && status < 500) {
    // Fastify's own refusals (malformed URL, body on a GET…): a client error, stated generally.
    const known = FRAMEWORK_ERRORS[frameworkCode];
    const code = known?.[0] ?? kindOfStatus(status);
    const message = known?.[1] ?? `Requête invalide (${frameworkCode || status})`;
    return json(status, errorBody(message, code));
  }
  request.log.error({ err: error }, 'unexpected failure');
  return json(500, errorBody(ERROR_KINDS.INTERNAL.message(), 'INTERNAL', { requestId: request.id }));
}
