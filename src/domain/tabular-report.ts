// GET /api/reports/tabular as a use case (sections 6–7, C1): the answer of a parsed query for an
// organization, from the response cache when it holds one, else computed by the report engine
// and shaped into the body the API sends. The route only parses, calls this and maps the result.
import type { ReportEngine } from '../metrics/engine.js';
import { NO_EXTENSIONS, type Format, type TabularQuery } from '../query/parse.js';
import { planReport } from '../query/plan.js';
import type { Organization } from './organizations.js';
import { reportCsv } from './report-csv.js';

/** A finished answer: its body (JSON, or CSV under V1), and whether rows were left out (T6, O1). */
export interface TabularAnswer {
  readonly body: string;
  readonly truncated: boolean;
}

/** Where answers are kept for a minute (C1): in the instance, or shared through Redis. */
export interface AnswerCache {
  get(key: string): Promise<TabularAnswer | undefined>;
  set(key: string, answer: TabularAnswer): Promise<void>;
}

/**
 * C1's key, plus the Report settings, so that a settings change is never hidden by a cached answer,
 * and section 14's parameters (F1, G2, O1, V1) when a request uses them.
 */
function tabularCacheKey(organization: Organization, q: TabularQuery, format: Format): string {
  const { excludedStatuses, deductions } = organization.settings;
  const key: unknown[] = [
    organization.id,
    q.dimensions,
    q.metrics,
    q.from,
    q.to,
    q.timezone,
    q.limit,
    excludedStatuses,
    deductions,
  ];
  if (format !== 'json' || !usesNoExtension(q)) key.push(format, q.filters, q.granularity, q.offset);
  return JSON.stringify(key);
}

const usesNoExtension = (q: TabularQuery): boolean =>
  Object.keys(q.filters).length === 0 &&
  q.granularity === NO_EXTENSIONS.granularity &&
  q.offset === NO_EXTENSIONS.offset;

/**
 * The JSON body: T2's fields, and section 14's parameters only where they differ from their
 * defaults (after `timezone`), so that a request without them gets exactly the reference's answer.
 */
function jsonBody(query: TabularQuery, rows: unknown[]): string {
  return JSON.stringify({
    dimensions: query.dimensions,
    metrics: query.metrics,
    from: query.from,
    to: query.to,
    timezone: query.timezone,
    ...(query.granularity === NO_EXTENSIONS.granularity ? {} : { granularity: query.granularity }),
    ...(Object.keys(query.filters).length === 0 ? {} : { filters: query.filters }),
    ...(query.offset === NO_EXTENSIONS.offset ? {} : { offset: query.offset }),
    rows,
    rowCount: rows.length,
  });
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
  format: Format,
  cancellation?: Cancellation,
): Promise<TabularAnswer> {
  const key = tabularCacheKey(organization, query, format);
  const cached = await deps.cache.get(key);
  if (cached) return cached;
  const cancel = cancellation?.();
  const { rows, truncated } = await deps.engine
    .run(planReport(query, organization), cancel?.signal)
    .finally(() => cancel?.done());
  const body =
    format === 'csv' ? reportCsv([...query.dimensions, ...query.metrics], rows) : jsonBody(query, rows);
  const answer = { body, truncated };
  await deps.cache.set(key, answer);
  return answer;
}
