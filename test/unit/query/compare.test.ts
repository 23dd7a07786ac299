import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AppError } from '../../../src/errors.js';
import {
  percentChange,
  percentChangeOfDecimals,
  periodDays,
  resolveComparison,
  yearEarlier,
} from '../../../src/query/compare.js';

const main = { from: '2024-03-01', to: '2024-03-31' };
const refusal = (parameter: string) => (error: unknown) =>
  error instanceof AppError && error.code === 'INVALID_PARAMETER' && error.message.includes(parameter);

test('PC1: previous_period has as many days as the main period and ends the day before from', () => {
  assert.deepEqual(resolveComparison({ compare: 'previous_period' }, main), {
    mode: 'previous_period',
    from: '2024-01-30',
    to: '2024-02-29',
  });
  assert.equal(periodDays({ from: '2024-01-30', to: '2024-02-29' }), 31);
  assert.deepEqual(
    resolveComparison({ compare: 'previous_period' }, { from: '2025-01-01', to: '2025-01-01' }),
    {
      mode: 'previous_period',
      from: '2024-12-31',
      to: '2024-12-31',
    },
  );
});

test('PC1: previous_year moves both days one calendar year back, 29 February to 28 February', () => {
  assert.deepEqual(
    resolveComparison({ compare: 'previous_year' }, { from: '2024-02-29', to: '2024-03-01' }),
    {
      mode: 'previous_year',
      from: '2023-02-28',
      to: '2023-03-01',
    },
  );
  assert.equal(yearEarlier('2025-02-28'), '2024-02-28');
});

test('PC1: custom follows P3 and P4 with errors naming compare_from / compare_to', () => {
  assert.deepEqual(
    resolveComparison({ compare: 'custom', compare_from: '2023-01-01', compare_to: '2023-01-10' }, main),
    { mode: 'custom', from: '2023-01-01', to: '2023-01-10' },
  );
  // P4 keeps compare_to and moves compare_from up to the two-year cap.
  assert.deepEqual(
    resolveComparison({ compare: 'custom', compare_from: '2010-01-01', compare_to: '2023-06-15' }, main),
    { mode: 'custom', from: '2021-06-16', to: '2023-06-15' },
  );
  assert.throws(
    () => resolveComparison({ compare: 'custom', compare_to: '2023-01-10' }, main),
    refusal('compare_from'),
  );
  assert.throws(
    () => resolveComparison({ compare: 'custom', compare_from: '2023-01-10' }, main),
    refusal('compare_to'),
  );
  assert.throws(
    () =>
      resolveComparison({ compare: 'custom', compare_from: '2023-02-30', compare_to: '2023-03-10' }, main),
    refusal('compare_from'),
  );
  assert.throws(
    () =>
      resolveComparison({ compare: 'custom', compare_from: '2023-03-11', compare_to: '2023-03-10' }, main),
    refusal('compare_from'),
  );
});

test('PC1: compare_from or compare_to without compare=custom, or another compare, is a 400 naming them', () => {
  // Issue 26, item 4: both given, both named.
  const both = (error: unknown) => refusal('compare_from')(error) && refusal('compare_to')(error);
  assert.throws(
    () => resolveComparison({ compare_from: '2023-01-01', compare_to: '2023-01-05' }, main),
    both,
  );
  assert.throws(
    () =>
      resolveComparison(
        { compare: 'previous_period', compare_from: '2023-01-01', compare_to: '2023-01-05' },
        main,
      ),
    both,
  );
  assert.throws(() => resolveComparison({ compare_from: '2023-01-01' }, main), refusal('compare_from'));
  assert.throws(
    () => resolveComparison({ compare: 'previous_year', compare_to: '2023-01-01' }, main),
    refusal('compare_to'),
  );
  assert.throws(() => resolveComparison({ compare: 'yesterday' }, main), refusal('compare'));
  assert.equal(resolveComparison({}, main), undefined);
});

test('PC1: a comparison period before 0001-01-01 is refused, naming compare', () => {
  assert.throws(
    () => resolveComparison({ compare: 'previous_period' }, { from: '0001-01-01', to: '0001-01-05' }),
    refusal('compare'),
  );
  assert.throws(
    () => resolveComparison({ compare: 'previous_period' }, { from: '0001-01-03', to: '0001-01-05' }),
    refusal('compare'),
  );
  assert.throws(
    () => resolveComparison({ compare: 'previous_year' }, { from: '0001-06-01', to: '0001-06-05' }),
    refusal('compare'),
  );
  // Issue 26, item 7: 370 days ending 0001-01-01 start in year −1 ('-0001-12-28'), never returned.
  assert.throws(
    () => resolveComparison({ compare: 'previous_period' }, { from: '0001-01-02', to: '0002-01-05' }),
    (error: unknown) => refusal('compare')(error) && !String(error).includes('-0001'),
  );
});

test('PC1: change in exact decimals, half away from zero, null against 0', () => {
  assert.equal(percentChange(35.1, 40), -12.3); // −12.25 exactly
  assert.equal(percentChange(40, 35.1), 14);
  assert.equal(percentChange(1.005, 1), 0.5);
  assert.equal(percentChange(0.15, 0.1), 50);
  assert.equal(percentChange(3, 0), null);
  assert.equal(percentChange(3, null), null);
  assert.equal(percentChange(0, 7), -100);
  assert.equal(percentChange(1e21, 1e20), 900);
  assert.ok(!Object.is(percentChange(100, 100.0001), -0));
});

test('PC1: the fast path on whole hundredths agrees with the exact decimal computation', () => {
  const value = fc.oneof(
    fc.integer({ min: -2e12, max: 2e12 }).map((cents) => cents / 100),
    fc.integer({ min: -1e6, max: 1e6 }).map((cents) => cents / 100),
    fc.integer({ min: -1e6, max: 1e6 }).map((mils) => mils / 1000), // three decimals: the BigInt path
    fc.double({ min: -1e16, max: 1e16, noNaN: true }),
  );
  fc.assert(
    fc.property(value, value, (v, p) => {
      fc.pre(p !== 0);
      assert.equal(percentChange(v, p), percentChangeOfDecimals(v, p));
    }),
    { numRuns: 20_000 },
  );
  // Half-way cases: 35.10 against 40 is −12.25 %, 1 against 8 is −87.5 %.
  for (const [v, p] of [
    [35.1, 40],
    [1, 8],
    [-35.1, 40],
    [19_999_999_999.99, 0.01],
    [0.01, 19_999_999_999.99],
  ] as const)
    assert.equal(percentChange(v, p), percentChangeOfDecimals(v, p), `${v} against ${p}`);
});

test('PC1: change agrees with a rational computation on cents', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: -10_000_000, max: 10_000_000 }),
      fc.integer({ min: 1, max: 10_000_000 }),
      (v, p) => {
        // v and p in cents: (v − p) / p × 100, tenths rounded half away from zero, from integers.
        const num = (v - p) * 1000;
        const tenths = Math.sign(num) * Math.floor((2 * Math.abs(num) + p) / (2 * p));
        assert.equal(percentChange(v / 100, p / 100), tenths / 10 || 0);
      },
    ),
  );
});
