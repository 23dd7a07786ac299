// PC1 over a snapshot: the main and the comparison period aggregated on the same snapshot (each
// with its own U3 start, the same filters), then their rows merged in T3 order. The comparison's
// key is moved into the main period's key space (its `date` digit replaced by the main bucket of
// the same index k), which keeps its order, so the two sorted key lists merge in one walk that
// builds only the rows O1 and T6 keep.
import type { DimensionId } from '../../catalog.js';
import { bucketAt, bucketIndex } from '../../query/compare.js';
import { bucketStart, dayStartMs, type Granularity } from '../../query/dates.js';
import type { ComparisonPlan, ReportPlan } from '../../query/plan.js';
import { comparedRow } from '../compared-rows.js';
import type { ReportRow, ReportRows } from '../engine.js';
import type { DayBuckets } from './day-buckets.js';
import { aggregate, EXECUTION_PATHS, slotMetric, type Aggregate, type ExecutionPaths } from './execute.js';
import type { Snapshot } from './snapshot.js';
import { sortedOrder } from './sort-rows.js';
import { TimeSlices } from '../../limits/time-slice.js';

/** A period's buckets: the first day of the one holding its first instant, and how many there are. */
interface Frame {
  readonly first: string;
  readonly count: number;
}

/** The local day (label) holding the instant `seconds`. */
function dayAt(buckets: DayBuckets, seconds: number): string | undefined {
  let k = -1;
  while (k + 1 < buckets.starts.length && (buckets.starts[k + 1] as number) <= seconds) k++;
  return buckets.labels[k];
}

function frameOf(
  buckets: DayBuckets,
  period: { readonly periodStart: string; readonly periodEnd: string },
  granularity: Granularity,
): Frame | undefined {
  const first = dayAt(buckets, dayStartMs(period.periodStart) / 1000);
  const last = dayAt(buckets, dayStartMs(period.periodEnd) / 1000 - 0.001);
  if (first === undefined || last === undefined) return undefined;
  const start = bucketStart(first, granularity);
  return { first: start, count: bucketIndex(start, bucketStart(last, granularity), granularity) + 1 };
}

/** Reads a key's digits (in its aggregate's key space) and writes them in another's. */
function digitsOf(sums: Aggregate, key: number): number[] {
  return sums.weights.dimensions.map((d) => Math.floor(key / d.stride) % Math.max(1, d.sorted.length));
}

/**
 * The comparison's keys moved into the main key space, in order, with their slots; those past
 * the main period's buckets left out.
 */
async function movedKeys(
  main: Aggregate,
  previous: Aggregate,
  frames: { readonly main: Frame; readonly previous: Frame } | undefined,
  granularity: Granularity,
  slices: TimeSlices,
): Promise<{ keys: number[]; slots: number[] } | undefined> {
  if (!frames) return { keys: [...previous.keys], slots: [...previous.slots] };
  const dimensions = main.weights.dimensions;
  const dateAt = dimensions.findIndex((d) => d.id === 'date');
  const mainRank = dateAt < 0 ? undefined : new Map(dimensions[dateAt]?.sorted.map((v, r) => [v, r]));
  const moved: number[] = [];
  const slots: number[] = [];
  // The main period's rank of each comparison bucket, worked out once per bucket rather than once
  // per key (issue 29, item 2): null past the main period's buckets, -1 for none of its buckets.
  const movedRanks = new Map<number, number | null>();
  const movedRank = (digit: number): number | null => {
    let rank = movedRanks.get(digit);
    if (rank === undefined) {
      const day = previous.weights.dimensions[dateAt]?.sorted[digit] as string;
      const k = bucketIndex(frames.previous.first, day, granularity);
      rank =
        k >= frames.main.count ? null : (mainRank?.get(bucketAt(frames.main.first, k, granularity)) ?? -1);
      movedRanks.set(digit, rank);
    }
    return rank;
  };
  for (let n = 0; n < previous.keys.length; n++) {
    if (slices.due()) await slices.next();
    const key = previous.keys[n] as number;
    const digits = digitsOf(previous, key);
    if (mainRank) {
      const rank = movedRank(digits[dateAt] as number);
      if (rank === null) continue;
      if (rank < 0) return undefined; // not a bucket of the main period: SQL answers
      digits[dateAt] = rank;
    }
    moved.push(digits.reduce((sum, digit, d) => sum + digit * (dimensions[d]?.stride ?? 1), 0));
    slots.push(previous.slots[n] as number);
  }
  return { keys: moved, slots };
}

