// Issue 29, items 1 and 6: every answer says which instance gave it (X-Instance: INSTANCE_NAME,
// by default host name:port), so that an operator, and the balancer test, can see where a key's
// requests land. A name, never a secret.
import type { FastifyInstance } from 'fastify';

async function instanceHeaderPlugin(app: FastifyInstance, options: { readonly name: string }): Promise<void> {
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('x-instance', options.name);
  });
}

export const instanceHeader = Object.assign(instanceHeaderPlugin, { [Symbol.for('skip-override')]: true });
