// Operations: /healthz says the process is alive; /readyz that it can serve (database reachable),
// for a load balancer to take an instance out while its database is unreachable.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { databaseAnswers, type Queryable } from '../db/database.js';
import { AppError, appError } from '../errors.js';

export interface HealthDeps {
  readonly db: Queryable;
  readonly redis?: Redis;
}

export async function healthRoutes(app: FastifyInstance, deps: HealthDeps): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const redis = deps.redis === undefined ? 'off' : deps.redis.status === 'ready' ? 'up' : 'down';
    try {
      await databaseAnswers(deps.db);
    } catch (error) {
      throw error instanceof AppError ? error : appError('DATABASE_UNAVAILABLE');
    }
    reply.header('cache-control', 'no-store');
    return { status: 'ready', database: 'up', redis };
  });
}
