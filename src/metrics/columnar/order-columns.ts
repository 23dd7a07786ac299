// The columns of a snapshot part being read: each row of the binary COPY (ORDER_FIELDS, in this
// order) is decoded straight into typed arrays, with no row object and no string but the
// dictionaries' new values. Customers are coded as dense integers as they come (their text is
// kept packed once, in the organization's codes, for the deltas to find their runs), and each
// one's orders gathered into one run at the end, so the database needs no ORDER BY. A delta's
// few rows come as values (pushValues) into a part of their own.
import { epochSeconds, int32, int64, numericCents } from './copy-binary.js';
import type { OrganizationCodes } from './codes.js';
import { BATCH_ORDERS, CustomerBatch, STEP_KEYS } from './customer-batch.js';
import { LineColumns, noLines, type LineValues } from './line-columns.js';
import type { OrderKeys } from './order-keys.js';
import { freshPart, type Part } from './snapshot.js';

/**
 * The stored columns as they are (the conversions to epoch seconds and cents are made on the
 * bytes), the display country as the SQL engine's coalesce shows it, and the external id: with
 * the store, an anonymous order's key for a delta to retire it, and every order's for its lines
 * to find it (order-keys.ts).
 */
export const ORDER_FIELDS = `o.customer, o.created_at, o.store_id, o.external_id, o.status,
  coalesce(o.billing_country, 'Unknown'), o.items, o.total, o.tax_total, o.shipping_total, o.fee_total,
  o.refund_total, o.refund_tax, o.refund_shipping`;
export const FIELD_COUNT = 14;
const CUSTOMER = 0;
const CREATED_AT = 1;
const STORE = 2;
/** Right after the store: the order's key is one run of bytes (order-keys.ts). */
const EXTERNAL_ID = 3;
const STATUS = 4;
const COUNTRY = 5;
const ITEMS = 6;
const FIRST_AMOUNT = 7;
export const AMOUNTS = 7;

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/** An amount that is not whole cents within int32: the organization is left to SQL. */
export class AmountOutOfRange extends Error {}
/** More orders than the memory budget holds. */
export class OverBudget extends Error {}

/** A turn of the event loop: requests are served between two slices of long work. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/** Orders per turn of the event loop in the long loops of the grouping. */
const SLICE = 1 << 18;

/** One order given as values (a delta's rows). */
export interface OrderValues {
  /** The customer's key (U1), null for an anonymous order. */
  readonly customer: string | null;
  readonly seconds: number;
  readonly storeId: number;
  readonly status: string;
  readonly country: string;
  readonly items: number;
  /** Cents of the amounts, in the order of ORDER_FIELDS. */
  readonly cents: readonly number[];
  /** The anonymous order's key (anonymousKey), null for a customer's order. */
  readonly key: Buffer | null;
  /** The customer's code in `codes.customers`, when the caller has it already (not looked up again). */
  readonly customerCode?: number;
  /** Section 15: its lines (none when absent). */
  readonly lines?: readonly LineValues[];
}

export class OrderColumns {
  length = 0;
  private seconds: Float64Array;
  private store: Int32Array;
  private status: Int32Array;
  private country: Int32Array;
  private items: Int32Array;
  private readonly money: Int32Array[];
  /** Each order's customer (-1: anonymous), local to this part, then its place in the part. */
  private customer: Int32Array;
  /** Each anonymous order's key code (-1 for a customer's order). */
  private anonymous: Int32Array;
  /** Local customer of each organization-wide customer code; undefined: the codes are the local ones. */
  private readonly locals: Map<number, number> | undefined;
  private readonly globals: number[] = [];
  private readonly keyBytes = Buffer.alloc(256);
  /** Sum of |cents| over every amount: while under 2^53, every report sum is exact. */
  absoluteCents = 0;
  /** Section 15: the orders' lines, in the order the orders are pushed. */
  private readonly lines: LineColumns;
  /** After ordersPart: source[k] is the pushed index of the part's k-th order, for withLines. */
  private source: Int32Array | undefined;
  /**
   * Issue 28: the customers of the first orders of an organization's first part (a build's), coded
   * together rather than looked up an order at a time (customer-batch.ts); undefined once coded,
   * and in any other part.
   */
  private batch: CustomerBatch | undefined;
  /** Whether a customer key outside the batch was looked up in the dictionary. */
  private lookedUp = false;

