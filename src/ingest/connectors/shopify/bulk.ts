// A Shopify shop's history through a bulk operation (issue 21, item 2): bulkOperationRunQuery over
// all orders, polled until done, its JSONL result (`url`) read a slice at a time with a byte Range,
// so memory holds one slice whatever the file's size. Nested connections (line items, shipping
// lines) arrive as their own lines after their order, each with `__parentId`. The backfill cursor
// says where the walk is, saved with each page written: `bulk:ID` while the operation runs,
// `bulk:ID:OFFSET` while its file is read (OFFSET: the first byte of the next order), so a
// restart resumes the same operation where it stopped instead of starting over. How one is
// started, or an operation of this same query adopted, is bulk-start.ts.
import { ConnectorError } from '../connector.js';
import { politeRequest, sleep, type RetryPolicy } from '../polite-get.js';
import type { StoreHttpOptions } from '../store-http.js';
import type { ShopifyGraphql } from './graphql.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const MONEY = '{ shopMoney { amount } }';
/** The bulk query: the page query's order fields, connections without `first`. */
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
      lineItems { edges { node { id quantity } } }
      shippingLines { edges { node { id taxLines { priceSet ${MONEY} } } } }
    } }
  }
}`;

const POLL = `query SalesMetricsBulkOperation($id: ID!) {
  bulkOperation(id: $id) { id status errorCode objectCount url }
}`;

/** Orders read from the file a page. */
export const BULK_ORDERS_PER_PAGE = 250;
/** The longest line kept (an order with its fields; children are their own lines). */
const MAX_LINE_BYTES = 1024 * 1024;
/** How long one history call waits for a running operation before giving its page back. */
const POLL_MS = 1_000;

export type BulkStep =
  | { readonly kind: 'started'; readonly id: string; readonly createdAt?: Date }
  | { readonly kind: 'refused' }
  | { readonly kind: 'running'; readonly objects: number }
  | { readonly kind: 'done'; readonly url: string | undefined }
  | { readonly kind: 'failed' };

/** The operation's state, waiting up to POLL_MS while it runs. */
export async function pollBulk(client: ShopifyGraphql, id: string): Promise<BulkStep> {
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
    return { kind: 'done', url: typeof operation?.url === 'string' ? operation.url : undefined };
  }
  if (status === 'CREATED' || status === 'RUNNING') {
    await sleep(POLL_MS);
    return { kind: 'running', objects: Number(operation?.objectCount ?? 0) || 0 };
  }
  return { kind: 'failed' }; // FAILED, CANCELED, CANCELING, EXPIRED, or gone
}

export interface BulkSlice {
  /** Each order with its children's lines gathered under their connection's name. */
  readonly orders: Json[];
  /** The byte offset of the next order, undefined at the end of the file. */
  readonly next: number | undefined;
}

/** Which connection a child line belongs to, by its id's type. */
function childField(line: Json): string | undefined {
  const id = typeof line.id === 'string' ? line.id : '';
  if (id.startsWith('gid://shopify/LineItem/')) return 'lineItems';
  if (id.startsWith('gid://shopify/ShippingLine/')) return 'shippingLines';
  return undefined;
}

/**
 * Reads whole orders from `offset`: lines up to the start of the order after the
 * BULK_ORDERS_PER_PAGE-th one, returned as the kept bytes (a slice, bounded by the page).
 */
function sliceReader(offset: number, skip: number) {
  return async (body: AsyncIterable<Buffer>): Promise<Buffer> => {
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let pending = Buffer.alloc(0);
    let toSkip = skip;
    let orders = 0;
    for await (const raw of body) {
      let chunk = raw;
      if (toSkip > 0) {
        const dropped = Math.min(toSkip, chunk.length);
        toSkip -= dropped;
        chunk = chunk.subarray(dropped);
        if (chunk.length === 0) continue;
      }
      pending = Buffer.concat([pending, chunk]);
      for (let end = pending.indexOf(10); end >= 0; end = pending.indexOf(10)) {
        const line = pending.subarray(0, end + 1);
        if (!line.includes('"__parentId"') && ++orders > BULK_ORDERS_PER_PAGE) {
          return Buffer.concat([...kept, Buffer.from(`#next ${offset + keptBytes}\n`)]);
        }
        kept.push(line);
        keptBytes += line.length;
        pending = pending.subarray(end + 1);
      }
      if (pending.length > MAX_LINE_BYTES) {
        throw new ConnectorError('protocol', 'Fichier de l’opération groupée illisible : ligne trop longue');
      }
    }
    if (pending.length > 0) kept.push(pending, Buffer.from('\n'));
    return Buffer.concat(kept);
  };
}

/** One slice of the operation's file from `offset` (a Range request; skipped by hand if ignored). */
export async function readBulkSlice(
  url: string,
  offset: number,
  http: StoreHttpOptions,
  retry: RetryPolicy,
): Promise<BulkSlice> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ConnectorError('protocol', 'Adresse du fichier de l’opération groupée illisible');
  }
  // No token goes with it: the file's address is signed by Shopify. The SSRF rules still apply.
  // A server that ignores the Range sends the whole file (200): the bytes read are skipped.
  const response = await politeRequest(
    target,
    { method: 'GET', consume: (body, status) => sliceReader(offset, status === 206 ? 0 : offset)(body) },
    offset > 0 ? { range: `bytes=${offset}-` } : {},
    http,
    retry,
  );
  if (response.status === 416) return { orders: [], next: undefined };
  if (response.status < 200 || response.status >= 300) {
    throw new ConnectorError(
      'unavailable',
      `Fichier de l’opération groupée indisponible (${response.status})`,
    );
  }
  return parseSlice(response.body);
}

function parseSlice(kept: Buffer): BulkSlice {
  const orders: Json[] = [];
  let next: number | undefined;
  for (const text of kept.toString('utf8').split('\n')) {
    if (text === '') continue;
    if (text.startsWith('#next ')) {
      next = Number(text.slice(6));
      continue;
    }
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      throw new ConnectorError('protocol', 'Fichier de l’opération groupée illisible (JSONL attendu)');
    }
    if (!isObject(line)) continue;
    const parent = orders.at(-1);
    const field = childField(line);
    if (typeof line.__parentId === 'string') {
      if (parent && field && parent.id === line.__parentId) {
        const nodes = (parent[field] as { nodes: Json[] }).nodes;
        nodes.push(line);
      }
      continue;
    }
    orders.push({ ...line, lineItems: { nodes: [] }, shippingLines: { nodes: [] } });
  }
  return { orders, next };
}
