// PC1's matching arithmetic: the index k of a G2 bucket counted from a period's first bucket, the
// k-th bucket back from it, and the compared row's columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bucketAt, bucketIndex, comparedColumns } from '../../../src/query/compare.js';
import { addDays, bucketStart, GRANULARITIES, nextBucketStart } from '../../../src/query/dates.js';

test('PC1: bucket indexes by granularity, across a year end and 29 February', () => {
  assert.equal(bucketIndex('2024-02-28', '2024-03-01', 'day'), 2);
  assert.equal(bucketIndex('2025-12-22', '2026-01-05', 'week'), 2);
  assert.equal(bucketIndex('2025-11-01', '2026-02-01', 'month'), 3);
  assert.equal(bucketIndex('2025-10-01', '2026-04-01', 'quarter'), 2);
  assert.equal(bucketIndex('2023-01-01', '2026-01-01', 'year'), 3);
  assert.equal(bucketAt('2024-02-28', 1, 'day'), '2024-02-29');
  assert.equal(bucketAt('2025-12-29', 1, 'week'), '2026-01-05');
  assert.equal(bucketAt('2025-11-01', 3, 'month'), '2026-02-01');
  assert.equal(bucketAt('2025-10-01', 2, 'quarter'), '2026-04-01');
  assert.equal(bucketAt('0001-01-01', 0, 'year'), '0001-01-01');
});

test('PC1: the k-th bucket is k steps of nextBucketStart, and bucketIndex inverts bucketAt', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 3_000_000 }),
      fc.integer({ min: 0, max: 60 }),
      fc.constantFrom(...GRANULARITIES),
      (offset, k, granularity) => {
        const first = bucketStart(addDays('0100-01-01', offset), granularity);
        let expected = first;
        for (let step = 0; step < k; step++) expected = nextBucketStart(expected, granularity);
        assert.equal(bucketAt(first, k, granularity), expected);
        assert.equal(bucketIndex(first, expected, granularity), k);
      },
    ),
  );
});

test('PC1: columns: date_previous right after date, then the metrics, their _previous, their _change', () => {
  assert.deepEqual(comparedColumns(['store', 'date'], ['orders', 'net_revenue']), [
    'store',
    'date',
    'date_previous',
    'orders',
    'net_revenue',
    'orders_previous',
    'net_revenue_previous',
    'orders_change',
    'net_revenue_change',
  ]);
  assert.deepEqual(comparedColumns([], ['orders']), ['orders', 'orders_previous', 'orders_change']);
});
