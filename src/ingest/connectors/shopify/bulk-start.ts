// How the backfill's bulk operation is started (issue 21, item 2), so that a shop never runs two
// of ours for one backfill. Before API version 2026-01 Shopify ran one bulk query per app and
// shop at a time: a second `bulkOperationRunQuery` was refused (OPERATION_IN_PROGRESS). Since
// 2026-01 up to five run at once, so a mutation sent again (its answer lost to a timeout under
// load, a server killed before saving its cursor) would start a SECOND operation, the first left
// gathering unwatched. Hence, before starting one and after a mutation whose answer was lost,
// the connector looks for an operation of its own query (`bulkOperations` since 2026-01,
// `currentBulkOperation` before) that is running or completed within the hour, and adopts it:
// polled and read as if just started. The mutation itself is never retried blindly.
import { ConnectorError } from '../connector.js';
import { sleep, type RetryPolicy } from '../polite-get.js';
import { BULK_ORDERS, type BulkStep } from './bulk.js';
import type { ShopifyGraphql } from './graphql.js';
import { nodesOf } from './mapping.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const RUN = `mutation SalesMetricsBulkOrders($query: String!) {
  bulkOperationRunQuery(query: $query) {
    bulkOperation { id status }
    userErrors { field message code }
  }
}`;
const FIELDS = 'id status query createdAt completedAt';
const CURRENT = `query SalesMetricsCurrentBulkOperation {
  currentBulkOperation(type: QUERY) { ${FIELDS} }
}`;
/** The app's newest bulk queries (newest first by default); cost 2 + one point each. */
const LISTED = 25;
const LIST = `query SalesMetricsBulkOperations($query: String!) {
  bulkOperations(first: ${LISTED}, sortKey: CREATED_AT, query: $query) { nodes { ${FIELDS} } }
}`;
/** Shopify stops a bulk query after 10 days: an older one cannot be running. */
const LIST_DAYS = 10;
/** A completed operation of ours this recent is read instead of gathering the shop again. */
export const ADOPT_COMPLETED_MS = 60 * 60_000;

/** Several bulk queries at once, and `bulkOperations` to list them: API 2026-01 and later. */
export const manyBulkQueries = (version: string): boolean => version >= '2026-01';

/** The same query, whatever its spacing. */
const sameQuery = (a: string, b: string) => a.replace(/\s+/g, ' ').trim() === b.replace(/\s+/g, ' ').trim();
const shopInstant = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

async function ownCandidates(client: ShopifyGraphql, version: string): Promise<Json[]> {
  if (manyBulkQueries(version)) {
    const since = shopInstant(new Date(Date.now() - LIST_DAYS * 86_400_000));
    const data = await client.query(
      LIST,
      { query: `operation_type:query created_at:>='${since}'` },
      2 + LISTED,
    );
    return nodesOf(data.bulkOperations);
  }
  const data = await client.query(CURRENT, {}, 1);
  return isObject(data.currentBulkOperation) ? [data.currentBulkOperation] : [];
}

const usable = (operation: Json, now: number): boolean => {
  if (operation.status === 'CREATED' || operation.status === 'RUNNING') return true;
  const completed = Date.parse(String(operation.completedAt ?? operation.createdAt ?? ''));
  return operation.status === 'COMPLETED' && now - completed < ADOPT_COMPLETED_MS;
};

/**
 * This connector's own bulk query, running or just completed (the newest when several are), as
 * a started operation; undefined when there is none, or the shop cannot list them.
 */
export async function findOwnBulk(client: ShopifyGraphql, version: string): Promise<BulkStep | undefined> {
  let operations: Json[];
  try {
    operations = await ownCandidates(client, version);
  } catch (error) {
    if (error instanceof ConnectorError && error.kind === 'protocol') return undefined;
    throw error;
  }
  const now = Date.now();
  const own = operations
    .filter((o) => typeof o.id === 'string' && typeof o.query === 'string' && sameQuery(o.query, BULK_ORDERS))
    .filter((o) => usable(o, now))
    .map((o) => ({ id: String(o.id), createdAt: new Date(String(o.createdAt ?? '')) }))
    .sort((a, b) => (b.createdAt.getTime() || 0) - (a.createdAt.getTime() || 0));
  const newest = own[0];
  if (!newest) return undefined;
  // Changes are then asked from when it began gathering, not from now (sync.ts: changes_since).
  const known = !Number.isNaN(newest.createdAt.getTime());
  return { kind: 'started', id: newest.id, ...(known ? { createdAt: newest.createdAt } : {}) };
}

/** The mutation's answer: started, or refused (one running that is not ours, the bulk API absent). */
async function answerOf(data: Json, client: ShopifyGraphql, version: string): Promise<BulkStep> {
  const payload = isObject(data.bulkOperationRunQuery) ? data.bulkOperationRunQuery : {};
  const operation = isObject(payload.bulkOperation) ? payload.bulkOperation : undefined;
  if (operation && typeof operation.id === 'string') return { kind: 'started', id: operation.id };
  const errors = Array.isArray(payload.userErrors) ? payload.userErrors.filter(isObject) : [];
  // Started in the meantime by ourselves after all: adopted; another query of the app: refused.
  if (errors.some((e) => e.code === 'OPERATION_IN_PROGRESS')) {
    return (await findOwnBulk(client, version)) ?? { kind: 'refused' };
  }
  return { kind: 'refused' };
}

/**
 * The backfill's operation: one of ours adopted, else started once. A mutation whose answer is
 * lost (timeout, 429, 5xx) is followed by a look at the shop's operations before it is sent
 * again; `refused` when the shop will not run it (the caller walks the pages instead).
 */
export async function startBulk(
  client: ShopifyGraphql,
  version: string,
  retry: RetryPolicy,
): Promise<BulkStep> {
  const adopted = await findOwnBulk(client, version);
  if (adopted) return adopted;
  for (let attempt = 1; ; attempt++) {
    try {
      return await answerOf(await client.query(RUN, { query: BULK_ORDERS }, 10, true), client, version);
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      // No bulk API here (an older or partial one): the history is walked page by page.
      if (error.kind === 'protocol') return { kind: 'refused' };
      if (!error.transient || attempt >= retry.attempts) throw error;
      const waitS = error.retryAfterS;
      if (waitS !== undefined && waitS > retry.maxRetryAfterS) throw error;
      await sleep(
        waitS !== undefined ? waitS * 1000 : Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt),
      );
      const started = await findOwnBulk(client, version);
      if (started) return started;
    }
  }
}
