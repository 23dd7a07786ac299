// The one place where errors become HTTP responses (E1, E2). Internal detail never reaches a client.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../errors.js';

export const RETRY_AFTER_UNAVAILABLE_S = 5;

export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (isAppError(error)) {
    if (error.status >= 500)
      request.log.error({ err: error.cause ?? error, code: error.code }, error.message);
    if (error.code === 'DATABASE_UNAVAILABLE') reply.header('retry-after', String(RETRY_AFTER_UNAVAILABLE_S));
    const body: Record<string, unknown> = { error: error.message, ...error.body };
    if (error.status >= 500) body.requestId = request.id;
    return reply.code(error.status).type('application/json; charset=utf-8').send(body);
  }
  const status = (error as FastifyError | undefined)?.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    // Fastify's own refusals (malformed URL, body on a GET…): a client error, stated generally.
    return reply.code(status).send({ error: `Requête invalide (${(error as FastifyError).code ?? status})` });
  }
  request.log.error({ err: error }, 'unexpected failure');
  return reply.code(500).send({ error: 'Erreur interne du serveur', requestId: request.id });
}
