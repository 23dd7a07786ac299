// C1: successful tabular answers kept for up to 60 s, keyed by organization and resolved query.
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';

export interface CachedAnswer {
  readonly body: string;
  readonly truncated: boolean;
}

export interface ResponseCache {
  get(key: string): Promise<CachedAnswer | undefined>;
  set(key: string, answer: CachedAnswer): Promise<void>;
}

export const CACHE_TTL_S = 60;

export class MemoryResponseCache implements ResponseCache {
  private readonly entries = new LRUCache<string, CachedAnswer>({
    max: 10_000,
    maxSize: 256 * 1024 * 1024,
    sizeCalculation: (answer) => answer.body.length + 64,
    ttl: CACHE_TTL_S * 1000,
  });

  async get(key: string): Promise<CachedAnswer | undefined> {
    return this.entries.get(key);
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    this.entries.set(key, answer);
  }
}

/** C1 shared by every instance (R3); the instance's own memory while Redis is unreachable. */
export class RedisResponseCache implements ResponseCache {
  private readonly local = new MemoryResponseCache();

  constructor(
    private readonly redis: Redis,
    private readonly onFallback: (error: unknown) => void,
  ) {}

  async get(key: string): Promise<CachedAnswer | undefined> {
    try {
      const stored = await this.redis.get(`sm:cache:${key}`);
      return stored === null ? undefined : (JSON.parse(stored) as CachedAnswer);
    } catch (error) {
      this.onFallback(error);
      return this.local.get(key);
    }
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    try {
      await this.redis.set(`sm:cache:${key}`, JSON.stringify(answer), 'EX', CACHE_TTL_S);
    } catch (error) {
      this.onFallback(error);
      await this.local.set(key, answer);
    }
  }
}
