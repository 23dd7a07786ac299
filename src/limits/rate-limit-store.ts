// The counter store of @fastify/rate-limit for R1 and R2: Redis when configured (R3), else the
// plugin's in-process store. With Redis down, counting goes on in the instance instead of
// stopping (the plugin's skipOnError would stop limiting altogether).
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

interface CounterStore {
  incr(key: string, callback: Callback, timeWindow: number, max: number): void;
  read(key: string, callback: Callback, timeWindow: number, max: number): void;
  child(routeOptions: unknown): CounterStore;
}

type StoreConstructor = new (...args: unknown[]) => CounterStore;

// The plugin ships its two stores as CommonJS files without types.
const require = createRequire(import.meta.url);
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as StoreConstructor;
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as StoreConstructor;

export function sharedCounterStore(redis: Redis, onFallback: (error: Error) => void): StoreConstructor {
  class FallbackStore implements CounterStore {
    private readonly shared = new RedisStore(false, false, redis, 'sm:rl:');
    private readonly local = new LocalStore(false, false, 10_000);

    private run(
      method: 'incr' | 'read',
      key: string,
      callback: Callback,
      timeWindow: number,
      max: number,
    ): void {
      this.shared[method](
        key,
        (error, result) => {
          if (!error) return callback(null, result);
          onFallback(error);
          this.local[method](key, callback, timeWindow, max);
        },
        timeWindow,
        max,
      );
    }

    incr(key: string, callback: Callback, timeWindow: number, max: number): void {
      this.run('incr', key, callback, timeWindow, max);
    }

    read(key: string, callback: Callback, timeWindow: number, max: number): void {
      this.run('read', key, callback, timeWindow, max);
    }

    child(): CounterStore {
      return this; // one counter per key across routes (R1)
    }
  }
  return FallbackStore as unknown as StoreConstructor;
}