  constructor(
    capacity: number,
    private readonly codes: OrganizationCodes,
    private readonly maxOrders: number,
    /** Section 15: each order's key, kept for its lines read afterwards (none: no lines to read). */
    private readonly keys?: OrderKeys,
    /** Issue 28: orders whose customers are coded together before the others are looked up (customer-batch.ts). */
    customerBatchOrders = BATCH_ORDERS,
    /** Keys of the batch that wait before a step of them is coded (codeCustomersDue). */
    private readonly customerStepKeys = STEP_KEYS,
  ) {
    this.seconds = new Float64Array(capacity);
    this.store = new Int32Array(capacity);
    this.status = new Int32Array(capacity);
    this.country = new Int32Array(capacity);
    this.items = new Int32Array(capacity);
    this.money = Array.from({ length: AMOUNTS }, () => new Int32Array(capacity));
    this.customer = new Int32Array(capacity);
    this.anonymous = new Int32Array(capacity);
    this.lines = new LineColumns(capacity, codes.lines, (cents) => this.checked(cents));
    // The first part of an organization sees its customers first: their codes are dense already.
    this.locals = codes.customers.size === 0 ? undefined : new Map();
    if (!this.locals) this.batch = new CustomerBatch(capacity, customerBatchOrders);
  }

  private grow(): void {
    if (this.length >= this.maxOrders) throw new OverBudget();
    const capacity = Math.max(1024, Math.ceil(this.seconds.length * 1.25));
    const copy = <T extends Int32Array | Float64Array>(from: T, to: T): T => (to.set(from), to);
    this.seconds = copy(this.seconds, new Float64Array(capacity));
    this.store = copy(this.store, new Int32Array(capacity));
    this.status = copy(this.status, new Int32Array(capacity));
    this.country = copy(this.country, new Int32Array(capacity));
    this.items = copy(this.items, new Int32Array(capacity));
    this.customer = copy(this.customer, new Int32Array(capacity));
    this.anonymous = copy(this.anonymous, new Int32Array(capacity));
    for (let m = 0; m < AMOUNTS; m++)
      this.money[m] = copy(this.money[m] as Int32Array, new Int32Array(capacity));
  }

  private local(code: number): number {
    if (!this.locals) return code;
    let local = this.locals.get(code);
    if (local === undefined) {
      local = this.globals.push(code) - 1;
      this.locals.set(code, local);
    }
    return local;
  }

  /** One row of ORDER_FIELDS, its fields located in data by starts and lengths. */
  push(data: Buffer, starts: Int32Array, lengths: Int32Array): void {
    if (this.length === this.seconds.length) this.grow();
    const i = this.length++;
    const customerLength = lengths[CUSTOMER] as number;
    const storeId = int64(data, starts[STORE] as number);
    if (customerLength < 0) {
      this.customer[i] = -1;
      const idLength = Math.max(0, lengths[EXTERNAL_ID] as number);
      const key = idLength + 8 <= this.keyBytes.length ? this.keyBytes : Buffer.alloc(idLength + 8);
      data.copy(key, 0, starts[STORE] as number, (starts[STORE] as number) + 8);
      data.copy(key, 8, starts[EXTERNAL_ID] as number, (starts[EXTERNAL_ID] as number) + idLength);
      this.anonymous[i] = this.codes.anonymous.code(key, 0, idLength + 8);
    } else {
      this.anonymous[i] = -1;
      // Issue 28: left to the batch, if any, when it takes the key (64 digits).
      if (!this.batch?.add(i, data, starts[CUSTOMER] as number, customerLength)) {
        this.lookedUp = true;
        this.customer[i] = this.local(
          this.codes.customers.code(data, starts[CUSTOMER] as number, customerLength),
        );
      }
    }
    this.seconds[i] = epochSeconds(data, starts[CREATED_AT] as number);
    this.store[i] = this.codes.storeCodes.get(storeId) ?? -1;
    this.status[i] = this.codes.statuses.code(data, starts[STATUS] as number, lengths[STATUS] as number);
    this.country[i] = this.codes.countries.code(data, starts[COUNTRY] as number, lengths[COUNTRY] as number);
    this.items[i] = int32(data, starts[ITEMS] as number);
    for (let m = 0; m < AMOUNTS; m++) {
      // Anything but whole cents within int32 falls back to SQL, like a huge amount.
      const cents = numericCents(data, starts[FIRST_AMOUNT + m] as number);
      this.cents(m, i, cents);
    }
    this.keys?.add(
      i,
      data,
      starts[STORE] as number,
      (starts[EXTERNAL_ID] as number) + (lengths[EXTERNAL_ID] as number),
    );
  }