/**
 * The compared rows of a plan with a comparison, or undefined when SQL should answer it. The keys
 * are moved and the rows built in time slices (issue 26, item 6: 60,000 compared rows took seconds
 * of the event loop in one go).
 */
export async function executeCompared(
  snapshot: Snapshot,
  plan: ReportPlan & { readonly comparison: ComparisonPlan },
  buckets: { readonly main?: DayBuckets; readonly previous?: DayBuckets },
  paths: ExecutionPaths = EXECUTION_PATHS,
): Promise<ReportRows | undefined> {
  const slices = new TimeSlices();
  const { comparison } = plan;
  const previousPlan: ReportPlan = {
    ...plan,
    periodStart: comparison.periodStart,
    periodEnd: comparison.periodEnd,
  };
  const main = await aggregate(snapshot, plan, buckets.main, paths, slices);
  await slices.pause();
  const previous = await aggregate(snapshot, previousPlan, buckets.previous, paths, slices);
  await slices.pause();
  if (!main || !previous) return undefined;
  const values = (mainSlot: number, previousSlot: number) => ({
    current: (id: Parameters<typeof slotMetric>[2]) => slotMetric(main.sums, mainSlot, id),
    previous: (id: Parameters<typeof slotMetric>[2]) => slotMetric(previous.sums, previousSlot, id),
  });
  if (plan.dimensions.length === 0) {
    // T5, O1: one totals row of each period, skipped by any offset.
    const rows =
      plan.offset > 0
        ? []
        : [
            comparedRow(plan, {
              dimension: () => '',
              datePrevious: null,
              ...values(main.keys.length > 0 ? 0 : -1, previous.keys.length > 0 ? 0 : -1),
            }),
          ];
    return { rows, truncated: false };
  }
  const byDate = plan.dimensions.includes('date');
  if (byDate && (!buckets.main || !buckets.previous)) return undefined;
  const frames = byDate
    ? {
        main: frameOf(buckets.main as DayBuckets, plan, plan.granularity),
        previous: frameOf(buckets.previous as DayBuckets, comparison, plan.granularity),
      }
    : undefined;
  if (frames && (!frames.main || !frames.previous)) return undefined;
  const known = frames as { main: Frame; previous: Frame } | undefined;
  const moved = await movedKeys(main, previous, known, plan.granularity, slices);
  if (!moved) return undefined;

  return merged(plan, main, moved, known, values, slices);
}

type Values = Pick<Parameters<typeof comparedRow>[1], 'current' | 'previous'>;

/**
 * The two sorted key lists walked together (a key in both: one row), the rows before `offset`
 * counted but not built, those after `offset + limit` only noticed (O1, T6).
 */
async function merged(
  plan: ReportPlan,
  main: Aggregate,
  moved: { readonly keys: readonly number[]; readonly slots: readonly number[] },
  frames: { readonly main: Frame; readonly previous: Frame } | undefined,
  values: (mainSlot: number, previousSlot: number) => Values,
  slices: TimeSlices,
): Promise<ReportRows> {
  if (plan.sort.length > 0) return sortedMerge(plan, main, moved, frames, values, slices);
  const rows: ReportRow[] = [];
  const previousDay = frames && previousDays(frames, plan.granularity);
  const end = plan.offset + plan.limit;
  let [m, p, n] = [0, 0, 0];
  while (m < main.keys.length || p < moved.keys.length) {
    const mainKey = m < main.keys.length ? (main.keys[m] as number) : Infinity;
    const previousKey = p < moved.keys.length ? (moved.keys[p] as number) : Infinity;
    const key = Math.min(mainKey, previousKey);
    if (n >= end) return { rows, truncated: true };
    if (n >= plan.offset) {
      if (slices.due()) await slices.next();
      const mainSlot = mainKey === key ? (main.slots[m] as number) : -1;
      const previousSlot = previousKey === key ? (moved.slots[p] as number) : -1;
      rows.push(rowOf(plan, main, key, previousDay, values(mainSlot, previousSlot)));
    }
    if (mainKey === key) m++;
    if (previousKey === key) p++;
    n++;
  }
  return { rows, truncated: false };
}

