// PC1: a compared row as both engines answer it, from the matched values of the two periods.
import type { DimensionId, MetricId } from '../catalog.js';
import { changeOf, percentChange, previousOf } from '../query/compare.js';

/** engine.ts's ReportRow, written out: engine.ts imports this module. */
type ReportRow = Record<string, string | number | null>;

export interface MatchedValues {
  /** The row's dimension values, the main period's (`date`: the main bucket's first day). */
  readonly dimension: (id: DimensionId) => string;
  /** The first day of the k-th comparison bucket; null when the comparison has none (with `date`). */
  readonly datePrevious: string | null;
  /** Each side's metric, zeros on a side without orders in the row. */
  readonly current: (id: MetricId) => number;
  readonly previous: (id: MetricId) => number;
}

/**
 * The row's fields in PC1's order: the dimensions (`date_previous` right after `date`), the
 * metrics, `<metric>_previous`, `<metric>_change`; the comparison's fields null when its k-th
 * bucket does not exist.
 */
export function comparedRow(
  plan: { readonly dimensions: readonly DimensionId[]; readonly metrics: readonly MetricId[] },
  values: MatchedValues,
): ReportRow {
  const row: ReportRow = {};
  const byDate = plan.dimensions.includes('date');
  const hasPrevious = !byDate || values.datePrevious !== null;
  for (const id of plan.dimensions) {
    row[id] = values.dimension(id);
    if (id === 'date') row[namesOf(id).previous] = values.datePrevious;
  }
  for (const id of plan.metrics) row[id] = values.current(id);
  for (const id of plan.metrics) row[namesOf(id).previous] = hasPrevious ? values.previous(id) : null;
  for (const id of plan.metrics) {
    const previous = row[namesOf(id).previous];
    row[namesOf(id).change] = percentChange(
      values.current(id),
      typeof previous === 'number' ? previous : null,
    );
  }
  return row;
}

/**
 * A field's added names, written once per catalog id (a bounded set) rather than once per row: a
 * 100,000-row compared answer built each as a new string, then looked up as a key (issue 29, item 2).
 */
const addedNames = new Map<string, { readonly previous: string; readonly change: string }>();

function namesOf(id: DimensionId | MetricId): { readonly previous: string; readonly change: string } {
  let names = addedNames.get(id);
  if (names === undefined) {
    names = { previous: previousOf(id), change: changeOf(id) };
    addedNames.set(id, names);
  }
  return names;
}
