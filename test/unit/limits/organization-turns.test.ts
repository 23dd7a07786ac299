// Issue 29, item 2: slices of work take turns by organization (src/limits/organization-turns.ts
// behind src/limits/time-slice.ts). One organization with four long tasks and another with one:
// the lone task gets every other slice, not one in five, however many tasks the first one runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asOrganization, slicesWaiting } from '../../../src/limits/organization-turns.js';
import { TimeSlices } from '../../../src/limits/time-slice.js';

const SLICES = 20;

test('issue 29 (item 2): an organization with four tasks and one with a single task get the event loop in equal turns', async () => {
  const order: string[] = [];
  const task = async (name: string) => {
    const slices = new TimeSlices();
    for (let i = 0; i < SLICES; i++) {
      order.push(name);
      await slices.next();
    }
  };
  const noisy = [1, 2, 3, 4].map(() => asOrganization('noisy', () => task('noisy')));
  const quiet = asOrganization('quiet', () => task('quiet'));
  await quiet;
  const noisyBeforeQuietEnded = order.filter((name) => name === 'noisy').length;
  await Promise.all(noisy);
  // Turns shared by organization: about one noisy slice per quiet one (set first, so +4).
  // Shared by task, as setImmediate alone does, it would be 4 × 20 = 80.
  assert.ok(
    noisyBeforeQuietEnded <= SLICES + 4,
    `${noisyBeforeQuietEnded} noisy slices ran before the quiet task ended`,
  );
  assert.equal(order.length, 5 * SLICES);
  assert.equal(slicesWaiting(), 0);
});

test('issue 29 (item 2): work outside any organization still gets its turn', async () => {
  const slices = new TimeSlices();
  let ran = 0;
  const other = new Promise<void>((resolve) => setImmediate(() => ((ran += 1), resolve())));
  await slices.next();
  await other;
  assert.equal(ran, 1);
});
