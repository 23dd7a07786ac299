// Order lines in a snapshot part (section 15): one entry a line, the lines of each order side by
// side in the part's order of orders (lines [lineStart[i], lineStart[i + 1]) are order i's), so that
// a report reads an order's lines right after the order, and a compaction copies a range of orders
// with one range of lines. A line is its item code (line-codes.ts: product, product id, variant,
// SKU, categories), its quantities, and its amounts as exact integer cents (M1), as the orders'.
//
// A build reads each order's lines with the order, as arrays of one LATERAL aggregate per order
// in the same binary COPY (LINE_FIELDS): no second statement to match with the orders, and an
// order and its lines are read at one moment. A delta reads them as JSON (LINES_JSON).
import { int32, numericCents } from './copy-binary.js';
import type { TextCodes } from './text-codes.js';
import type { LineCodes } from './line-codes.js';

export interface PartLines {
  readonly count: number;
  /** orderCount + 1 entries: order i's lines are [lineStart[i], lineStart[i + 1]). */
  readonly lineStart: Int32Array;
  /** Each line's code of the organization's LineCodes items. */
  readonly item: Int32Array;
  readonly quantity: Int32Array;
  readonly refundedQuantity: Int32Array;
  /** Exact integer cents (M1). */
  readonly subtotal: Int32Array;
  readonly discount: Int32Array;
  readonly refundedAmount: Int32Array;
}

/** Memory of one line: six int32 columns. */
export const BYTES_PER_LINE = 6 * 4;

/** L2: a missing text is `Unknown`, as the SQL engine shows it (src/query/compile.ts). */
const shown = (column: string): string => `coalesce(nullif(${column}, ''), 'Unknown')`;

/** The order's lines, as arrays in one order (array_agg's input order is the same for each). */
export const LINE_FIELDS = `k.product, k.product_id, k.variant, k.sku, k.categories, k.quantity, k.refunded_quantity,
  k.subtotal, k.discount, k.refunded_amount`;
export const LINE_FIELD_COUNT = 10;
const TEXTS = 4; // product, product id, variant, sku
const CATEGORIES = 4;
const QUANTITY = 5;
const REFUNDED_QUANTITY = 6;
const FIRST_AMOUNT = 7;
const LINE_AMOUNTS = 3;

/** Joined to `orders o` in the build's COPY: each order's lines (NULL arrays: none). */
export const LINES_JOIN = `LEFT JOIN LATERAL (SELECT array_agg(${shown('l.product_name')}) AS product,
  array_agg(${shown('l.product_id')}) AS product_id, array_agg(${shown('l.variant_name')}) AS variant,
  array_agg(${shown('l.sku')}) AS sku, array_agg(to_json(l.categories)::text) AS categories,
  array_agg(l.quantity) AS quantity, array_agg(l.refunded_quantity) AS refunded_quantity,
  array_agg(l.subtotal) AS subtotal, array_agg(l.discount) AS discount, array_agg(l.refunded_amount) AS refunded_amount
  FROM order_lines l
  WHERE l.organization_id = o.organization_id AND l.store_id = o.store_id AND l.external_id = o.external_id) k ON true`;

/** A delta's lines of order `o`, as one JSON array (NULL: none). */
export const LINES_JSON = `(SELECT json_agg(json_build_object('p', ${shown('l.product_name')},
    'i', ${shown('l.product_id')}, 'v', ${shown('l.variant_name')}, 's', ${shown('l.sku')},
    'c', to_json(l.categories)::text, 'q', l.quantity, 'rq', l.refunded_quantity,
    'st', (l.subtotal * 100)::text, 'd', (l.discount * 100)::text, 'ra', (l.refunded_amount * 100)::text))::text
  FROM order_lines l
  WHERE l.organization_id = o.organization_id AND l.store_id = o.store_id AND l.external_id = o.external_id) AS lines`;

/** One line as LINES_JSON writes it. */
export interface LineValues {
  readonly p: string;
  readonly i: string;
  readonly v: string;
  readonly s: string;
  readonly c: string;
  readonly q: number;
  readonly rq: number;
  readonly st: string;
  readonly d: string;
  readonly ra: string;
}

