// Order lines in a snapshot part (section 15): one entry a line, the lines of each order side by
// side in the part's order of orders (lines [lineStart[i], lineStart[i + 1]) are order i's), so that
// a report reads an order's lines right after the order, and a compaction copies a range of orders
// with one range of lines. A line is its item code (line-codes.ts: product, product id, variant,
// SKU, categories), its quantities, and its amounts as exact integer cents (M1), as the orders'.
//
// A build reads the lines in a binary COPY of their own, after the orders (build-snapshot.ts): one
// row a line, in whatever order the table gives them, each found its order by the order's key
// (order-keys.ts). An aggregate of each order's lines joined to the orders (LATERAL) cost the
// database some 100 µs an order in PGlite, three times the orders and lines read apart (issue 28, docs/benchmarks.md).
// A delta reads them as JSON (LINES_JSON).
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

/** The lines of `orders` orders that have none (issue 28: a part whose lines are still being read). */
export function noLines(orders: number): PartLines {
  const none = new Int32Array(0);
  return {
    count: 0,
    lineStart: new Int32Array(orders + 1),
    item: none,
    quantity: none,
    refundedQuantity: none,
    subtotal: none,
    discount: none,
    refundedAmount: none,
  };
}

/** Memory of one line: six int32 columns. */
export const BYTES_PER_LINE = 6 * 4;

/** L2: a missing text is `Unknown`, as the SQL engine shows it (src/query/compile.ts). */
const shown = (column: string): string => `coalesce(nullif(${column}, ''), 'Unknown')`;

/** A line's fields in the build's COPY (line-columns' LINE_ROW_FIELDS), after its order's key. */
export const LINE_ROW_FIELDS = `${shown('l.product_name')}, ${shown('l.product_id')}, ${shown('l.variant_name')},
  ${shown('l.sku')}, to_json(l.categories)::text, l.quantity, l.refunded_quantity, l.subtotal, l.discount,
  l.refunded_amount`;
export const LINE_FIELD_COUNT = 10;
const CATEGORIES = 4;
const QUANTITY = 5;
const REFUNDED_QUANTITY = 6;
const FIRST_AMOUNT = 7;
const LINE_AMOUNTS = 3;

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

/**
 * Lines being read, each with the order it belongs to (its index among the pushed orders), in any
 * order; `placed` puts them in the part's order, each order's lines in the order they came.
 */
export class LineColumns {
  count = 0;
  /** Per pushed order: how many lines it has. */
  private lines: Int32Array;
  /** Per line: its order. */
  private owner: Int32Array;
  private item: Int32Array;
  private quantity: Int32Array;
  private refundedQuantity: Int32Array;
  private readonly money: Int32Array[];

  constructor(
    orders: number,
    private readonly codes: LineCodes,
    /** Anything but whole cents within int32: the organization is left to SQL. */
    private readonly checkedCents: (cents: number) => number,
  ) {
    this.lines = new Int32Array(orders);
    const lines = Math.max(16, orders);
    this.owner = new Int32Array(lines);
    this.item = new Int32Array(lines);
    this.quantity = new Int32Array(lines);
    this.refundedQuantity = new Int32Array(lines);
    this.money = Array.from({ length: LINE_AMOUNTS }, () => new Int32Array(lines));
  }

  /** Room for order i. */
  private order(i: number): void {
    if (i < this.lines.length) return;
    this.lines = grown(this.lines, Math.max(1024, Math.ceil(i * 1.25)));
  }

  /** Room for one more line of order i: its index. */
  private line(i: number): number {
    this.order(i);
    if (this.count === this.item.length) {
      const capacity = Math.ceil(this.item.length * 1.5);
      this.owner = grown(this.owner, capacity);
      this.item = grown(this.item, capacity);
      this.quantity = grown(this.quantity, capacity);
      this.refundedQuantity = grown(this.refundedQuantity, capacity);
      for (let m = 0; m < LINE_AMOUNTS; m++) this.money[m] = grown(this.money[m] as Int32Array, capacity);
    }
    this.lines[i]! += 1;
    this.owner[this.count] = i;
    return this.count++;
  }

