// The shared Redis of several instances (R3). Commands fail fast while Redis is unreachable
// (no offline queue, short timeout) so that callers fall back to in-process state at once.
import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';

export async function connectRedis(url: string, log: FastifyBaseLogger): Promise<Redis> {
  // Loaded only when REDIS_URL is set: a third of a second of every start otherwise (issue 28).
  const { Redis: RedisClient } = await import('ioredis');
  const redis = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 500,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000), // keep trying: Redis may come back
    lazyConnect: false,
  });
  let down = false;
  redis.on('ready', () => {
    if (down) log.warn('Redis de nouveau joignable : limites et cache partagés rétablis');
    down = false;
  });
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    log.error(
      { err: { message: error.message } },
      'Redis injoignable : limites et cache locaux à l’instance en attendant',
    );
  });
  return redis;
}

/** A log call made at most once per interval, for failures that repeat on every request. */
export function throttled(log: (error: unknown) => void, intervalMs = 10_000): (error: unknown) => void {
  let last = 0;
  return (error) => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    log(error);
  };
}

/** A warning, at most every 10 s, that `what` falls back to the instance while Redis fails. */
export function redisFallbackWarning(log: FastifyBaseLogger, what: string): (error: unknown) => void {
  return throttled((error) =>
    log.warn(
      { err: { message: error instanceof Error ? error.message : String(error) } },
      `Redis en erreur : ${what} à l’instance`,
    ),
  );
}
