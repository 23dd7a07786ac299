// L7 over a snapshot's rows: `sort`'s keys first (metrics compared as the numbers the answer
// shows, dimensions in T3 order, each ascending or descending), then the rows' key order, which is
// T3's (execute.ts), as the SQL engine's ORDER BY (src/query/compile.ts's rowOrder) does.
import { isDimensionId, type MetricId } from '../../catalog.js';
import type { TimeSlices } from '../../limits/time-slice.js';
import type { ReportPlan } from '../../query/plan.js';

/** A dimension's digits in the rows' keys (scan-settings.ts's DimensionKey). */
export interface SortDimension {
  readonly id: string;
  /** Values in T3 order: a digit is an index into it. */
  readonly sorted: readonly string[];
  readonly stride: number;
}

export interface SortableRows {
  /** The n-th row's key (rows are given in key order). */
  readonly key: (n: number) => number;
  /** The n-th row's metric as the answer shows it (PC1: the main period's). */
  readonly metric: (n: number, id: MetricId) => number;
  readonly slices: TimeSlices;
}

/** Rows' sort key values computed once a row, in time slices, before one sort. */
const PAUSE_EVERY = 4096;

/**
 * The rows' indices in L7's order, or undefined without `sort` (the key order is T3's). Stable:
 * rows equal on every key stay in key order (T3).
 */
export async function sortedOrder(
  plan: ReportPlan,
  dimensions: readonly SortDimension[],
  count: number,
  rows: SortableRows,
): Promise<Int32Array | undefined> {
  if (plan.sort.length === 0 || count === 0) return undefined;
  const columns = plan.sort.map(({ id, descending }) => ({
    values: new Float64Array(count),
    sign: descending ? -1 : 1,
    dimension: isDimensionId(id) ? dimensions.find((d) => d.id === id) : undefined,
    metric: isDimensionId(id) ? undefined : id,
  }));
  for (let n = 0; n < count; n++) {
    if (n % PAUSE_EVERY === 0 && rows.slices.due()) await rows.slices.next();
    for (const column of columns) {
      const { dimension, metric } = column;
      // A dimension's digit is its value's T3 rank: digits compare as the values do.
      column.values[n] = dimension
        ? Math.floor(rows.key(n) / dimension.stride) % Math.max(1, dimension.sorted.length)
        : rows.metric(n, metric as MetricId);
    }
  }
  const order = Int32Array.from({ length: count }, (_, n) => n);
  order.sort((a, b) => {
    for (const { values, sign } of columns) {
      const difference = (values[a] as number) - (values[b] as number);
      if (difference !== 0) return sign * difference;
    }
    return a - b;
  });
  return order;
}
