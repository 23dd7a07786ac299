// Step 4: running a plan. The engine is one narrow interface — a planned query in, rows out — so
// a faster engine can be added later without touching the HTTP code.
import type { Queryable, Row } from '../db/database.js';
import { TimeSlices } from '../limits/time-slice.js';
import { compileReport } from '../query/compile.js';
import {
  compileComparedReport,
  HAS_PREVIOUS,
  mainColumn,
  previousColumn,
} from '../query/compile-compared.js';
import type { ReportPlan } from '../query/plan.js';
import { comparedRow } from './compared-rows.js';

/** A row's fields; null only in a compared row's comparison fields (PC1). */
export type ReportRow = Record<string, string | number | null>;

export interface ReportRows {
  readonly rows: ReportRow[];
  /** T6, O1: rows remain after the plan's offset + limit. */
  readonly truncated: boolean;
}

export interface ReportEngine {
  run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows>;
  /** At a stop: ends the engine's background work (the columnar engine's saves). */
  close?(): Promise<void>;
}

/** Each database row shaped, in time slices (issue 26, item 6: 60,000 compared rows held the event loop for seconds). */
async function shaped(raw: readonly Row[], shape: (row: Row) => ReportRow): Promise<ReportRow[]> {
  const slices = new TimeSlices();
  const rows: ReportRow[] = [];
  for (const r of raw) {
    if (slices.due()) await slices.next();
    rows.push(shape(r));
  }
  return rows;
}

export class SqlReportEngine implements ReportEngine {
  constructor(private readonly db: Queryable) {}

  async run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows> {
    if (plan.comparison) return this.runCompared({ ...plan, comparison: plan.comparison }, signal);
    const { sql, params } = compileReport(plan);
    const raw = await this.db.query(sql, params, signal ? { signal } : {});
    const truncated = raw.length > plan.limit;
    // T2: dimension ids then metric ids, in request order; M2: metrics as JSON numbers.
    const rows = await shaped(truncated ? raw.slice(0, plan.limit) : raw, (r) => {
      const row: ReportRow = {};
      for (const id of plan.dimensions) row[id] = String(r[id]);
      for (const id of plan.metrics) row[id] = Number(r[id]);
      return row;
    });
    return { rows, truncated };
  }

  /** PC1: one statement matches the two periods; each row shaped by comparedRow. */
  private async runCompared(
    plan: Parameters<typeof compileComparedReport>[0],
    signal?: AbortSignal,
  ): Promise<ReportRows> {
    const { sql, params } = compileComparedReport(plan);
    const raw = await this.db.query(sql, params, signal ? { signal } : {});
    const truncated = raw.length > plan.limit;
    const rows = await shaped(truncated ? raw.slice(0, plan.limit) : raw, (r) =>
      comparedRow(plan, {
        dimension: (id) => String(r[id]),
        datePrevious: r[HAS_PREVIOUS] === true ? String(r.date_previous ?? '') : null,
        current: (id) => Number(r[mainColumn(id)]),
        previous: (id) => Number(r[previousColumn(id)]),
      }),
    );
    return { rows, truncated };
  }
}
