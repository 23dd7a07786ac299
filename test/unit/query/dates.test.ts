import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  addDays,
  bucketStart,
  dayOf,
  dayStart,
  dayStartMs,
  earliestFrom,
  GRANULARITIES,
  nextBucketStart,
  onOrBefore,
  parseDay,
  todayUtc,
} from '../../../src/query/dates.js';

test('P3: a day is exactly YYYY-MM-DD and exists in the calendar', () => {
  assert.equal(parseDay('2026-02-28'), '2026-02-28');
  assert.equal(parseDay('2024-02-29'), '2024-02-29');
  for (const bad of [
    '2026-02-29',
    '2026-02-30',
    '2026-13-01',
    '2026-00-10',
    '2026-04-31',
    '2026-1-01',
    '26-01-01',
    '2026-01-01T00:00',
    ' 2026-01-01',
    '0000-01-01',
    '',
  ]) {
    assert.equal(parseDay(bad), undefined, bad);
  }
});

test('P4: the earliest from is to minus two calendar years plus one day', () => {
  assert.equal(earliestFrom('2026-11-22'), '2024-11-23');
  assert.equal(earliestFrom('2024-02-29'), '2022-03-01');
  assert.equal(earliestFrom('2026-01-01'), '2024-01-02');
  assert.equal(earliestFrom('2026-12-31'), '2025-01-01');
});

test('day arithmetic crosses months, years and leap days in UTC', () => {
  assert.equal(addDays('2024-02-28', 1), '2024-02-29');
  assert.equal(addDays('2024-03-01', -1), '2024-02-29');
  assert.equal(addDays('2026-12-31', 1), '2027-01-01');
  assert.equal(addDays('2026-11-22', -30), '2026-10-23');
  assert.equal(todayUtc(new Date('2026-11-22T23:59:59.999Z')), '2026-11-22');
  assert.equal(todayUtc(new Date('2026-11-22T23:30:00-01:00')), '2026-11-23');
});

test('G2: a bucket starts on the Monday of the ISO week, the first of the month, quarter or year', () => {
  assert.equal(bucketStart('2026-01-04', 'week'), '2025-12-29'); // a Sunday: the week began last year
  assert.equal(bucketStart('2026-01-05', 'week'), '2026-01-05'); // a Monday
  assert.equal(bucketStart('2024-03-01', 'week'), '2024-02-26'); // across a leap day
  assert.equal(bucketStart('2026-11-24', 'month'), '2026-11-01');
  assert.equal(bucketStart('2026-11-24', 'quarter'), '2026-10-01');
  assert.equal(bucketStart('2026-03-31', 'quarter'), '2026-01-01');
  assert.equal(bucketStart('2026-07-01', 'quarter'), '2026-07-01');
  assert.equal(bucketStart('2026-11-24', 'year'), '2026-01-01');
  assert.equal(bucketStart('2026-11-24', 'day'), '2026-11-24');
  assert.equal(nextBucketStart('2025-12-29', 'week'), '2026-01-05');
  assert.equal(nextBucketStart('2026-11-01', 'month'), '2026-12-01');
  assert.equal(nextBucketStart('2026-10-01', 'quarter'), '2027-01-01');
  assert.equal(nextBucketStart('2024-01-01', 'year'), '2025-01-01');
});

test('G2: every day lies in exactly one bucket, [bucketStart, nextBucketStart), and weeks start on Mondays', () => {
  const day = fc.integer({ min: 0, max: 40_000 }).map((n) => addDays('1990-01-01', n));
  fc.assert(
    fc.property(day, fc.constantFrom(...GRANULARITIES), (d, g) => {
      const start = bucketStart(d, g);
      const next = nextBucketStart(start, g);
      assert.ok(start <= d && d < next, `${g} ${d}: ${start} .. ${next}`);
      assert.equal(bucketStart(next, g), next);
      assert.equal(bucketStart(addDays(next, -1), g), start);
      if (g === 'week') assert.equal(new Date(`${start}T00:00:00Z`).getUTCDay(), 1);
      if (g !== 'day' && g !== 'week') assert.equal(start.slice(8), '01');
    }),
    { numRuns: 3000, seed: 14 },
  );
});

test('issue 18: days at the calendar’s edges — past 9999-12-31, into year 0 — are computed, compared and read back', () => {
  assert.equal(addDays('9999-12-31', 1), '10000-01-01');
  assert.equal(addDays('10000-01-01', -1), '9999-12-31', 'a five-digit day is read back');
  assert.equal(addDays('0001-01-01', -1), '0000-12-31');
  assert.equal(addDays('0000-01-01', -1), '-0001-12-31', 'never "00-1-12-31"');
  assert.equal(onOrBefore('9999-12-31', '9999-12-31'), true);
  assert.equal(onOrBefore('10000-01-01', '9999-12-31'), false, 'not by text: "1" sorts before "9"');
  // Issue 26, item 7: a negative year is longer than '0001-01-01' but comes before it.
  assert.equal(onOrBefore('0001-01-01', '-0001-12-30'), false, 'year -1 is before year 1');
  assert.equal(onOrBefore('-0001-12-30', '0001-01-01'), true);
  assert.equal(onOrBefore('0000-12-31', '0001-01-01'), true);
  assert.equal(onOrBefore('-0002-12-31', '-0001-01-01'), true, 'year -2 is before year -1');
  assert.equal(onOrBefore('0001-01-01', '10000-01-01'), true);
  for (const g of GRANULARITIES) {
    const after = nextBucketStart(bucketStart('9999-12-31', g), g);
    assert.equal(onOrBefore(after, '9999-12-31'), false, `${g}: ${after}`);
  }
  assert.equal(bucketStart('0001-01-07', 'week'), '0001-01-01', '1 January of year 1 was a Monday');
  // The end of a period ending 9999-12-31, which Date.parse reads as NaN.
  const end = dayStart(addDays('9999-12-31', 1));
  assert.equal(Number.isNaN(Date.parse(end)), true);
  assert.equal(dayStartMs(end), Date.parse('+010000-01-01T00:00:00Z'));
  assert.equal(dayStartMs(dayStart('0001-01-01')), Date.parse('0001-01-01T00:00:00Z'));
  assert.equal(dayOf(end), '10000-01-01');
  assert.throws(() => addDays('1-1-1', 1), RangeError);
});
