// Reading a bulk operation's JSONL file exactly (issue 26, item 1). Since API 2026-01 the file is
// not grouped (groupObjects defaults to false): a child line (a line item, a shipping line, with
// `__parentId`) comes somewhere AFTER its order's line, not necessarily right after it, with
// other orders and their children in between. Read from the end towards the start, every child
// is met before its order: its line items (kept whole for the order's lines, issue 27) and its
// shipping lines' taxes (summed) wait under the order's id until the order's own line is reached,
// the order is then complete and leaves memory. So memory holds only the orders whose children were met and whose line was not
// yet (few, as Shopify writes children near their parent), never the file; a grouped file (older
// versions) is read the same way. Slices of BULK_ORDERS_PER_PAGE orders are read by byte ranges;
// the position (`to`: the bytes before it are still to read) is the cursor saved with each page.
// The children carried past a slice stay in this process for the next slice; a restart (or a
// pass on another instance) rebuilds them by walking the already-read tail again, writing
// nothing, so figures stay exact after any restart.
import { ConnectorError } from '../connector.js';
import { politeRequest, type RetryPolicy } from '../polite-get.js';
import type { StoreHttpOptions } from '../store-http.js';
import { nodesOf, shopCents } from './mapping.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Orders read from the file a page. */
export const BULK_ORDERS_PER_PAGE = 250;
/** Bytes asked for at a time (about 350 orders with their children). */
const WINDOW_BYTES = 256 * 1024;
/** The longest line kept (an order with its fields; children are their own lines). */
const MAX_LINE_BYTES = 1024 * 1024;
/** Orders whose children are carried at once; past this the file cannot be read in bounded memory. */
export const MAX_OPEN_ORDERS = 500_000;
/** Files whose carried children this process keeps between slices (one per backfill reading). */
const CARRIED_FILES = 64;

/** Line items carried at once, all orders together; past this, page by page (bounded memory). */
export const MAX_OPEN_LINE_ITEMS = 200_000;

/** What an order's children give: its line items (section 15) and its shipping lines' taxes. */
interface Children {
  lineItems: Json[];
  tax: bigint;
  /** An amount that is not a number: the order is reported, not counted. */
  unreadable: boolean;
}

/**
 * The carried children, by their order's id. What one slice changes can be undone: a slice that
 * fails half-way (the file's server gave up) leaves them as they were at its start, so the next
 * try reads that slice again rather than the whole tail.
 */
class OpenOrders {
  readonly byOrder = new Map<string, Children>();
  private lineItems = 0;
  private undo: Map<string, Children | undefined> | undefined;
  private undoLineItems = 0;

  begin(): void {
    this.undo = new Map();
    this.undoLineItems = this.lineItems;
  }

  rollback(): void {
    for (const [id, before] of this.undo ?? []) {
      if (before) this.byOrder.set(id, before);
      else this.byOrder.delete(id);
    }
    this.undo = undefined;
    this.lineItems = this.undoLineItems;
  }

  private keep(id: string): void {
    if (!this.undo || this.undo.has(id)) return;
    const before = this.byOrder.get(id);
    this.undo.set(id, before && { ...before, lineItems: [...before.lineItems] });
  }

  /** A child line kept under its order (a line item whole, a shipping line's taxes summed). */
  add(line: Json, parentId: string): void {
    this.keep(parentId);
    let children = this.byOrder.get(parentId);
    if (!children) {
      if (this.byOrder.size >= MAX_OPEN_ORDERS) throw new TooManyOpenOrders();
      children = { lineItems: [], tax: 0n, unreadable: false };
      this.byOrder.set(parentId, children);
    }
    const id = typeof line.id === 'string' ? line.id : '';
    if (id.startsWith('gid://shopify/LineItem/')) {
      if (++this.lineItems > MAX_OPEN_LINE_ITEMS) throw new TooManyOpenOrders();
      const item = { ...line };
      delete item.__parentId;
      // Read from the end: pushed last first, put back in the file's order when taken.
      children.lineItems.push(item);
    } else if (id.startsWith('gid://shopify/ShippingLine/')) {
      for (const tax of nodesOf(line.taxLines)) {
        const amount = shopCents(tax.priceSet);
        if (amount === undefined) children.unreadable = true;
        else children.tax += amount;
      }
    }
  }

  /** The order's children, no longer carried (its line is reached). */
  take(id: string): Children | undefined {
    this.keep(id);
    const children = this.byOrder.get(id);
    this.byOrder.delete(id);
    this.lineItems -= children?.lineItems.length ?? 0;
    return children;
  }
}

export class TooManyOpenOrders extends Error {}

const carried = new Map<string, { position: number; open: OpenOrders }>();

export interface FileSource {
  readonly url: URL;
  readonly http: StoreHttpOptions;
  readonly retry: RetryPolicy;
}

export interface BackwardSlice {
  /** Each order with its children summed up (mapping.ts reads them as one line each). */
  readonly orders: Json[];
  /** Bytes still to read (before this position); undefined when the whole file is read. */
  readonly next: number | undefined;
  /** At the end: orders named by children but whose line was never met after them. */
  readonly strays: readonly string[];
}

