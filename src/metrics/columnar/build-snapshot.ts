// Reads one organization's orders into a Snapshot in keyset chunks: each chunk is one short
// statement (the embedded database's single session is never held long, and other organizations'
// queries run between chunks) decoded straight into typed arrays (no million JS objects at once),
// with a turn of the event loop between chunks so that requests keep being served.
import type { Queryable, Row } from '../../db/database.js';
import { Dictionary } from './exact.js';
import { BYTES_PER_ORDER, type Snapshot } from './snapshot.js';

export const DEFAULT_CHUNK_ROWS = 50_000;

/** Why an organization is answered by SQL instead of a snapshot, at a given data version. */
export interface Unsupported {
  readonly version: string;
  readonly reason: 'over-budget' | 'amount-range';
}

export interface BuildOptions {
  /** Give up (over-budget) when the snapshot would need more than this. */
  readonly maxBytes: number;
  readonly chunkRows?: number;
}

// Compact columns computed by the database: whole seconds, cents, the display country (as the SQL
// engine's coalesce shows it). Amounts are numeric(16,2), so ×100 is a whole number, exact in float8.
const COLUMNS = `floor(extract(epoch FROM o.created_at))::float8 AS t, o.store_id AS s, o.status AS st,
  coalesce(o.billing_country, 'Unknown') AS co, o.items AS i,
  (o.total * 100)::float8 AS a, (o.tax_total * 100)::float8 AS tx, (o.shipping_total * 100)::float8 AS sh,
  (o.fee_total * 100)::float8 AS fe, (o.refund_total * 100)::float8 AS rt,
  (o.refund_tax * 100)::float8 AS rx, (o.refund_shipping * 100)::float8 AS rs`;

// Customers in index order (orders_by_customer); a chunk ends before the customer it may have cut.
const CUSTOMER_CHUNK = (after: boolean) => `SELECT o.customer AS c, ${COLUMNS} FROM orders o
  WHERE o.organization_id = $1 AND o.customer IS NOT NULL${after ? ' AND o.customer > $3' : ''}
  ORDER BY o.customer LIMIT $2`;
// Anonymous orders in primary-key order.
const ANONYMOUS_CHUNK = (after: boolean) => `SELECT o.store_id AS k, o.external_id AS x, ${COLUMNS}
  FROM orders o WHERE o.organization_id = $1 AND o.customer IS NULL
  ${after ? 'AND (o.store_id, o.external_id) > ($3::bigint, $4::text)' : ''}
  ORDER BY o.store_id, o.external_id LIMIT $2`;

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

class AmountOutOfRange extends Error {}

class ColumnsBuilder {
  length = 0;
  seconds: Float64Array;
  store: Int32Array;
  status: Int32Array;
  country: Int32Array;
  items: Int32Array;
  readonly money: Int32Array[];
  /** Sum of |cents| over every amount: while under 2^53, every report sum is exact. */
  absoluteCents = 0;
  readonly runStart: number[] = [];
  readonly statuses = new Dictionary();
  readonly countries = new Dictionary();

  constructor(
    capacity: number,
    private readonly storeCodes: ReadonlyMap<string, number>,
  ) {
    this.seconds = new Float64Array(capacity);
    this.store = new Int32Array(capacity);
    this.status = new Int32Array(capacity);
    this.country = new Int32Array(capacity);
    this.items = new Int32Array(capacity);
    this.money = Array.from({ length: 7 }, () => new Int32Array(capacity));
  }

  private grow(): void {
    const capacity = Math.max(1024, Math.ceil(this.seconds.length * 1.25));
    const copy = <T extends Int32Array | Float64Array>(from: T, to: T): T => (to.set(from), to);
    this.seconds = copy(this.seconds, new Float64Array(capacity));
    this.store = copy(this.store, new Int32Array(capacity));
    this.status = copy(this.status, new Int32Array(capacity));
    this.country = copy(this.country, new Int32Array(capacity));
    this.items = copy(this.items, new Int32Array(capacity));
    for (let m = 0; m < 7; m++) this.money[m] = copy(this.money[m] as Int32Array, new Int32Array(capacity));
  }

  push(row: Row): void {
    if (this.length === this.seconds.length) this.grow();
    const i = this.length++;
    this.seconds[i] = Number(row.t);
    this.store[i] = this.storeCodes.get(String(row.s)) ?? -1;
    this.status[i] = this.statuses.code(String(row.st));
    this.country[i] = this.countries.code(String(row.co));
    this.items[i] = Number(row.i);
    this.cents(0, i, row.a);
    this.cents(1, i, row.tx);
    this.cents(2, i, row.sh);
    this.cents(3, i, row.fe);
    this.cents(4, i, row.rt);
    this.cents(5, i, row.rx);
    this.cents(6, i, row.rs);
  }