  /**
   * Between two pieces of the COPY: the batch of customers coded once it is full (the orders after
   * it looked up one at a time), else, when `stepping`, a step of it once enough keys wait
   * (customer-batch.ts): a read whose thread waits for the database now and then (the embedded
   * engine's pages), not one that keeps it busy (a server's one statement), where the steps' cache
   * misses would only add to the read. No step once a key outside the batch was looked up: each
   * lookup after a step's keys would index the whole dictionary again.
   */
  codeCustomersDue(stepping: boolean): Promise<void> | undefined {
    const batch = this.batch;
    if (batch === undefined) return undefined;
    if (batch.due) return this.codeCustomers();
    if (stepping && batch.pending >= this.customerStepKeys && !this.lookedUp)
      batch.codeSome(this.codes.customers, this.customer);
    return undefined;
  }

  /** The batch's customers coded, yielding between slices; the orders after them looked up one at a time. */
  async codeCustomers(): Promise<void> {
    const batch = this.batch;
    this.batch = undefined;
    await batch?.code(this.codes.customers, this.customer);
  }

  /**
   * One line of a COPY row: its order's int8 store id and external id in fields 0 and 1 (as in
   * ORDER_FIELDS: one run of bytes), then LINE_ROW_FIELDS. False when no order read has that key (written since: left to the delta).
   */
  pushLine(data: Buffer, starts: Int32Array, lengths: Int32Array): boolean {
    const i =
      this.keys?.find(data, starts[0] as number, (starts[1] as number) + (lengths[1] as number)) ?? -1;
    if (i < 0) return false;
    this.lines.pushCopied(i, data, starts, lengths, 2);
    return true;
  }

  private cents(m: number, i: number, cents: number): void {
    (this.money[m] as Int32Array)[i] = this.checked(cents);
  }

  /** Whole cents within int32, counted into absoluteCents; else AmountOutOfRange. */
  private checked(cents: number): number {
    if (!(cents >= INT32_MIN && cents <= INT32_MAX)) throw new AmountOutOfRange();
    this.absoluteCents += Math.abs(cents);
    return cents;
  }

  /** One order given as values (a delta's). */
  pushValues(order: OrderValues): void {
    if (this.length === this.seconds.length) this.grow();
    const i = this.length++;
    if (order.customer === null) {
      this.customer[i] = -1;
      const key = order.key as Buffer;
      this.anonymous[i] = this.codes.anonymous.code(key, 0, key.length);
    } else {
      let code = order.customerCode;
      if (code === undefined) {
        const bytes = Buffer.from(order.customer, 'utf8');
        code = this.codes.customers.code(bytes, 0, bytes.length);
      }
      this.customer[i] = this.local(code);
      this.anonymous[i] = -1;
    }
    this.seconds[i] = order.seconds;
    this.store[i] = this.codes.storeCodes.get(order.storeId) ?? -1;
    this.status[i] = this.codes.statuses.codeText(order.status);
    this.country[i] = this.codes.countries.codeText(order.country);
    this.items[i] = order.items;
    for (let m = 0; m < AMOUNTS; m++) this.cents(m, i, order.cents[m] as number);
    this.lines.pushValues(i, order.lines ?? []);
  }

