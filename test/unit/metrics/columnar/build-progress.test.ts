// Issue 28, item 3: the Retry-After of a report refused while a snapshot builds is the build's
// expected end, from the orders read so far against the organization's count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ASSUMED_ROWS_PER_S,
  newProgress,
  secondsLeft,
  type BuildProgress,
} from '../../../../src/metrics/columnar/build-progress.js';

/** Progress of a build on the embedded engine (150,000 rows a second assumed). */
const embedded = (fields: Omit<BuildProgress, 'assumedRowsPerS'>): BuildProgress => ({
  ...fields,
  assumedRowsPerS: ASSUMED_ROWS_PER_S.embedded,
});

test('issue 28: the time left follows the speed measured so far', () => {
  // 100,000 of 1,000,000 orders read in 4 s: 36 s left.
  assert.equal(secondsLeft(embedded({ startedAt: 0, expected: 1_000_000, read: 100_000 }), 4000), 36);
  assert.equal(secondsLeft(embedded({ startedAt: 0, expected: 1_000_000, read: 500_000 }), 4000), 4);
});

test('issue 28: the speed is measured from the first row, not from the statements before it', () => {
  // Counted in 8 s, then 100,000 of 1,000,000 rows read in 2 s: 18 s left, not 90.
  const progress = embedded({ startedAt: 0, expected: 1_000_000, read: 100_000, firstReadAt: 8000 });
  assert.equal(secondsLeft(progress, 10_000), 18);
});

test('issue 28: before the first orders, an assumed speed; before the count, a short wait; never 0 nor past 10 min', () => {
  // Assumed by engine: a million rows in 7 s embedded (150,000 a second), 5 s on PostgreSQL.
  const embeddedBuild = { ...newProgress('embedded', 0), expected: 1_000_000 };
  assert.equal(secondsLeft(embeddedBuild, 10), 7);
  assert.equal(secondsLeft({ ...newProgress('postgres', 0), expected: 1_000_000 }, 10), 5);
  assert.equal(secondsLeft(newProgress('embedded', 0), 10), 5);
  assert.equal(secondsLeft(undefined), 5);
  assert.equal(secondsLeft(embedded({ startedAt: 0, expected: 10, read: 10 }), 1000), 1);
  assert.equal(secondsLeft(embedded({ startedAt: 0, expected: 100_000_000, read: 1 }), 1000), 600);
});

test('issue 28: in its first two seconds of reading, a build is not taken slower than the assumed speed', () => {
  // 20,000 rows in its first 0.3 s (66,667 a second): 7 s left at the assumed speed, not 15.
  const early = embedded({ startedAt: 0, firstReadAt: 1000, expected: 1_000_000, read: 20_000 });
  assert.equal(secondsLeft(early, 1300), 7);
  // 80,000 in its first 1.5 s: still the assumed speed (7 s), not 19.
  assert.equal(secondsLeft({ ...early, read: 80_000 }, 2500), 7);
  // Faster than assumed already: its own speed (400,000 a second, 2 s left).
  assert.equal(secondsLeft({ ...early, read: 200_000 }, 1500), 2);
  // After two seconds of reading, the speed measured, slow or not: 66,667 a second, 12 s left.
  assert.equal(secondsLeft({ ...early, read: 200_000 }, 4000), 12);
});

test('issue 28: a report that reads no line is told when the orders are read, not the lines', () => {
  // 1,000,000 orders then 2,500,000 lines, 500,000 orders read in 2 s: 250,000 rows a second.
  const progress = embedded({
    startedAt: 0,
    firstReadAt: 1000,
    expected: 3_500_000,
    expectedOrders: 1_000_000,
    read: 500_000,
  });
  assert.equal(secondsLeft(progress, 3000, true), 2);
  assert.equal(secondsLeft(progress, 3000), 12);
  // Orders read, lines under way: at least a second, as always.
  assert.equal(secondsLeft({ ...progress, read: 1_500_000 }, 7000, true), 1);
  // A build that did not count its orders apart: the whole build.
  assert.equal(secondsLeft({ ...progress, expectedOrders: undefined }, 3000, true), 12);
});
