// POST /webhooks/:platform/:connection (issue 11, item 3): the address a shop owner gives
// WooCommerce for order.created / order.updated / order.deleted. The raw body is kept (the
// signature is over its exact bytes), at most 1 MiB; a delivery without a valid signature is
// refused with 401 and changes nothing. Deliveries only queue an order id: a repeated or late one
// makes the worker read the order's current state again, which is harmless.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { receiveWebhook } from '../domain/store-connections.js';
import type { StoreSyncSetup } from '../ingest/connectors/registry.js';

export interface WebhookDeps {
  readonly db: Database;
  readonly setup: StoreSyncSetup;
  /** Tells this instance's worker that an order is queued. */
  readonly kick: () => void;
}

const MAX_BODY = 1024 * 1024;

export async function storeWebhooks(app: FastifyInstance, deps: WebhookDeps): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY }, (_request, body, done) =>
    done(null, body),
  );
  app.post<{ Params: { platform: string; connection: string } }>(
    '/webhooks/:platform/:connection',
    { bodyLimit: MAX_BODY },
    async (request, reply) => {
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        headers[name] = Array.isArray(value) ? value[0] : value;
      }
      const outcome = await receiveWebhook(deps.db, deps.setup, {
        platform: request.params.platform,
        connectionId: request.params.connection,
        headers,
        body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      });
      if (outcome === 'unknown')
        throw new AppError('NOT_FOUND', 'Webhook inconnu : cette boutique n’est pas connectée');
      if (outcome === 'refused') {
        throw new AppError(
          'UNAUTHENTICATED',
          `Livraison refusée : signature ${request.params.platform === 'shopify' ? 'X-Shopify-Hmac-Sha256' : 'X-WC-Webhook-Signature'} absente ou invalide`,
        );
      }
      if (outcome === 'queued') deps.kick();
      reply.header('cache-control', 'no-store');
      return reply.code(outcome === 'queued' ? 202 : 200).send({ received: outcome });
    },
  );
}
