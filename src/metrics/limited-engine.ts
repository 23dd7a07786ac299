// The engine behind the report slots (issue 7, finding 6): every computation, from the API or the
// Revenue page, takes a slot first (src/limits/report-slots.ts) and gives it back when it ends,
// fails or its client goes away.
import type { ReportPlan } from '../query/plan.js';
import type { ReportSlots } from '../limits/report-slots.js';
import type { ReportEngine, ReportRowSequence, ReportRows } from './engine.js';
import { asOrganization } from '../limits/organization-turns.js';

export class LimitedReportEngine implements ReportEngine {
  /**
   * Issue 28: of the reports that waited for their organization's build (beforeSlot), the last to
   * ask for its slot, by organization: they ask one after the other, each once the one before it
   * got its slot, so that those the build lets go at once queue one at a time instead of finding
   * the organization's queue full together (SERVICE_BUSY).
   */
  private readonly afterBuild = new Map<string, Promise<unknown>>();

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
    // Issue 28: a wait for the organization's build holds no slot (the others' reports go on).
    const waited = (await this.inner.beforeSlot?.(plan, signal)) === true;
    const release = await (waited
      ? this.inTurn(plan.organizationId, signal)
      : this.slots.acquire(plan.organizationId, signal));
    try {
      // Issue 29, item 2: the computation's slices take the organization's turns.
      return await asOrganization(plan.organizationId, work);
    } finally {
      release();
    }
  }

  /** A slot, asked for once the report before it in afterBuild has its own (or gave up). */
  private async inTurn(organizationId: string, signal: AbortSignal | undefined): Promise<() => void> {
    const before = this.afterBuild.get(organizationId) ?? Promise.resolve();
    const mine = before.then(() => this.slots.acquire(organizationId, signal));
    const settled = mine.catch(() => undefined);
    this.afterBuild.set(organizationId, settled);
    try {
      return await mine;
    } finally {
      if (this.afterBuild.get(organizationId) === settled) this.afterBuild.delete(organizationId);
    }
  }
}
