// Issue 7, finding 6: the bounds on report computations (src/limits/report-slots.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../src/errors.js';
import { ReportSlots } from '../../../src/limits/report-slots.js';

const busyCode = (error: unknown) => error instanceof AppError && error.code === 'SERVICE_BUSY';

test('finding 6: past the total, a request waits briefly, then is refused as busy with Retry-After', async () => {
  const slots = new ReportSlots({ total: 2, perOrganization: 2, maxQueued: 1, maxWaitMs: 50 });
  const a = await slots.acquire('a');
  await slots.acquire('b');
  const started = performance.now();
  await assert.rejects(slots.acquire('c'), (error: unknown) => {
    assert.ok(busyCode(error));
    assert.equal((error as AppError).retryAfterS, 2);
    return true;
  });
  assert.ok(performance.now() - started >= 45, 'it waited for a slot first');
  // A waiter gets the slot given back.
  const waiting = slots.acquire('c');
  a();
  const c = await waiting;
  assert.equal(slots.running, 2);
  c();
  assert.equal(slots.running, 1);
});

test('finding 6: a full queue refuses at once', async () => {
  const slots = new ReportSlots({ total: 1, perOrganization: 1, maxQueued: 1, maxWaitMs: 10_000 });
  const held = await slots.acquire('a');
  const queued = slots.acquire('b');
  const started = performance.now();
  await assert.rejects(slots.acquire('c'), busyCode);
  // Refused without waiting for a slot (maxWaitMs, 10 s); a bound far from it, not a speed (CI saw 280 ms).
  assert.ok(performance.now() - started < 5_000, 'refused at once, not after the wait');
  held();
  (await queued)();
  assert.equal(slots.running, 0);
  assert.equal(slots.queued, 0);
});

test('finding 6: one organization cannot take every slot; others pass its backlog', async () => {
  const slots = new ReportSlots({ total: 3, perOrganization: 1, maxQueued: 10, maxWaitMs: 1000 });
  const first = await slots.acquire('big');
  const backlog = slots.acquire('big'); // waits: its organization is at its bound
  const other = await slots.acquire('small'); // passes at once
  assert.equal(slots.running, 2);
  first();
  (await backlog)();
  other();
  assert.equal(slots.running, 0);
});

test('finding 6: a client that goes away leaves the queue, and a released slot is never counted twice', async () => {
  const slots = new ReportSlots({ total: 1, perOrganization: 1, maxQueued: 5, maxWaitMs: 10_000 });
  const held = await slots.acquire('a');
  const controller = new AbortController();
  const waiting = slots.acquire('b', controller.signal);
  assert.equal(slots.queued, 1);
  controller.abort(new Error('gone'));
  await assert.rejects(waiting, /gone/);
  assert.equal(slots.queued, 0);
  held();
  held();
  assert.equal(slots.running, 0);
});

test('issue 29: slots are served in turns, the organization served least recently first', async () => {
  const slots = new ReportSlots({ total: 1, perOrganization: 1, maxQueued: 10, maxWaitMs: 10_000 });
  const served: string[] = [];
  const ask = (organization: string) =>
    slots.acquire(organization).then((release) => {
      served.push(organization);
      release();
    });
  const held = await slots.acquire('a');
  const all = [ask('a'), ask('a'), ask('b'), ask('a'), ask('c'), ask('b')];
  held();
  await Promise.all(all);
  assert.deepEqual(served, ['b', 'c', 'a', 'b', 'a', 'a']);
});

test('issue 29: one organization’s queue is bounded; another organization still queues', async () => {
  const slots = new ReportSlots({
    total: 1,
    perOrganization: 1,
    maxQueued: 10,
    maxQueuedPerOrganization: 2,
    maxWaitMs: 10_000,
  });
  const held = await slots.acquire('a');
  const queued = [slots.acquire('a'), slots.acquire('a')];
  await assert.rejects(slots.acquire('a'), busyCode);
  const other = slots.acquire('b');
  assert.equal(slots.queued, 3);
  held();
  (await other)();
  for (const waiting of queued) (await waiting)();
  assert.equal(slots.running, 0);
  assert.equal(slots.queued, 0);
});
