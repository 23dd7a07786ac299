// The one place where errors become HTTP responses (E1, E2). Internal detail never reaches a client.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../errors.js';

export const RETRY_AFTER_UNAVAILABLE_S = 5;

const FRAMEWORK_MESSAGES: Record<string, string> = {
  FST_ERR_BAD_URL: 'URL invalide : encodage incorrect dans le chemin',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Type de contenu non pris en charge',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Corps de requête trop volumineux',
  FST_ERR_CTP_INVALID_JSON_BODY: 'Corps JSON invalide',
};

export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (isAppError(error)) {
    // Busy is the service shedding load as designed (finding 6): no error log line for each one.
    if (error.status >= 500 && error.code !== 'SERVICE_BUSY')
      request.log.error({ err: error.cause ?? error, code: error.code }, error.message);
    if (error.code === 'DATABASE_UNAVAILABLE') reply.header('retry-after', String(RETRY_AFTER_UNAVAILABLE_S));
    if (error.retryAfterS !== undefined) reply.header('retry-after', String(error.retryAfterS));
    const body: Record<string, unknown> = { error: error.message, ...error.body };
    if (error.status >= 500) body.requestId = request.id;
    return reply.code(error.status).type('application/json; charset=utf-8').send(body);
  }
  const status = (error as FastifyError | undefined)?.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    // Fastify's own refusals (malformed URL, body on a GET…): a client error, stated generally.
    const code = (error as FastifyError).code ?? '';
    const message = FRAMEWORK_MESSAGES[code] ?? `Requête invalide (${code || status})`;
    return reply.code(status).type('application/json; charset=utf-8').send({ error: message });
  }
  request.log.error({ err: error }, 'unexpected failure');
  return reply.code(500).send({ error: 'Erreur interne du serveur', requestId: request.id });
}
