// The engine behind the report slots (issue 7, finding 6): every computation, from the API or the
// Revenue page, takes a slot first (src/limits/report-slots.ts) and gives it back when it ends,
// fails or its client goes away.
import type { ReportPlan } from '../query/plan.js';
import type { ReportSlots } from '../limits/report-slots.js';
import type { ReportEngine, ReportRowSequence, ReportRows } from './engine.js';
import { asOrganization } from '../limits/organization-turns.js';

export class LimitedReportEngine implements ReportEngine {
  constructor(
    private readonly inner: ReportEngine,
    readonly slots: ReportSlots,
  ) {}

  run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows> {
    return this.inSlot(plan, signal, () => this.inner.run(plan, signal));
  }

  /**
   * The slot is held while the answer is computed; rows built as they are read are built after,
   * by their serialization, in the organization's turns and within its answer memory (issue 29).
   */
  runInPieces(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRowSequence> {
    return this.inSlot(plan, signal, () =>
      this.inner.runInPieces ? this.inner.runInPieces(plan, signal) : this.inner.run(plan, signal),
    );
  }

  private async inSlot<T>(
    plan: ReportPlan,
    signal: AbortSignal | undefined,
    work: () => Promise<T>,
  ): Promise<T> {
    const release = await this.slots.acquire(plan.organizationId, signal);
    try {
      // Issue 29, item 2: the computation's slices take the organization's turns.
      return await asOrganization(plan.organizationId, work);
    } finally {
      release();
    }
  }
}