/** Bytes [start, end) of the file (a Range request; the bytes before skipped if it is ignored). */
async function bytesOf(source: FileSource, start: number, end: number): Promise<Buffer> {
  const wanted = end - start;
  const consume = async (body: AsyncIterable<Buffer>, status: number): Promise<Buffer> => {
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let toSkip = status === 206 ? 0 : start;
    for await (const raw of body) {
      let chunk = raw;
      if (toSkip > 0) {
        const dropped = Math.min(toSkip, chunk.length);
        toSkip -= dropped;
        chunk = chunk.subarray(dropped);
      }
      kept.push(chunk.subarray(0, wanted - keptBytes));
      keptBytes += Math.min(chunk.length, wanted - keptBytes);
      if (keptBytes >= wanted) break;
    }
    return Buffer.concat(kept);
  };
  const response = await politeRequest(
    source.url,
    { method: 'GET', consume },
    { range: `bytes=${start}-${end - 1}` },
    source.http,
    source.retry,
  );
  if (response.status < 200 || response.status >= 300 || response.body.length !== wanted) {
    throw new ConnectorError(
      'unavailable',
      `Fichier de l’opération groupée indisponible ou tronqué (${response.status})`,
    );
  }
  return response.body;
}

/** The file's size when the operation does not give it: one byte asked for, the rest from its headers. */
export async function fileSizeOf(source: FileSource): Promise<number> {
  const response = await politeRequest(
    source.url,
    { method: 'GET', consume: async () => Buffer.alloc(0) },
    { range: 'bytes=0-0' },
    source.http,
    source.retry,
  );
  const total = /\/(\d{1,15})\s*$/.exec(response.headers['content-range'] ?? '')?.[1];
  const size = Number(total ?? (response.status === 200 ? response.headers['content-length'] : undefined));
  if (response.status === 416) return 0;
  if (!Number.isSafeInteger(size) || size < 0) {
    throw new ConnectorError('protocol', 'Taille du fichier de l’opération groupée inconnue');
  }
  return size;
}

function parse(text: string): Json | undefined {
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    throw new ConnectorError('protocol', 'Fichier de l’opération groupée illisible (JSONL attendu)');
  }
  return isObject(line) ? line : undefined;
}

/**
 * The order's line with its children as mapping.ts reads them: its line items in the file's
 * order, one shipping line holding the summed taxes (an unreadable one kept unreadable).
 */
function completed(order: Json, children: Children | undefined): Json {
  const cents = children?.tax ?? 0n;
  const amount = children?.unreadable ? 'illisible' : centsText(cents);
  return {
    ...order,
    lineItems: { nodes: [...(children?.lineItems ?? [])].reverse() },
    shippingLines: { nodes: [{ taxLines: [{ priceSet: { shopMoney: { amount } } }] }] },
  };
}

const centsText = (cents: bigint): string => {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
};

/**
 * Walks back from `from` to `floor` (0 or a line start), a window at a time, each line from the
 * last: children are carried in `open`, each order found is completed and given to `onOrder`.
 * Stops after `limit` orders; returns the position reached (the start of the last line read).
 */
async function walkBack(
  source: FileSource,
  from: number,
  floor: number,
  open: OpenOrders,
  limit: number,
  onOrder: (order: Json) => void,
): Promise<number> {
  let position = from;
  let orders = 0;
  let window = WINDOW_BYTES;
  while (position > floor && orders < limit) {
    const start = Math.max(floor, position - window);
    const bytes = await bytesOf(source, start, position);
    // The window's first line may have begun before it: read with the next window.
    const first = start === floor ? 0 : bytes.indexOf(10) + 1;
    if (start !== floor && (first === 0 || first >= bytes.length)) {
      if (window >= 2 * MAX_LINE_BYTES) {
        throw new ConnectorError('protocol', 'Fichier de l’opération groupée illisible : ligne trop longue');
      }
      window *= 2;
      continue;
    }
    let reached = start + first;
    for (let end = bytes.length; end > first;) {
      // The newline that ends the line before (the byte at end - 1 may be this line's own).
      const before = end >= 2 ? bytes.lastIndexOf(10, end - 2) : -1;
      const lineStart = Math.max(first, before + 1);
      const text = bytes.toString('utf8', lineStart, end).trim();
      end = lineStart;
      const line = text === '' ? undefined : parse(text);
      if (line && typeof line.__parentId === 'string') open.add(line, line.__parentId);
      else if (line && typeof line.id === 'string') {
        onOrder(completed(line, open.take(line.id)));
        if (++orders >= limit) {
          reached = start + lineStart;
          break;
        }
      }
    }
    position = reached;
    window = WINDOW_BYTES;
  }
  return position;
}

/**
 * One slice of the file: the BULK_ORDERS_PER_PAGE orders before `to` (the file's end at first),
 * each complete. `key` names this reading (the shop and the operation) for the children carried
 * from the slice before; when this process does not hold them, they are gathered again first.
 */
export async function readBackward(
  key: string,
  source: FileSource,
  size: number,
  to: number,
): Promise<BackwardSlice> {
  const held = carried.get(key);
  carried.delete(key);
  let open: OpenOrders;
  if (held && held.position === to) open = held.open;
  else {
    open = new OpenOrders();
    if (to < size) await walkBack(source, size, to, open, Number.POSITIVE_INFINITY, () => undefined);
  }
  const orders: Json[] = [];
  let reached: number;
  open.begin();
  try {
    reached = await walkBack(source, to, 0, open, BULK_ORDERS_PER_PAGE, (o) => orders.push(o));
  } catch (error) {
    open.rollback();
    if (!(error instanceof TooManyOpenOrders)) remember(key, to, open);
    throw error;
  }
  if (reached === 0) return { orders, next: undefined, strays: [...open.byOrder.keys()] };
  remember(key, reached, open);
  return { orders, next: reached, strays: [] };
}

function remember(key: string, position: number, open: OpenOrders): void {
  carried.set(key, { position, open });
  for (const oldest of carried.keys()) {
    if (carried.size <= CARRIED_FILES) break;
    carried.delete(oldest);
  }
}
