// A Shopify shop's history through a bulk operation (issue 21, item 2): bulkOperationRunQuery over
// all orders, polled until done, its JSONL result (`url`) read a slice at a time with byte ranges,
// so memory holds one slice whatever the file's size. Nested connections (line items, shipping
// lines) arrive as their own lines, each with `__parentId`, somewhere after their order (issue 26:
// not right after it since API 2026-01, bulk-file.ts reads the file from its end). The backfill
// cursor says where the walk is, saved with each page written: `bulk:ID` while the operation
// runs, `bulk:ID:to:POSITION` while its file is read (the bytes before POSITION still to read), so
// a restart resumes the same operation where it stopped instead of starting over. How one is
// started, or an operation of this same query adopted, is bulk-start.ts.
import { ConnectorError } from '../connector.js';
import { sleep, type RetryPolicy } from '../polite-get.js';
import type { StoreHttpOptions } from '../store-http.js';
import { fileSizeOf, readBackward, type BackwardSlice } from './bulk-file.js';
import type { ShopifyGraphql } from './graphql.js';
import { LINE_ITEM_FIELDS } from './queries.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const MONEY = '{ shopMoney { amount } }';
/**
 * The bulk query: the page query's order fields, connections without `first`. No refunds: in a
 * bulk query a connection may not sit inside a list field (Order.refunds is a list), so the
 * refunds' line items cannot be asked for here; an order with refunds is read again whole by id
 * (shopify.ts), as it already was for its refunds' taxes.
 */
export const BULK_ORDERS = `{
  orders(sortKey: ID) {
    edges { node {
      id legacyResourceId processedAt updatedAt cancelledAt displayFinancialStatus test email currencyCode
      taxesIncluded
      billingAddress { countryCodeV2 }
      totalPriceSet ${MONEY}
      totalTaxSet ${MONEY}
      totalShippingPriceSet ${MONEY}
      totalRefundedSet ${MONEY}
      originalTotalDutiesSet ${MONEY}
      originalTotalAdditionalFeesSet ${MONEY}
      lineItems { edges { node { ${LINE_ITEM_FIELDS} } } }
      shippingLines { edges { node { id taxLines { priceSet ${MONEY} } } } }
    } }
  }
}`;

const POLL = `query SalesMetricsBulkOperation($id: ID!) {
  bulkOperation(id: $id) { id status errorCode objectCount url fileSize }
}`;

/**
 * How long one history call waits for a running operation before giving its page back, by
 * default (SHOPIFY_BULK_POLL_MS): a look costs one point of the shop's bucket.
 */
export const BULK_POLL_MS = 1_000;

export type BulkStep =
  | { readonly kind: 'started'; readonly id: string; readonly createdAt?: Date }
  | { readonly kind: 'refused' }
  | { readonly kind: 'running'; readonly objects: number }
  | { readonly kind: 'done'; readonly url: string | undefined; readonly size: number | undefined }
  | { readonly kind: 'failed' };

/** The operation's state, waiting `waitMs` while it runs. */
export async function pollBulk(client: ShopifyGraphql, id: string, waitMs = BULK_POLL_MS): Promise<BulkStep> {
  let data: Json;
  try {
    data = await client.query(POLL, { id }, 1);
  } catch (error) {
    if (error instanceof ConnectorError && error.kind === 'protocol') return { kind: 'failed' };
    throw error;
  }
  const operation = isObject(data.bulkOperation) ? data.bulkOperation : undefined;
  const status = String(operation?.status ?? '');
  if (status === 'COMPLETED') {
    const size = Number(operation?.fileSize ?? Number.NaN);
    return {
      kind: 'done',
      url: typeof operation?.url === 'string' ? operation.url : undefined,
      size: Number.isSafeInteger(size) && size >= 0 ? size : undefined,
    };
  }
  if (status === 'CREATED' || status === 'RUNNING') {
    await sleep(waitMs);
    return { kind: 'running', objects: Number(operation?.objectCount ?? 0) || 0 };
  }
  return { kind: 'failed' }; // FAILED, CANCELED, CANCELING, EXPIRED, or gone
}

/**
 * The slice of the operation's file before `to` (from its end when undefined). `key` names the
 * reading (the shop and the operation); `size` is the operation's fileSize, asked for when absent.
 */
export async function readBulkSlice(
  url: string,
  file: { readonly key: string; readonly size: number | undefined; readonly to: number | undefined },
  http: StoreHttpOptions,
  retry: RetryPolicy,
): Promise<BackwardSlice> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ConnectorError('protocol', 'Adresse du fichier de l’opération groupée illisible');
  }
  // No token goes with it: the file's address is signed by Shopify. The SSRF rules still apply.
  const source = { url: target, http, retry };
  const size = file.size ?? (await fileSizeOf(source));
  const to = Math.min(file.to ?? size, size);
  if (to <= 0) return { orders: [], next: undefined, strays: [] };
  return readBackward(file.key, source, size, to);
}
