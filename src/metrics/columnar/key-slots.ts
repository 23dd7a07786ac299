// The slots of a plan read in two passes (execute.ts): the distinct keys of the counted orders in
// key (T3) order, and each order's key replaced by its rank among them, its slot. In time slices
// (issue 26, item 6): the keys of a million orders, sorted in one go, held the event loop for
// half a second; here every loop looks at its slice every STEP elements, and the sort is a merge
// sort of short sorted runs, resumed after each turn of the event loop.
import type { TimeSlices } from '../../limits/time-slice.js';

/** Elements between two looks at the time slice: about a millisecond of any loop below. */
const STEP = 1 << 14;

/** `work` on [from, to) ranges of [0, length), the event loop given a turn when the slice is over. */
async function inSteps(length: number, slices: TimeSlices, work: (from: number, to: number) => void) {
  for (let from = 0; from < length; from += STEP) {
    work(from, Math.min(length, from + STEP));
    await slices.pause();
  }
}

/**
 * The distinct keys (≥ 0) of keyOfs in order; each key of keyOfs replaced by its slot. A table of
 * the key space when it has at most `tableKeys` keys, else the keys sorted (in runs of `run`
 * keys, then merged; a test makes them short).
 */
export function keysToSlots(
  keyOfs: readonly Float64Array[],
  space: number,
  tableKeys: number,
  slices: TimeSlices,
  run = STEP,
): Promise<number[]> {
  return space <= tableKeys ? slotsByTable(keyOfs, space, slices) : slotsBySort(keyOfs, slices, run);
}

async function slotsByTable(keyOfs: readonly Float64Array[], space: number, slices: TimeSlices) {
  const slotOfKey = new Int32Array(space).fill(-1);
  for (const keyOf of keyOfs)
    await inSteps(keyOf.length, slices, (from, to) => {
      for (let i = from; i < to; i++) {
        const key = keyOf[i] as number;
        if (key >= 0) slotOfKey[key] = 0;
      }
    });
  const keys: number[] = [];
  await inSteps(space, slices, (from, to) => {
    for (let key = from; key < to; key++) if (slotOfKey[key] === 0) slotOfKey[key] = keys.push(key) - 1;
  });
  for (const keyOf of keyOfs)
    await inSteps(keyOf.length, slices, (from, to) => {
      for (let i = from; i < to; i++) {
        const key = keyOf[i] as number;
        if (key >= 0) keyOf[i] = slotOfKey[key] as number;
      }
    });
  return keys;
}

async function slotsBySort(keyOfs: readonly Float64Array[], slices: TimeSlices, run: number) {
  let count = 0;
  for (const keyOf of keyOfs) for (const key of keyOf) if (key >= 0) count++;
  const all = new Float64Array(count);
  let n = 0;
  for (const keyOf of keyOfs)
    await inSteps(keyOf.length, slices, (from, to) => {
      for (let i = from; i < to; i++) if ((keyOf[i] as number) >= 0) all[n++] = keyOf[i] as number;
    });
  const sorted = await sortInSlices(all, slices, run);
  const keys: number[] = [];
  await inSteps(sorted.length, slices, (from, to) => {
    for (let i = from; i < to; i++)
      if (i === 0 || sorted[i] !== sorted[i - 1]) keys.push(sorted[i] as number);
  });
  for (const keyOf of keyOfs)
    await inSteps(keyOf.length, slices, (from, to) => {
      for (let i = from; i < to; i++)
        if ((keyOf[i] as number) >= 0) keyOf[i] = rankOf(keys, keyOf[i] as number);
    });
  return keys;
}

/** The index of `key` in the ascending `keys`, which hold it. */
function rankOf(keys: readonly number[], key: number): number {
  let [low, high] = [0, keys.length - 1];
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((keys[middle] as number) < key) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** `values` in ascending order (a new array or the same): runs of `run` sorted, then merged. */
async function sortInSlices(values: Float64Array, slices: TimeSlices, run: number): Promise<Float64Array> {
  const length = values.length;
  for (let from = 0; from < length; from += run) {
    values.subarray(from, from + run).sort();
    await slices.pause();
  }
  let source: Float64Array = values;
  let target: Float64Array = new Float64Array(length);
  for (let width = run; width < length; width *= 2) {
    for (let left = 0; left < length; left += 2 * width) {
      const middle = Math.min(length, left + width);
      await merge(source, target, [left, middle, Math.min(length, middle + width)], slices);
    }
    const merged = target;
    target = source;
    source = merged;
  }
  return source;
}

/** The sorted source[left, middle) and source[middle, right) into target[left, right). */
async function merge(
  source: Float64Array,
  target: Float64Array,
  [left, middle, right]: readonly [number, number, number],
  slices: TimeSlices,
): Promise<void> {
  let [a, b] = [left, middle];
  for (let k = left; k < right; k++) {
    if ((k & (STEP - 1)) === 0 && slices.due()) await slices.next();
    target[k] =
      a < middle && (b >= right || (source[a] as number) <= (source[b] as number))
        ? (source[a++] as number)
        : (source[b++] as number);
  }
}
