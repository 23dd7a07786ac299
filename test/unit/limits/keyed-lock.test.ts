import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { KeyedLock } from '../../../src/limits/keyed-lock.js';

test('tasks with one key run one at a time, in arrival order', async () => {
  const lock = new KeyedLock();
  const events: string[] = [];
  let running = 0;
  const task = (name: string, ms: number) => async () => {
    running++;
    assert.equal(running, 1, `${name} overlaps another task of the same key`);
    events.push(`start ${name}`);
    await sleep(ms);
    events.push(`end ${name}`);
    running--;
    return name;
  };
  const results = await Promise.all([
    lock.run('a', task('1', 15)),
    lock.run('a', task('2', 1)),
    lock.run('a', task('3', 5)),
  ]);
  assert.deepEqual(results, ['1', '2', '3']);
  assert.deepEqual(events, ['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
});

test('different keys do not wait for each other', async () => {
  const lock = new KeyedLock();
  const order: string[] = [];
  await Promise.all([
    lock.run('slow', async () => {
      await sleep(30);
      order.push('slow');
    }),
    lock.run('fast', async () => {
      order.push('fast');
    }),
  ]);
  assert.deepEqual(order, ['fast', 'slow']);
});

test('a failing task releases the key for the next one and leaves nothing behind', async () => {
  const lock = new KeyedLock();
  const failed = lock.run('k', async () => {
    throw new Error('boom');
  });
  const next = lock.run('k', async () => 'next ran');
  await assert.rejects(failed, /boom/);
  assert.equal(await next, 'next ran');
  const tails = (lock as unknown as { tails: Map<string, unknown> }).tails;
  assert.equal(tails.size, 0, 'no key is kept once its queue is empty (memory stays bounded)');
});