  /** One line of order i from a COPY row: its LINE_ROW_FIELDS, from field `first` on. */
  pushCopied(i: number, data: Buffer, starts: Int32Array, lengths: Int32Array, first: number): void {
    const l = this.line(i);
    // The texts' run of bytes, with the first one's length (the binary COPY's fields are each
    // their int4 length, -1 for NULL, then their bytes): one run, one combination of texts.
    const from = (starts[first] as number) - 4;
    const to = (starts[first + CATEGORIES] as number) + Math.max(0, lengths[first + CATEGORIES] as number);
    let item = this.codes.copiedItem(data, from, to - from);
    if (item < 0) {
      item = this.copiedTexts(data, starts, lengths, first);
      this.codes.rememberCopied(data, from, to - from, item);
    }
    this.item[l] = item;
    this.quantity[l] = int32(data, starts[first + QUANTITY] as number);
    this.refundedQuantity[l] = int32(data, starts[first + REFUNDED_QUANTITY] as number);
    for (let m = 0; m < LINE_AMOUNTS; m++)
      (this.money[m] as Int32Array)[l] = this.checkedCents(
        numericCents(data, starts[first + FIRST_AMOUNT + m] as number),
      );
  }

  /** The item of a COPY row's line texts never seen in this build, from each text's code. */
  private copiedTexts(data: Buffer, starts: Int32Array, lengths: Int32Array, first: number): number {
    const codes = this.codes;
    const text = (f: number, texts: TextCodes): number =>
      texts.code(data, starts[first + f] as number, lengths[first + f] as number);
    return codes.item(
      text(0, codes.products),
      text(1, codes.productIds),
      text(2, codes.variants),
      text(3, codes.skus),
      codes.categorySet(data, starts[first + CATEGORIES] as number, lengths[first + CATEGORIES] as number),
    );
  }

  /** One line of order i whose texts are coded already (an item of LineCodes), its cents as numbers. */
  pushCoded(
    i: number,
    item: number,
    quantity: number,
    refundedQuantity: number,
    subtotal: number,
    discount: number,
    refunded: number,
  ): void {
    const l = this.line(i);
    this.item[l] = item;
    this.quantity[l] = quantity;
    this.refundedQuantity[l] = refundedQuantity;
    (this.money[0] as Int32Array)[l] = this.checkedCents(subtotal);
    (this.money[1] as Int32Array)[l] = this.checkedCents(discount);
    (this.money[2] as Int32Array)[l] = this.checkedCents(refunded);
  }

  /** Order i's lines as a delta reads them. */
  pushValues(i: number, lines: readonly LineValues[]): void {
    this.order(i);
    for (const line of lines)
      this.pushCoded(
        i,
        this.codes.textsItem(line.p, line.i, line.v, line.s, line.c),
        line.q,
        line.rq,
        Number(line.st),
        Number(line.d),
        Number(line.ra),
      );
  }

  /** The lines in the part's order: source[k] is the pushed index of the part's k-th order. */
  placed(source: Int32Array, orders: number): PartLines {
    const lineStart = new Int32Array(orders + 1);
    const next = new Int32Array(Math.max(orders, this.lines.length)); // per pushed order: where its next line goes
    for (let k = 0; k < orders; k++) {
      const i = source[k] as number;
      next[i] = lineStart[k] as number;
      // An order pushed past the room made for lines has none.
      lineStart[k + 1] = (lineStart[k] as number) + (i < this.lines.length ? (this.lines[i] as number) : 0);
    }
    const n = lineStart[orders] as number;
    const where = new Int32Array(this.count); // each line's place in the part
    for (let l = 0; l < this.count; l++) where[l] = next[this.owner[l] as number]!++;
    const columns = [this.item, this.quantity, this.refundedQuantity, ...this.money];
    const [item, quantity, refundedQuantity, subtotal, discount, refundedAmount] = columns.map((from) => {
      const to = new Int32Array(n);
      for (let l = 0; l < this.count; l++) to[where[l] as number] = from[l] as number;
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
