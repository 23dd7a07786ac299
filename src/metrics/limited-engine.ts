// The engine behind the report slots (issue 7, finding 6): every computation, from the API or the
// Revenue page, takes a slot first (src/limits/report-slots.ts) and gives it back when it ends,
// fails or its client goes away.
import type { ReportPlan } from '../query/plan.js';
import type { ReportSlots } from '../limits/report-slots.js';
import type { ReportEngine, ReportRows } from './engine.js';
import { asOrganization } from '../limits/organization-turns.js';

export class LimitedReportEngine implements ReportEngine {
  constructor(
    private readonly inner: ReportEngine,
    readonly slots: ReportSlots,
  ) {}

  async run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows> {
    const release = await this.slots.acquire(plan.organizationId, signal);
    try {
      // Issue 29, item 2: the computation's slices take the organization's turns.
      return await asOrganization(plan.organizationId, () => this.inner.run(plan, signal));
    } finally {
      release();
    }
  }
}
