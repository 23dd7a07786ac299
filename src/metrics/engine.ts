// Step 4: running a plan. The engine is one narrow interface — a planned query in, rows out — so
// a faster engine can be added later without touching the HTTP code.
import type { Queryable } from '../db/database.js';
import { compileReport } from '../query/compile.js';
import type { ReportPlan } from '../query/plan.js';

export type ReportRow = Record<string, string | number>;

export interface ReportRows {
  readonly rows: ReportRow[];
  /** T6, O1: rows remain after the plan's offset + limit. */
  readonly truncated: boolean;
}

export interface ReportEngine {
  run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows>;
}

export class SqlReportEngine implements ReportEngine {
  constructor(private readonly db: Queryable) {}

  async run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows> {
    const { sql, params } = compileReport(plan);
    const raw = await this.db.query(sql, params, signal ? { signal } : {});
    const truncated = raw.length > plan.limit;
    const rows = (truncated ? raw.slice(0, plan.limit) : raw).map((r) => {
      // T2: dimension ids then metric ids, in request order; M2: metrics as JSON numbers.
      const row: ReportRow = {};
      for (const id of plan.dimensions) row[id] = String(r[id]);
      for (const id of plan.metrics) row[id] = Number(r[id]);
      return row;
    });
    return { rows, truncated };
  }
}
