// The orders of a build by their key, for its lines to find them (section 15): the lines come in
// a COPY of their own, after the orders and in any order, each with its order's store id and
// external id. Kept only while the build reads, as bytes in a ByteCodes (no string per order).
import { ByteCodes } from './byte-codes.js';

/** Bytes of a key: the store id (8, as binary COPY writes an int8), then the external id. */
const STORE_BYTES = 8;

export class OrderKeys {
  private readonly keys = new ByteCodes();
  /** The order (its index among the pushed ones) of each key code. */
  private orders: Int32Array;
  private scratch = Buffer.alloc(256);

  constructor(capacity: number) {
    this.orders = new Int32Array(Math.max(16, capacity));
  }

  /**
   * Order i's key, its int8 store id at `store` and its external id at [id, id + idLength) of data.
   * A key read twice (a row the table moved while the build read it by pages) keeps its first
   * order: the order changed after the build's data version, and the first delta reads it again.
   */
  add(i: number, data: Buffer, store: number, id: number, idLength: number): void {
    const before = this.keys.size;
    const code = this.keys.code(this.key(data, store, id, idLength), 0, STORE_BYTES + idLength);
    if (code < before) return;
    if (code === this.orders.length) {
      const bigger = new Int32Array(Math.ceil(this.orders.length * 1.5));
      bigger.set(this.orders);
      this.orders = bigger;
    }
    this.orders[code] = i;
  }

  /**
   * The order with this key, -1 for none: the line's order was written after the orders were read
   * (after the build's data version too, so the first delta reads it with its lines).
   */
  find(data: Buffer, store: number, id: number, idLength: number): number {
    const code = this.keys.find(this.key(data, store, id, idLength), 0, STORE_BYTES + idLength);
    return code < 0 ? -1 : (this.orders[code] as number);
  }

  get size(): number {
    return this.keys.size;
  }

  private key(data: Buffer, store: number, id: number, idLength: number): Buffer {
    if (this.scratch.length < STORE_BYTES + idLength) this.scratch = Buffer.alloc(STORE_BYTES + idLength);
    data.copy(this.scratch, 0, store, store + STORE_BYTES);
    data.copy(this.scratch, STORE_BYTES, id, id + idLength);
    return this.scratch;
  }
}
