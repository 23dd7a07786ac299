// The orders of a build by their key, for its lines to find them (section 15): the lines come in
// a COPY of their own, after the orders and in any order, each with its order's store id and
// external id. Kept only while the build reads, as bytes in a ByteCodes (no string per order).
//
// A key is the run of COPY bytes from the store id to the end of the external id: the int8 store
// id, the external id's int4 length, its bytes. Both COPYs write the two fields side by side
// (ORDER_FIELDS, the lines' COPY), so the key is hashed where it lies, without a copy.
import { ByteCodes } from './byte-codes.js';

export class OrderKeys {
  private readonly keys: ByteCodes;
  /** The order (its index among the pushed ones) of each key code. */
  private orders: Int32Array;
  /** The key code last found: the next line's is most often the same or the next one. */
  private last = -1;
  /** Keys appended again (a row read twice), made to find their first order before any lookup. */
  private repeats: number | undefined;

  constructor(
    capacity: number,
    /**
     * Issue 28: the orders come from one statement, so no key twice: the hash table is made only
     * if a line's order is not where the previous line's was (the lines' read, not the orders',
     * pays for it). Otherwise (read by pages) a key may come twice, found out at the first lookup.
     */
    private readonly unique = false,
  ) {
    this.orders = new Int32Array(Math.max(16, capacity));
    this.keys = new ByteCodes(undefined, capacity); // room for every order read
  }

  /**
   * Order i's key: data[from, to), from its store id to its external id's end, appended without a
   * lookup (issue 28: looked up one at a time as the orders were read by pages, they took about
   * 0.3 s of a million orders' read, before the first report could be answered).
   */
  add(i: number, data: Uint8Array, from: number, to: number): void {
    const code = this.keys.append(data, from, to - from);
    if (code === this.orders.length) {
      const bigger = new Int32Array(Math.ceil(this.orders.length * 1.5));
      bigger.set(this.orders);
      this.orders = bigger;
    }
    this.orders[code] = i;
    this.repeats = undefined;
  }

  /**
   * The order with the key data[from, to), -1 for none: the line's order was written after the
   * orders were read (after the build's data version too, so the first delta reads it with its
   * lines). A key read twice (a row the table moved while the build read it by pages) finds its
   * first order: the order changed after the build's data version, and the first delta reads it
   * again.
   */
  find(data: Uint8Array, from: number, to: number): number {
    if (this.repeats === undefined) this.indexRepeats();
    // The lines lie in the table much as their orders do (written together), and both are read in
    // the table's order: a line's key is most often its predecessor's or the next order's, checked
    // where it lies, without the hash table's random reads (the bulk of a line's decoding at
    // 300,000 orders, issue 28).
    const keys = this.keys;
    const length = to - from;
    let code = this.last;
    if (!keys.holds(code, data, from, length) && !keys.holds(++code, data, from, length))
      code = keys.find(data, from, length);
    if (code < 0) return -1;
    this.last = code;
    return this.orders[code] as number;
  }

  /** Keys held, each once. */
  get size(): number {
    if (this.repeats === undefined) this.indexRepeats();
    return this.keys.size - (this.repeats ?? 0);
  }

  /** Each repeated key's later codes made to give its first order (the table made with them). */
  private indexRepeats(): void {
    if (this.unique) {
      this.repeats = 0; // none: the table is made by the first lookup that needs it
      return;
    }
    const repeats = this.keys.indexRepeats();
    for (const [code, first] of repeats) this.orders[code] = this.orders[first] as number;
    this.repeats = repeats.size;
  }
}
