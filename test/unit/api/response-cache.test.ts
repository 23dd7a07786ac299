import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CACHE_TTL_S, MemoryResponseCache } from '../../../src/api/response-cache.js';

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