/**
 * L7 with PC1: every matched row's key and slots (in key order, T3), then `sort`'s order on the
 * main period's values, then O1 and T6 (src/query/compile-compared.ts sorts the matched rows so).
 */
async function sortedMerge(
  plan: ReportPlan,
  main: Aggregate,
  moved: { readonly keys: readonly number[]; readonly slots: readonly number[] },
  frames: { readonly main: Frame; readonly previous: Frame } | undefined,
  values: (mainSlot: number, previousSlot: number) => Values,
  slices: TimeSlices,
): Promise<ReportRows> {
  const matched: { key: number; mainSlot: number; previousSlot: number }[] = [];
  let [m, p] = [0, 0];
  while (m < main.keys.length || p < moved.keys.length) {
    const mainKey = m < main.keys.length ? (main.keys[m] as number) : Infinity;
    const previousKey = p < moved.keys.length ? (moved.keys[p] as number) : Infinity;
    const key = Math.min(mainKey, previousKey);
    matched.push({
      key,
      mainSlot: mainKey === key ? (main.slots[m++] as number) : -1,
      previousSlot: previousKey === key ? (moved.slots[p++] as number) : -1,
    });
  }
  const order = await sortedOrder(plan, main.weights.dimensions, matched.length, {
    key: (n) => (matched[n] as { key: number }).key,
    metric: (n, id) => slotMetric(main.sums, (matched[n] as { mainSlot: number }).mainSlot, id),
    slices,
  });
  const end = Math.min(matched.length, plan.offset + plan.limit);
  const rows: ReportRow[] = [];
  const previousDay = frames && previousDays(frames, plan.granularity);
  for (let k = plan.offset; k < end; k++) {
    if (slices.due()) await slices.next();
    const { key, mainSlot, previousSlot } = matched[
      order ? (order[k] as number) : k
    ] as (typeof matched)[number];
    rows.push(rowOf(plan, main, key, previousDay, values(mainSlot, previousSlot)));
  }
  return { rows, truncated: matched.length > end };
}

/**
 * PC1's `date_previous` of a main bucket: the first day of the comparison's bucket of the same
 * index k, null past its last. Remembered by bucket (at most one per day of the period): a
 * 100,000-row answer has few distinct dates, and working each out again took a tenth of the
 * server's time under one organization's burst of compared answers (issue 29, item 2).
 */
function previousDays(
  frames: { readonly main: Frame; readonly previous: Frame },
  granularity: Granularity,
): (date: string) => string | null {
  const known = new Map<string, string | null>();
  return (date) => {
    let previous = known.get(date);
    if (previous === undefined) {
      const k = bucketIndex(frames.main.first, date, granularity);
      previous = k < frames.previous.count ? bucketAt(frames.previous.first, k, granularity) : null;
      known.set(date, previous);
    }
    return previous;
  };
}

function rowOf(
  plan: ReportPlan,
  main: Aggregate,
  key: number,
  previousDay: ((date: string) => string | null) | undefined,
  values: Values,
): ReportRow {
  const digits = digitsOf(main, key);
  const value = new Map<DimensionId, string>(
    main.weights.dimensions.map((d, i) => [d.id, d.sorted[digits[i] as number] as string]),
  );
  const datePrevious = previousDay ? previousDay(value.get('date') as string) : null;
  return comparedRow(plan, { dimension: (id) => value.get(id) as string, datePrevious, ...values });
}
