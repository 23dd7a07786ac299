// C1: successful tabular answers kept for up to 60 s, keyed by organization and resolved query.
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { AnswerCache, TabularAnswer } from '../domain/tabular-report.js';

/** The answers kept are the core's (src/domain/tabular-report.ts), under its cache key. */
export type CachedAnswer = TabularAnswer;
export type ResponseCache = AnswerCache;

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

/** An answer read back from Redis, checked: anything else in the key is not used. */
function toAnswer(value: unknown): CachedAnswer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (!('body' in value) || typeof value.body !== 'string') return undefined;
  if (!('truncated' in value) || typeof value.truncated !== 'boolean') return undefined;
  return { body: value.body, truncated: value.truncated };
}

/**
 * C1 shared by every instance (R3); the instance's own memory while Redis is unreachable.
 * An answer read from or written to Redis is also kept in this instance until the moment Redis
 * drops it (its remaining TTL), so repeated requests skip the round trip (issue 9, item 5)
 * without any answer living longer than in Redis.
 */
export class RedisResponseCache implements ResponseCache {
  private readonly local = new MemoryResponseCache();
  private readonly near = new LRUCache<string, CachedAnswer>({
    max: 1_000,
    maxSize: 64 * 1024 * 1024,
    sizeCalculation: (answer) => answer.body.length + 64,
  });

  constructor(
    private readonly redis: Redis,
    private readonly onFallback: (error: unknown) => void,
  ) {}

  async get(key: string): Promise<CachedAnswer | undefined> {
    const near = this.near.get(key);
    if (near) return near;
    try {
      const asked = performance.now();
      const [read, ttl] =
        (await this.redis.pipeline().get(`sm:cache:${key}`).pttl(`sm:cache:${key}`).exec()) ?? [];
      if (read?.[0]) throw read[0];
      const stored = read?.[1];
      if (typeof stored !== 'string') return undefined;
      const answer = toAnswer(JSON.parse(stored));
      if (!answer) return undefined; // not ours (another version's layout): computed afresh
      // Counted from the request, not the reply: the copy never outlives the Redis entry.
      const leftMs = Number(ttl?.[1]) - (performance.now() - asked);
      if (leftMs >= 1) this.near.set(key, answer, { ttl: Math.floor(leftMs) });
      return answer;
    } catch (error) {
      this.onFallback(error);
      return this.local.get(key);
    }
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    this.near.set(key, answer, { ttl: CACHE_TTL_S * 1000 }); // before Redis's clock starts
    try {
      await this.redis.set(`sm:cache:${key}`, JSON.stringify(answer), 'EX', CACHE_TTL_S);
    } catch (error) {
      this.onFallback(error);
      await this.local.set(key, answer);
    }
  }
}