/** Lines being read, in the order their orders are pushed; `placed` puts them in the part's order. */
export class LineColumns {
  count = 0;
  /** Per pushed order: its first line and how many it has. */
  private from: Int32Array;
  private lines: Int32Array;
  private item: Int32Array;
  private quantity: Int32Array;
  private refundedQuantity: Int32Array;
  private readonly money: Int32Array[];
  /** Where the elements of each array field of the row being read are. */
  private readonly at: Int32Array[] = Array.from({ length: LINE_FIELD_COUNT }, () => new Int32Array(16));
  private readonly length: Int32Array[] = Array.from({ length: LINE_FIELD_COUNT }, () => new Int32Array(16));

  constructor(
    orders: number,
    private readonly codes: LineCodes,
    /** Anything but whole cents within int32: the organization is left to SQL. */
    private readonly checkedCents: (cents: number) => number,
  ) {
    this.from = new Int32Array(orders);
    this.lines = new Int32Array(orders);
    const lines = Math.max(16, orders);
    this.item = new Int32Array(lines);
    this.quantity = new Int32Array(lines);
    this.refundedQuantity = new Int32Array(lines);
    this.money = Array.from({ length: LINE_AMOUNTS }, () => new Int32Array(lines));
  }

  /** Room for order i. */
  private order(i: number): void {
    if (i < this.from.length) return;
    const capacity = Math.max(1024, Math.ceil(i * 1.25));
    this.from = grown(this.from, capacity);
    this.lines = grown(this.lines, capacity);
  }

  /** Room for `more` lines. */
  private reserve(more: number): void {
    const need = this.count + more;
    if (need <= this.item.length) return;
    const capacity = Math.max(need, Math.ceil(this.item.length * 1.5));
    this.item = grown(this.item, capacity);
    this.quantity = grown(this.quantity, capacity);
    this.refundedQuantity = grown(this.refundedQuantity, capacity);
    for (let m = 0; m < LINE_AMOUNTS; m++) this.money[m] = grown(this.money[m] as Int32Array, capacity);
  }

  /** Order i's lines from a COPY row: its LINE_FIELDS, from field `first` on. */
  pushCopied(i: number, data: Buffer, starts: Int32Array, lengths: Int32Array, first: number): void {
    this.order(i);
    this.from[i] = this.count;
    let n = -1;
    for (let f = 0; f < LINE_FIELD_COUNT; f++) {
      const elements = this.elements(f, data, starts[first + f] as number, lengths[first + f] as number);
      if (n >= 0 && elements !== n) throw new Error('COPY: order lines of different lengths');
      n = elements;
    }
    this.lines[i] = n;
    this.reserve(n);
    const at = this.at;
    const length = this.length;
    const codes = this.codes;
    for (let k = 0; k < n; k++) {
      const l = this.count++;
      const [a, b] = [at, length] as [Int32Array[], Int32Array[]];
      const text = (f: number, codes: TextCodes): number =>
        codes.code(data, (a[f] as Int32Array)[k] as number, (b[f] as Int32Array)[k] as number);
      this.item[l] = codes.item(
        text(0, codes.products),
        text(1, codes.productIds),
        text(2, codes.variants),
        text(TEXTS - 1, codes.skus),
        codes.categorySet(
          data,
          (a[CATEGORIES] as Int32Array)[k] as number,
          (b[CATEGORIES] as Int32Array)[k] as number,
        ),
      );
      this.quantity[l] = int32(data, (at[QUANTITY] as Int32Array)[k] as number);
      this.refundedQuantity[l] = int32(data, (at[REFUNDED_QUANTITY] as Int32Array)[k] as number);
      for (let m = 0; m < LINE_AMOUNTS; m++)
        (this.money[m] as Int32Array)[l] = this.checkedCents(
          numericCents(data, (at[FIRST_AMOUNT + m] as Int32Array)[k] as number),
        );
    }
  }

