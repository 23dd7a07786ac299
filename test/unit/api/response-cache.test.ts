import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { CACHE_TTL_S, MemoryResponseCache, RedisResponseCache } from '../../../src/api/response-cache.js';

test('C1: an answer is kept and returned unchanged, with its truncation flag', async () => {
  const cache = new MemoryResponseCache();
  assert.equal(await cache.get('k'), undefined);
  await cache.set('k', { body: '{"rows":[]}', truncated: true });
  assert.deepEqual(await cache.get('k'), { body: '{"rows":[]}', truncated: true });
  assert.equal(await cache.get('other'), undefined);
});

test('C1: answers expire after 60 seconds', async (t) => {
  // lru-cache reads the clock through performance.now(); move that clock instead of waiting.
  let now = performance.now();
  t.mock.method(performance, 'now', () => now);
  const cache = new MemoryResponseCache();
  await cache.set('k', { body: 'x', truncated: false });
  now += (CACHE_TTL_S - 1) * 1000;
  await sleep(5); // lru-cache keeps its reading of the clock for a moment
  assert.ok(await cache.get('k'), 'still there before the minute ends');
  now += 2000;
  await sleep(5);
  assert.equal(await cache.get('k'), undefined, 'gone after it');
});

test('the cache is bounded in size: huge answers push older ones out instead of growing the heap', async () => {
  const cache = new MemoryResponseCache();
  const body = 'x'.repeat(64 * 1024 * 1024); // 64 MiB each, 256 MiB budget
  for (let i = 0; i < 6; i++) await cache.set(`k${i}`, { body, truncated: false });
  const kept = (await Promise.all([0, 1, 2, 3, 4, 5].map((i) => cache.get(`k${i}`)))).filter(Boolean).length;
  assert.ok(kept <= 4, `kept ${kept} answers of 64 MiB`);
  assert.ok(await cache.get('k5'), 'the newest is kept');
});

/** A Redis holding string values with an expiry, on the same clock as lru-cache. */
function fakeRedis(clock: () => number) {
  const values = new Map<string, { value: string; expiresAt: number }>();
  let reads = 0;
  const live = (key: string) => {
    const entry = values.get(key);
    return entry && entry.expiresAt > clock() ? entry : undefined;
  };
  const redis = {
    async set(key: string, value: string, _ex: 'EX', seconds: number) {
      values.set(key, { value, expiresAt: clock() + seconds * 1000 });
      return 'OK';
    },
    pipeline() {
      const replies: [null, unknown][] = [];
      const chain = {
        get(key: string) {
          reads++;
          replies.push([null, live(key)?.value ?? null]);
          return chain;
        },
        pttl(key: string) {
          const entry = live(key);
          replies.push([null, entry ? entry.expiresAt - clock() : -2]);
          return chain;
        },
        exec: async () => replies,
      };
      return chain;
    },
  };
  return { redis: redis as unknown as Redis, values, reads: () => reads };
}

test('C1/R3: an answer read from Redis is then served from memory, never past the moment Redis drops it', async (t) => {
  let now = performance.now();
  t.mock.method(performance, 'now', () => now);
  const { redis, values, reads } = fakeRedis(() => now);
  const writer = new RedisResponseCache(redis, () => assert.fail('no fallback'));
  const reader = new RedisResponseCache(redis, () => assert.fail('no fallback'));
  await writer.set('k', { body: 'x', truncated: false }); // another instance computed it
  now += 50_000; // 10 s left in Redis
  await sleep(5);
  assert.deepEqual(await reader.get('k'), { body: 'x', truncated: false });
  assert.deepEqual(await reader.get('k'), { body: 'x', truncated: false });
  assert.equal(reads(), 1, 'the second answer came from memory');
  values.clear(); // whatever happens in Redis, the copy lasts no longer than the entry would have
  now += 9_000;
  await sleep(5);
  assert.ok(await reader.get('k'), 'within the 10 s left');
  now += 1_100;
  await sleep(5);
  assert.equal(await reader.get('k'), undefined, 'gone when the Redis entry would be');
});

test('C1: an answer written through Redis is kept in memory for at most 60 seconds', async (t) => {
  let now = performance.now();
  t.mock.method(performance, 'now', () => now);
  const { redis, values } = fakeRedis(() => now);
  const cache = new RedisResponseCache(redis, () => assert.fail('no fallback'));
  await cache.set('k', { body: 'x', truncated: true });
  values.clear();
  now += (CACHE_TTL_S - 1) * 1000;
  await sleep(5);
  assert.deepEqual(await cache.get('k'), { body: 'x', truncated: true });
  now += 2000;
  await sleep(5);
  assert.equal(await cache.get('k'), undefined);
});
