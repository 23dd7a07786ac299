// GET /api/reports/tabular as a use case (sections 6–7, C1): the answer of a parsed query for an
// organization, from the response cache when it holds one, else computed by the report engine
// and shaped into the body the API sends. The route only parses, calls this and maps the result.
import type { ReportEngine } from '../metrics/engine.js';
import type { TabularQuery } from '../query/parse.js';
import { planReport } from '../query/plan.js';
import type { Organization } from './organizations.js';

/** A finished answer: its JSON body, and whether rows were left out (T6). */
export interface TabularAnswer {
  readonly body: string;
  readonly truncated: boolean;
}

/** Where answers are kept for a minute (C1): in the instance, or shared through Redis. */
export interface AnswerCache {
  get(key: string): Promise<TabularAnswer | undefined>;
  set(key: string, answer: TabularAnswer): Promise<void>;
}

/** C1's key, plus the Report settings, so that a settings change is never hidden by a cached answer. */
function tabularCacheKey(organization: Organization, q: TabularQuery): string {
  const { excludedStatuses, deductions } = organization.settings;
  return JSON.stringify([
    organization.id,
    q.dimensions,
    q.metrics,
    q.from,
    q.to,
    q.timezone,
    q.limit,
    excludedStatuses,
    deductions,
  ]);
}

/**
 * Called only when an answer must be computed (a cached one needs none): the signal that cancels
 * the computation, and what to call once it has ended.
 */
export type Cancellation = () => { readonly signal: AbortSignal; readonly done: () => void };

export async function runTabularReport(
  deps: { readonly engine: ReportEngine; readonly cache: AnswerCache },
  organization: Organization,
  query: TabularQuery,
  cancellation?: Cancellation,
): Promise<TabularAnswer> {
  const key = tabularCacheKey(organization, query);
  const cached = await deps.cache.get(key);
  if (cached) return cached;
  const cancel = cancellation?.();
  const { rows, truncated } = await deps.engine
    .run(planReport(query, organization), cancel?.signal)
    .finally(() => cancel?.done());
  const body = {
    dimensions: query.dimensions,
    metrics: query.metrics,
    from: query.from,
    to: query.to,
    timezone: query.timezone,
    rows,
    rowCount: rows.length,
  };
  const answer = { body: JSON.stringify(body), truncated };
  await deps.cache.set(key, answer);
  return answer;
}