  /** Order i's lines as a delta reads them. */
  pushValues(i: number, lines: readonly LineValues[]): void {
    this.order(i);
    this.from[i] = this.count;
    this.lines[i] = lines.length;
    this.reserve(lines.length);
    const codes = this.codes;
    for (const line of lines) {
      const l = this.count++;
      const categories = Buffer.from(line.c, 'utf8');
      this.item[l] = codes.item(
        codes.products.codeText(line.p),
        codes.productIds.codeText(line.i),
        codes.variants.codeText(line.v),
        codes.skus.codeText(line.s),
        codes.categorySet(categories, 0, categories.length),
      );
      this.quantity[l] = line.q;
      this.refundedQuantity[l] = line.rq;
      [line.st, line.d, line.ra].forEach((cents, m) => {
        (this.money[m] as Int32Array)[l] = this.checkedCents(Number(cents));
      });
    }
  }

  /**
   * The elements of a binary one-dimensional array (NULL: none) into at[f] and length[f]; how
   * many. Layout: ndim, flags, element type, then per dimension its size and lower bound, then
   * each element as its length and bytes.
   */
  private elements(f: number, data: Buffer, start: number, byteLength: number): number {
    if (byteLength < 0 || int32(data, start) === 0) return 0;
    const n = int32(data, start + 12);
    if ((this.at[f] as Int32Array).length < n) {
      this.at[f] = new Int32Array(n);
      this.length[f] = new Int32Array(n);
    }
    const at = this.at[f] as Int32Array;
    const length = this.length[f] as Int32Array;
    let p = start + 20;
    for (let k = 0; k < n; k++) {
      const size = int32(data, p);
      at[k] = p + 4;
      length[k] = size;
      p += 4 + Math.max(0, size);
    }
    return n;
  }

  /** The lines in the part's order: source[k] is the pushed index of the part's k-th order. */
  placed(source: Int32Array, orders: number): PartLines {
    const lineStart = new Int32Array(orders + 1);
    for (let k = 0; k < orders; k++)
      lineStart[k + 1] = (lineStart[k] as number) + (this.lines[source[k] as number] as number);
    const n = lineStart[orders] as number;
    const columns = [this.item, this.quantity, this.refundedQuantity, ...this.money];
    const [item, quantity, refundedQuantity, subtotal, discount, refundedAmount] = columns.map((from) => {
      const to = new Int32Array(n);
      for (let k = 0; k < orders; k++) {
        const i = source[k] as number;
        const first = this.from[i] as number;
        to.set(from.subarray(first, first + (this.lines[i] as number)), lineStart[k] as number);
      }
      return to;
    }) as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];
    return { count: n, lineStart, item, quantity, refundedQuantity, subtotal, discount, refundedAmount };
  }
}

function grown(array: Int32Array, capacity: number): Int32Array {
  const bigger = new Int32Array(capacity);
  bigger.set(array.subarray(0, Math.min(array.length, capacity)));
  return bigger;
}

/** Folds ranges of orders of several parts into one part's lines (compaction). */
export class LinesFold {
  private readonly lineStart: Int32Array;
  private readonly columns: Int32Array[];
  private at = 0;

  constructor(orders: number, lines: number) {
    this.lineStart = new Int32Array(orders + 1);
    this.columns = Array.from({ length: 6 }, () => new Int32Array(lines));
  }

  /** Orders [from, to) of `lines`, as orders [orderAt, orderAt + to − from) of the fold. */
  copy(lines: PartLines, from: number, to: number, orderAt: number): void {
    const first = lines.lineStart[from] as number;
    const last = lines.lineStart[to] as number;
    const source = [
      lines.item,
      lines.quantity,
      lines.refundedQuantity,
      lines.subtotal,
      lines.discount,
      lines.refundedAmount,
    ];
    source.forEach((column, c) => (this.columns[c] as Int32Array).set(column.subarray(first, last), this.at));
    for (let i = from; i < to; i++)
      this.lineStart[orderAt + i - from + 1] = this.at + (lines.lineStart[i + 1] as number) - first;
    this.at += last - first;
  }

  done(): PartLines {
    const [item, quantity, refundedQuantity, subtotal, discount, refundedAmount] = this.columns as [
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
    ];
    return {
      count: this.at,
      lineStart: this.lineStart,
      item,
      quantity,
      refundedQuantity,
      subtotal,
      discount,
      refundedAmount,
    };
  }
}