  private cents(column: number, i: number, value: unknown): void {
    // Whole cents from the statement's own arithmetic; anything else falls back to SQL like a huge amount.
    const cents = typeof value === 'number' ? value : NaN;
    if (!(cents >= INT32_MIN && cents <= INT32_MAX)) throw new AmountOutOfRange();
    (this.money[column] as Int32Array)[i] = cents;
    this.absoluteCents += Math.abs(cents);
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The organization's snapshot at its current data version, an Unsupported answer when it cannot
 * have one, or undefined when the organization does not exist.
 */
export async function buildSnapshot(
  db: Queryable,
  organizationId: string,
  options: BuildOptions,
): Promise<Snapshot | Unsupported | undefined> {
  const chunkRows = options.chunkRows ?? DEFAULT_CHUNK_ROWS;
  // Read first: rows committed after it carry a newer version, so this label can only be too old.
  const [organization] = await db.query<{ data_version: string }>(
    'SELECT data_version FROM organizations WHERE id = $1',
    [organizationId],
  );
  if (!organization) return undefined;
  const version = String(organization.data_version);
  const [counted] = await db.query<{ n: number }>(
    'SELECT count(*)::integer AS n FROM orders WHERE organization_id = $1',
    [organizationId],
  );
  const expected = counted?.n ?? 0;
  if (expected * BYTES_PER_ORDER > options.maxBytes) return { version, reason: 'over-budget' };
  const stores = new Dictionary();
  const storeCodes = new Map<string, number>();
  const storeRows = await db.query('SELECT id, address FROM stores WHERE organization_id = $1', [
    organizationId,
  ]);
  for (const row of storeRows) storeCodes.set(String(row.id), stores.code(String(row.address)));

  const columns = new ColumnsBuilder(expected + 64, storeCodes);
  let customerEnd: number;
  try {
    await readCustomerRuns(db, organizationId, columns, chunkRows, options.maxBytes);
    customerEnd = columns.length;
    await readAnonymousOrders(db, organizationId, columns, chunkRows, options.maxBytes);
  } catch (error) {
    if (error instanceof AmountOutOfRange) return { version, reason: 'amount-range' };
    if (error instanceof OverBudget) return { version, reason: 'over-budget' };
    throw error;
  }
  if (columns.absoluteCents > Number.MAX_SAFE_INTEGER) return { version, reason: 'amount-range' };
  return freeze(organizationId, version, columns, customerEnd, stores);
}

class OverBudget extends Error {}

function checkBudget(columns: ColumnsBuilder, maxBytes: number): void {
  if (columns.length * BYTES_PER_ORDER > maxBytes) throw new OverBudget();
}

async function readCustomerRuns(
  db: Queryable,
  organizationId: string,
  columns: ColumnsBuilder,
  chunkRows: number,
  maxBytes: number,
): Promise<void> {
  let after: string | undefined;
  let limit = chunkRows;
  for (;;) {
    const params = after === undefined ? [organizationId, limit] : [organizationId, limit, after];
    const rows = await db.query(CUSTOMER_CHUNK(after !== undefined), params);
    let end = rows.length;
    if (rows.length === limit) {
      // The last customer may go on in the next chunk: leave all their orders to it.
      const last = (rows[end - 1] as Row).c;
      while (end > 0 && (rows[end - 1] as Row).c === last) end--;
      if (end === 0) {
        limit *= 2; // one customer fills the chunk: read a bigger one
        continue;
      }
    }
    // Every chunk starts with a new customer (customer > after).
    let previous: unknown;
    for (let r = 0; r < end; r++) {
      const row = rows[r] as Row;
      if (row.c !== previous) {
        columns.runStart.push(columns.length);
        previous = row.c;
      }
      columns.push(row);
    }
    checkBudget(columns, maxBytes);
    if (rows.length < limit) return;
    after = String((rows[end - 1] as Row).c);
    limit = chunkRows;
    await nextTurn();
  }
}

async function readAnonymousOrders(
  db: Queryable,
  organizationId: string,
  columns: ColumnsBuilder,
  chunkRows: number,
  maxBytes: number,
): Promise<void> {
  let after: [string, string] | undefined;
  for (;;) {
    const params =
      after === undefined ? [organizationId, chunkRows] : [organizationId, chunkRows, after[0], after[1]];
    const rows = await db.query(ANONYMOUS_CHUNK(after !== undefined), params);
    for (const row of rows) columns.push(row);
    checkBudget(columns, maxBytes);
    if (rows.length < chunkRows) return;
    const last = rows[rows.length - 1] as Row;
    after = [String(last.k), String(last.x)];
    await nextTurn();
  }
}

function freeze(
  organizationId: string,
  version: string,
  columns: ColumnsBuilder,
  customerEnd: number,
  stores: Dictionary,
): Snapshot {
  const n = columns.length;
  const runStart = Int32Array.from([...columns.runStart, customerEnd]);
  const [total, taxTotal, shippingTotal, feeTotal, refundTotal, refundTax, refundShipping] =
    columns.money.map((m) => m.subarray(0, n)) as [
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
    ];
  return {
    organizationId,
    version,
    orderCount: n,
    seconds: columns.seconds.subarray(0, n),
    store: columns.store.subarray(0, n),
    status: columns.status.subarray(0, n),
    country: columns.country.subarray(0, n),
    items: columns.items.subarray(0, n),
    total,
    taxTotal,
    shippingTotal,
    feeTotal,
    refundTotal,
    refundTax,
    refundShipping,
    runStart,
    customerCount: columns.runStart.length,
    stores,
    statuses: columns.statuses,
    countries: columns.countries,
    bytes: columns.seconds.length * (BYTES_PER_ORDER - 4) + runStart.length * 4,
  };
}
