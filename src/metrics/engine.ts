// Step 4: running a plan. The engine is one narrow interface — a planned query in, rows out — so
// a faster engine can be added later without touching the HTTP code.
import type { PagedQueryable, Queryable, Row } from '../db/database.js';
import { TimeSlices } from '../limits/time-slice.js';
import { compileReport, type CompiledQuery } from '../query/compile.js';
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

/** Rows read a piece at a time: an array, or rows built only as they are read (RowsOnDemand). */
export interface RowSequence {
  readonly length: number;
  /** The rows from `start` to `end` (0 ≤ start ≤ end), as Array.prototype.slice gives them. */
  slice(start: number, end: number): ReportRow[];
}

export interface ReportRowSequence {
  readonly rows: RowSequence;
  readonly truncated: boolean;
}

export interface ReportEngine {
  run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows>;
  /**
   * The same answer as run(), its rows possibly built only as they are read (issue 29, item 2):
   * for an answer serialized a piece at a time then dropped, the API's, so that each piece's
   * row objects die young instead of a 100,000-row answer's all outliving the young generation.
   */
  runInPieces?(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRowSequence>;
  /**
   * Waits, before the report takes a report slot, for what its answer would wait for anyway (the
   * columnar engine: its organization's snapshot being built, issue 28), or refuses it; true when
   * it waited.
   */
  beforeSlot?(plan: ReportPlan, signal?: AbortSignal): Promise<boolean>;
  /** At a stop: ends the engine's background work (the columnar engine's saves). */
  close?(): Promise<void>;
}

type Shape = (row: Row) => ReportRow;

export class SqlReportEngine implements ReportEngine {
  constructor(private readonly db: Queryable | PagedQueryable) {}

  async run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows> {
    if (plan.comparison) return this.runCompared({ ...plan, comparison: plan.comparison }, signal);
    // T2: dimension ids then metric ids, in request order; M2: metrics as JSON numbers.
    return this.shapedRows(compileReport(plan), plan.limit, signal, (r) => {
      const row: ReportRow = {};
      for (const id of plan.dimensions) row[id] = String(r[id]);
      for (const id of plan.metrics) row[id] = Number(r[id]);
      return row;
    });
  }

  /** PC1: one statement matches the two periods; each row shaped by comparedRow. */
  private runCompared(
    plan: Parameters<typeof compileComparedReport>[0],
    signal?: AbortSignal,
  ): Promise<ReportRows> {
    return this.shapedRows(compileComparedReport(plan), plan.limit, signal, (r) =>
      comparedRow(plan, {
        dimension: (id) => String(r[id]),
        datePrevious: r[HAS_PREVIOUS] === true ? String(r.date_previous ?? '') : null,
        current: (id) => Number(r[mainColumn(id)]),
        previous: (id) => Number(r[previousColumn(id)]),
      }),
    );
  }

  /**
   * The statement's first `limit` rows (it asks for one more: T6), each shaped in time slices as
   * its page arrives (issue 26, item 6: 60,000 compared rows, read and shaped in one go, held the
   * event loop for seconds).
   */
  private async shapedRows(
    { sql, params }: CompiledQuery,
    limit: number,
    signal: AbortSignal | undefined,
    shape: Shape,
  ): Promise<ReportRows> {
    const rows: ReportRow[] = [];
    let truncated = false;
    const onPage = async (page: readonly Row[]) => {
      const slices = new TimeSlices();
      for (const r of page) {
        if (rows.length === limit) return void (truncated = true);
        if (slices.due()) await slices.next();
        rows.push(shape(r));
      }
    };
    const options = signal ? { signal } : {};
    if ('queryPages' in this.db) await this.db.queryPages(sql, params, onPage, options);
    else await onPage(await this.db.query(sql, params, options));
    return { rows, truncated };
  }
}
