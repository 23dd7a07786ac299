// The slots of a plan read in two passes (src/metrics/columnar/key-slots.ts), made in time slices
// (issue 26, item 6): the same keys and slots as sorting them all at once, whichever way they are
// found (a table of the key space, or a merge sort of short runs: odd lengths, duplicates).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TimeSlices } from '../../../../src/limits/time-slice.js';
import { keysToSlots } from '../../../../src/metrics/columnar/key-slots.js';
import { mulberry32 } from '../../../helpers/seeded-random.js';

/** The keys of each part's orders: -1 (not counted) or a key below `space`, many repeated. */
function keyOfsOf(seed: number, lengths: readonly number[], space: number): Float64Array[] {
  const random = mulberry32(seed);
  return lengths.map((length) =>
    Float64Array.from({ length }, () => (random() < 0.2 ? -1 : Math.floor(random() * random() * space))),
  );
}

/** The reference: every key at once, sorted, each replaced by its rank. */
function expected(keyOfs: readonly Float64Array[]): { keys: number[]; slots: number[][] } {
  const keys = [...new Set(keyOfs.flatMap((k) => [...k].filter((key) => key >= 0)))].sort((a, b) => a - b);
  const rank = new Map(keys.map((key, slot) => [key, slot]));
  return { keys, slots: keyOfs.map((k) => [...k].map((key) => (key < 0 ? -1 : (rank.get(key) as number)))) };
}

test('issue 26, item 6: keys and slots in time slices, by table and by merge sort, as all at once', async () => {
  for (const [seed, lengths, space] of [
    [1, [0], 10],
    [2, [1], 10],
    [3, [37, 0, 101], 50],
    [4, [1000, 333], 2 ** 40],
    [5, [5000], 7],
  ] as const) {
    const reference = expected(keyOfsOf(seed, lengths, space));
    for (const [tableKeys, run] of [
      [Infinity, 3], // the table
      [0, 3], // merge sort of runs of 3: many passes, runs of odd lengths at the end
      [0, 4],
      [0, 1 << 14], // one run
    ] as const) {
      if (tableKeys === Infinity && space > 2 ** 20) continue;
      const keyOfs = keyOfsOf(seed, lengths, space);
      const keys = await keysToSlots(keyOfs, space, tableKeys, new TimeSlices(), run);
      const label = `seed ${seed}, table up to ${tableKeys}, runs of ${run}`;
      assert.deepEqual(keys, reference.keys, label);
      assert.deepEqual(
        keyOfs.map((k) => [...k]),
        reference.slots,
        label,
      );
    }
  }
});
