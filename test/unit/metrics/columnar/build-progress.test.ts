// Issue 28, item 3: the Retry-After of a report refused while a snapshot builds is the build's
// expected end, from the orders read so far against the organization's count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { secondsLeft } from '../../../../src/metrics/columnar/build-progress.js';

test('issue 28: the time left follows the speed measured so far', () => {
  // 100,000 of 1,000,000 orders read in 4 s: 36 s left.
  assert.equal(secondsLeft({ startedAt: 0, expected: 1_000_000, read: 100_000 }, 4000), 36);
  assert.equal(secondsLeft({ startedAt: 0, expected: 1_000_000, read: 500_000 }, 4000), 4);
});

test('issue 28: the speed is measured from the first row, not from the statements before it', () => {
  // Counted in 8 s, then 100,000 of 1,000,000 rows read in 2 s: 18 s left, not 90.
  const progress = { startedAt: 0, expected: 1_000_000, read: 100_000, firstReadAt: 8000 };
  assert.equal(secondsLeft(progress, 10_000), 18);
});

test('issue 28: before the first orders, an assumed speed; before the count, a short wait; never 0 nor past 10 min', () => {
  assert.equal(secondsLeft({ startedAt: 0, expected: 1_000_000, read: 0 }, 10), 10);
  assert.equal(secondsLeft({ startedAt: 0, read: 0 }, 10), 5);
  assert.equal(secondsLeft(undefined), 5);
  assert.equal(secondsLeft({ startedAt: 0, expected: 10, read: 10 }, 1000), 1);
  assert.equal(secondsLeft({ startedAt: 0, expected: 100_000_000, read: 1 }, 1000), 600);
});

test('issue 28: a report that reads no line is told when the orders are read, not the lines', () => {
  // 1,000,000 orders then 2,500,000 lines, 500,000 orders read in 2 s: 250,000 rows a second.
  const progress = {
    startedAt: 0,
    firstReadAt: 1000,
    expected: 3_500_000,
    expectedOrders: 1_000_000,
    read: 500_000,
  };
  assert.equal(secondsLeft(progress, 3000, true), 2);
  assert.equal(secondsLeft(progress, 3000), 12);
  // Orders read, lines under way: at least a second, as always.
  assert.equal(secondsLeft({ ...progress, read: 1_500_000 }, 7000, true), 1);
  // A build that did not count its orders apart: the whole build.
  assert.equal(secondsLeft({ ...progress, expectedOrders: undefined }, 3000, true), 12);
});
