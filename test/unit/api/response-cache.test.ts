import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { CACHE_TTL_S, MemoryResponseCache, RedisResponseCache } from '../../../src/api/response-cache.js';

const bytes = (text: string) => Buffer.from(text);

test('C1: an answer is kept and returned unchanged, with its truncation flag', async () => {
  const cache = new MemoryResponseCache();
  assert.equal(await cache.get('k'), undefined);
  await cache.set('k', { body: bytes('{"rows":[]}'), truncated: true });
  assert.deepEqual(await cache.get('k'), { body: bytes('{"rows":[]}'), truncated: true });
  assert.equal(await cache.get('other'), undefined);
});

test('C1: answers expire after 60 seconds', async (t) => {
  // lru-cache reads the clock through performance.now(); move that clock instead of waiting.
  let now = performance.now();
  t.mock.method(performance, 'now', () => now);
  const cache = new MemoryResponseCache();
  await cache.set('k', { body: bytes('x'), truncated: false });
  now += (CACHE_TTL_S - 1) * 1000;
  await sleep(5); // lru-cache keeps its reading of the clock for a moment
  assert.ok(await cache.get('k'), 'still there before the minute ends');
  now += 2000;
  await sleep(5);
  assert.equal(await cache.get('k'), undefined, 'gone after it');
});

test('the cache is bounded in size: huge answers push older ones out instead of growing the heap', async () => {
  const cache = new MemoryResponseCache();
  const body = Buffer.alloc(64 * 1024 * 1024 - 64, 'x'); // 64 MiB each with the entry's overhead, 256 MiB budget
  for (let i = 0; i < 6; i++) await cache.set(`k${i}`, { body, truncated: false });
  const kept = (await Promise.all([0, 1, 2, 3, 4, 5].map((i) => cache.get(`k${i}`)))).filter(Boolean).length;
  assert.ok(kept <= 4, `kept ${kept} answers of 64 MiB`);
  assert.ok(await cache.get('k5'), 'the newest is kept');
});

/** A Redis holding binary values with an expiry, on the same clock as lru-cache. */
function fakeRedis(clock: () => number) {
  const values = new Map<string, { value: Buffer; expiresAt: number }>();
  let reads = 0;
  const live = (key: string) => {
    const entry = values.get(key);
    return entry && entry.expiresAt > clock() ? entry : undefined;
  };
  const redis = {
    async set(key: string, value: Buffer, _ex: 'EX', seconds: number) {
      values.set(key, { value, expiresAt: clock() + seconds * 1000 });
      return 'OK';
    },
    pipeline() {
      const replies: [null, unknown][] = [];
      const chain = {
        getBuffer(key: string) {
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
  await writer.set('k', { body: bytes('x'), truncated: false }); // another instance computed it
  now += 50_000; // 10 s left in Redis
  await sleep(5);
  assert.deepEqual(await reader.get('k'), { body: bytes('x'), truncated: false });
  assert.deepEqual(await reader.get('k'), { body: bytes('x'), truncated: false });
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
  await cache.set('k', { body: bytes('x'), truncated: true });
  values.clear();
  now += (CACHE_TTL_S - 1) * 1000;
  await sleep(5);
  assert.deepEqual(await cache.get('k'), { body: bytes('x'), truncated: true });
  now += 2000;
  await sleep(5);
  assert.equal(await cache.get('k'), undefined);
});

test('issue 18, finding 2: the cache is sized in bytes and keeps no answer over its entry limit', async () => {
  const cache = new MemoryResponseCache({ maxBytes: 1100, maxEntryBytes: 500 });
  await cache.set('big', { body: Buffer.alloc(501), truncated: false });
  assert.equal(await cache.get('big'), undefined, 'over the entry limit: not kept');
  // 150 characters of '€' are 450 bytes (514 with the entry's overhead): two fit in 1,100 bytes, not three.
  for (const k of ['a', 'b', 'c']) await cache.set(k, { body: bytes('€'.repeat(150)), truncated: false });
  const kept = await Promise.all(['a', 'b', 'c'].map((k) => cache.get(k)));
  assert.deepEqual(
    kept.map((a) => a !== undefined),
    [false, true, true],
  );
});

test('issue 18, finding 2: an answer over the entry limit is not written to Redis either', async (t) => {
  let now = performance.now();
  t.mock.method(performance, 'now', () => now);
  const { redis, values } = fakeRedis(() => now);
  const cache = new RedisResponseCache(redis, () => assert.fail('no fallback'), {
    maxBytes: 10_000,
    maxEntryBytes: 100,
  });
  await cache.set('big', { body: Buffer.alloc(101), truncated: false });
  await cache.set('small', { body: Buffer.alloc(100, 'y'), truncated: true });
  assert.deepEqual([...values.keys()], ['sm:answer:small']);
  assert.equal(await cache.get('big'), undefined);
  values.clear();
  now += 1;
  await sleep(5);
  assert.deepEqual(await cache.get('small'), { body: Buffer.alloc(100, 'y'), truncated: true });
});
