// C1: successful tabular answers kept for up to 60 s, keyed by organization and resolved query.
// Sized in bytes (issue 18, finding 2): the cache holds at most `maxBytes` of answers in this
// instance, and an answer over `maxEntryBytes` is not kept at all, here or in Redis, so that a few
// huge answers never push out every other one nor sit in Redis.
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { AnswerCache, TabularAnswer } from '../domain/tabular-report.js';

/** The answers kept are the core's (src/domain/tabular-report.ts), under its cache key. */
export type CachedAnswer = TabularAnswer;
export type ResponseCache = AnswerCache;

export const CACHE_TTL_S = 60;

export interface CacheLimits {
  /** Bytes of answers kept in this instance. */
  readonly maxBytes: number;
  /** The largest answer kept; larger ones are sent and forgotten. */
  readonly maxEntryBytes: number;
}

export const DEFAULT_CACHE_LIMITS: CacheLimits = { maxBytes: 256 * 1024 ** 2, maxEntryBytes: 64 * 1024 ** 2 };

/** An answer's bytes as held: its body and the entry's own bookkeeping. */
const answerBytes = (answer: CachedAnswer): number => answer.body.byteLength + 64;

function boundedLru(limits: CacheLimits, ttl?: number): LRUCache<string, CachedAnswer> {
  return new LRUCache<string, CachedAnswer>({
    max: 10_000,
    maxSize: limits.maxBytes,
    maxEntrySize: Math.min(limits.maxEntryBytes + 64, limits.maxBytes),
    sizeCalculation: answerBytes,
    ...(ttl === undefined ? {} : { ttl }),
  });
}

export class MemoryResponseCache implements ResponseCache {
  private readonly entries: LRUCache<string, CachedAnswer>;

  constructor(limits: CacheLimits = DEFAULT_CACHE_LIMITS) {
    this.entries = boundedLru(limits, CACHE_TTL_S * 1000);
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    return this.entries.get(key);
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    this.entries.set(key, answer);
  }
}

// Redis holds an answer as its bytes behind one flag byte (`1`: rows were left out, T6), under a
// prefix of its own: the earlier layout (JSON under sm:cache:) is never read as this one.
const PREFIX = 'sm:answer:';
const TRUNCATED = 0x31;
const COMPLETE = 0x30;

/** An answer read back from Redis, checked: anything else in the key is not used. */
function toAnswer(stored: Buffer): CachedAnswer | undefined {
  const flag = stored[0];
  if (flag !== TRUNCATED && flag !== COMPLETE) return undefined;
  return { body: stored.subarray(1), truncated: flag === TRUNCATED };
}

/**
 * C1 shared by every instance (R3); the instance's own memory while Redis is unreachable.
 * An answer read from or written to Redis is also kept in this instance until the moment Redis
 * drops it (its remaining TTL), so repeated requests skip the round trip (issue 9, item 5)
 * without any answer living longer than in Redis. The copies kept and the fallback share the
 * instance's budget: a quarter and three quarters of it.
 */
export class RedisResponseCache implements ResponseCache {
  private readonly local: MemoryResponseCache;
  private readonly near: LRUCache<string, CachedAnswer>;
  private readonly maxEntryBytes: number;

  constructor(
    private readonly redis: Redis,
    private readonly onFallback: (error: unknown) => void,
    limits: CacheLimits = DEFAULT_CACHE_LIMITS,
  ) {
    const quarter = Math.max(1, Math.floor(limits.maxBytes / 4));
    this.near = boundedLru({ maxBytes: quarter, maxEntryBytes: limits.maxEntryBytes });
    this.local = new MemoryResponseCache({ ...limits, maxBytes: Math.max(1, limits.maxBytes - quarter) });
    this.maxEntryBytes = limits.maxEntryBytes;
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    const near = this.near.get(key);
    if (near) return near;
    try {
      const asked = performance.now();
      const [read, ttl] =
        (await this.redis.pipeline().getBuffer(`${PREFIX}${key}`).pttl(`${PREFIX}${key}`).exec()) ?? [];
      if (read?.[0]) throw read[0];
      const stored = read?.[1];
      if (!Buffer.isBuffer(stored)) return undefined;
      const answer = toAnswer(stored);
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
    if (answer.body.byteLength > this.maxEntryBytes) return; // sent, not kept (finding 2)
    this.near.set(key, answer, { ttl: CACHE_TTL_S * 1000 }); // before Redis's clock starts
    try {
      const flag = Buffer.of(answer.truncated ? TRUNCATED : COMPLETE);
      await this.redis.set(`${PREFIX}${key}`, Buffer.concat([flag, answer.body]), 'EX', CACHE_TTL_S);
    } catch (error) {
      this.onFallback(error);
      await this.local.set(key, answer);
    }
  }
}