  /** One line of the order pushed last, its texts coded already (LineColumns.pushCoded). */
  pushCodedLine(
    item: number,
    quantity: number,
    refundedQuantity: number,
    subtotal: number,
    discount: number,
    refunded: number,
  ): void {
    this.lines.pushCoded(this.length - 1, item, quantity, refundedQuantity, subtotal, discount, refunded);
  }

  /**
   * The part of these orders with their lines at once: ordersPart() then withLines(), for a delta
   * (a build answers from its orders before its lines are read, buildSnapshot).
   */
  async part(): Promise<Part> {
    return this.withLines(await this.ordersPart());
  }

  /**
   * The part of these orders without their lines (every order with none): each customer's orders
   * gathered into a run in time order, customers in order of first sight, anonymous orders last,
   * a column or SLICE orders per turn of the event loop. The columns are the part's from then on.
   * Issue 28: a build makes it as soon as the orders are read, so that order-grain reports are
   * answered while the lines are read (pushLine goes on, by the pushed index, until withLines).
   */
  async ordersPart(): Promise<Part> {
    await this.codeCustomers();
    const n = this.length;
    const customerCount = this.locals ? this.globals.length : this.codes.customers.size;
    const attribute = await this.combineAttributes();
    const runStart = new Int32Array(customerCount + 1); // runStart[customerCount]: the anonymous orders'
    const place = this.customer; // customer codes, turned into places below
    const runOf = await this.customersByFirstOrder(customerCount);
    const runCustomer = new Int32Array(customerCount);
    for (let c = 0; c < customerCount; c++)
      runCustomer[runOf ? (runOf[c] as number) : c] = this.locals ? (this.globals[c] as number) : c;
    for (let from = 0; from < n; from += SLICE) {
      for (let i = from, to = Math.min(n, from + SLICE); i < to; i++) {
        const c = place[i] as number;
        if (c >= 0) runStart[c + 1]! += 1;
      }
      await nextTurn();
    }
    for (let c = 1; c <= customerCount; c++) runStart[c]! += runStart[c - 1] as number;
    // Placing an order moves its run's start up by one; in the end, each start is the next one's.
    for (let from = 0; from < n; from += SLICE) {
      for (let i = from, to = Math.min(n, from + SLICE); i < to; i++) {
        const c = place[i] as number;
        place[i] = runStart[c < 0 ? customerCount : c]!++;
      }
      await nextTurn();
    }
    runStart.copyWithin(1, 0, customerCount);
    runStart[0] = 0;
    // source[k]: the order read k-th in the part; then each run sorted by time.
    const source = this.store; // free since the attributes were combined
    for (let i = 0; i < n; i++) source[place[i] as number] = i;
    await sortRuns(source, runStart, customerCount, this.seconds);
    this.source = source;
    await nextTurn();
    let spare: Int32Array = place;
    const gather = async (from: Int32Array): Promise<Int32Array> => {
      const to = spare;
      for (let k = 0; k < n; k++) to[k] = from[source[k] as number] as number;
      spare = from;
      await nextTurn();
      return to;
    };
    const placed = await gather(attribute);
    this.items = await gather(this.items);
    for (let m = 0; m < AMOUNTS; m++) this.money[m] = await gather(this.money[m] as Int32Array);
    const anonymousFrom = runStart[customerCount] as number;
    const anonymousKey = new Int32Array(n - anonymousFrom);
    for (let k = anonymousFrom; k < n; k++)
      anonymousKey[k - anonymousFrom] = this.anonymous[source[k] as number] as number;
    const seconds = new Float64Array(this.seconds.length);
    for (let k = 0; k < n; k++) seconds[k] = this.seconds[source[k] as number] as number;
    this.seconds = seconds;
    this.store = this.status = this.country = this.customer = this.anonymous = new Int32Array(0);

    const [total, taxTotal, shippingTotal, feeTotal, refundTotal, refundTax, refundShipping] = this.money.map(
      (m) => m.subarray(0, n),
    ) as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];
    return freshPart(
      {
        orderCount: n,
        seconds: this.seconds.subarray(0, n),
        attribute: placed.subarray(0, n),
        items: this.items.subarray(0, n),
        total,
        taxTotal,
        shippingTotal,
        feeTotal,
        refundTotal,
        refundTax,
        refundShipping,
        runStart,
        customerCount,
        runCustomer,
        anonymousKey,
        lines: noLines(n),
      },
      this.seconds.length,
    );
  }

  /** `part` (this one's ordersPart) with the lines pushed since, in the part's order of orders. */
  withLines(part: Part): Part {
    const source = this.source;
    if (!source) throw new Error('withLines before ordersPart');
    this.source = undefined;
    return freshPart({ ...part, lines: this.lines.placed(source, part.orderCount) }, this.seconds.length);
  }

  /**
   * Customer codes renumbered in the order of each customer's first order (by day): the runs of
   * customers who started on the same day lie together, so a report by date finds many orders of
   * one row in a row. Left as they are when the orders span too many days to count them.
   */
  private async customersByFirstOrder(customerCount: number): Promise<Int32Array | undefined> {
    const n = this.length;
    const firstDay = new Float64Array(customerCount).fill(Infinity);
    let [minDay, maxDay] = [Infinity, -Infinity];
    for (let i = 0; i < n; i++) {
      const c = this.customer[i] as number;
      if (c < 0) continue;
      const day = Math.floor((this.seconds[i] as number) / 86_400);
      if (day < (firstDay[c] as number)) firstDay[c] = day;
      if (day < minDay) minDay = day;
      if (day > maxDay) maxDay = day;
    }
    await nextTurn();
    // No customer (a part of anonymous orders only): nothing to renumber.
    if (!(maxDay >= minDay && maxDay - minDay < MAX_SORTED_DAYS)) return undefined;
    const rank = new Int32Array(maxDay - minDay + 2); // customers per day, then each day's first rank
    for (let c = 0; c < customerCount; c++) rank[(firstDay[c] as number) - minDay + 1]! += 1;
    for (let d = 1; d < rank.length; d++) rank[d]! += rank[d - 1] as number;
    const code = new Int32Array(customerCount);
    for (let c = 0; c < customerCount; c++) code[c] = rank[(firstDay[c] as number) - minDay]!++;
    for (let i = 0; i < n; i++) {
      const c = this.customer[i] as number;
      if (c >= 0) this.customer[i] = code[c] as number;
    }
    await nextTurn();
    return code;
  }

  /**
   * Each order's store, status and country as the code of that combination (the organization's,
   * shared by its parts); the status and country columns are free afterwards.
   */
  private async combineAttributes(): Promise<Int32Array> {
    const codes = this.codes.attributes;
    const attribute = this.status; // overwritten in place, each order read before it is written
    for (let from = 0; from < this.length; from += SLICE) {
      for (let i = from, to = Math.min(this.length, from + SLICE); i < to; i++)
        attribute[i] = codes.code(
          this.store[i] as number,
          this.status[i] as number,
          this.country[i] as number,
        );
      await nextTurn();
    }
    this.country = new Int32Array(0);
    return attribute;
  }
}

/** Past this span of days (about 2,700 years), customers keep the order they were seen in. */
const MAX_SORTED_DAYS = 1 << 20;

/** Runs this long or shorter are sorted by insertion; longer ones by the typed array's sort. */
const SHORT_RUN = 16;

/** Each customer's run of `source` in time order (the anonymous orders keep theirs). */
async function sortRuns(
  source: Int32Array,
  runStart: Int32Array,
  customerCount: number,
  seconds: Float64Array,
): Promise<void> {
  let sorted = 0;
  for (let c = 0; c < customerCount; c++) {
    const from = runStart[c] as number;
    const to = runStart[c + 1] as number;
    if (to - from > SHORT_RUN) {
      source.subarray(from, to).sort((a, b) => (seconds[a] as number) - (seconds[b] as number));
    } else {
      for (let k = from + 1; k < to; k++) {
        const order = source[k] as number;
        const at = seconds[order] as number;
        let j = k - 1;
        for (; j >= from && (seconds[source[j] as number] as number) > at; j--)
          source[j + 1] = source[j] as number;
        source[j + 1] = order;
      }
    }
    sorted += to - from;
    if (sorted >= SLICE) {
      sorted = 0;
      await nextTurn();
    }
  }
}
