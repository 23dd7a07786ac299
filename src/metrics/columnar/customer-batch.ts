// Issue 28, item 2: a build's customer keys coded a batch at a time instead of one dictionary
// lookup an order. Profiled at a million orders on PostgreSQL, the lookups of HexTextCodes were the
// largest share of the orders' decoding (about 1.1 s of 3.6 s): each one a few reads at random
// places of a table and of tens of MB of keys. Here the orders' keys, packed as HexTextCodes packs
// them, are laid end to end as they come; once the batch is full or the orders read, the keys are
// grouped by their hash into buckets of about a thousand, each bucket's repeats found in a table
// small enough to stay in the processor's cache, and each key met for the first time is given its
// code in the order the orders came (first sight, as a lookup an order gave them). The coding
// yields the event loop every SLICE_KEYS keys, as the build's other long loops do.
//
// Only a customer key of 64 lowercase hexadecimal digits (U1's hashes, every key the service
// writes) goes in the batch; any other text is coded at once, as before. There is one batch, of a
// build's first BATCH_ORDERS orders (36 bytes each: about 38 MB), coded between two pieces of the
// COPY once full; the orders after it are looked up one at a time, as before. Later batches, tried,
// cost more than they saved at ten million orders: their keys, most of them new to the batch,
// were looked up all the same, and the COPY waited for each batch's coding (docs/benchmarks.md).
import { PACKED_HEX_BYTES, packHexDigits, type HexTextCodes } from './byte-codes.js';

/** Orders a batch holds before its keys are coded (it takes the rest of the piece being read). */
export const BATCH_ORDERS = 1 << 20;
/** Keys coded between two turns of the event loop (a few milliseconds). */
const SLICE_KEYS = 1 << 16;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/** A key's place: 3 bytes of padding (its digits' words aligned), then its packed form (HexTextCodes). */
const PACKED_AT = 3;
const STRIDE = PACKED_AT + PACKED_HEX_BYTES;
const WORDS = STRIDE / 4;

/** Bits of the hash that pick a bucket: about a thousand keys a bucket, its table within the L1 cache. */
function bucketBits(n: number): number {
  return Math.max(0, Math.ceil(Math.log2(n / 1024)));
}

export class CustomerBatch {
  private keys: Uint8Array;
  private words: Int32Array;
  private hashes: Int32Array;
  /** The order (its index among the pushed ones) of each key of the batch. */
  private orders: Int32Array;
  length = 0;

  constructor(
    capacity: number,
    /** Orders held before the batch is due (a test's smaller batches). */
    private readonly batchOrders = BATCH_ORDERS,
  ) {
    const size = Math.min(batchOrders, Math.max(16, capacity));
    this.keys = new Uint8Array(size * STRIDE);
    this.words = new Int32Array(this.keys.buffer);
    this.hashes = new Int32Array(size);
    this.orders = new Int32Array(size);
  }

  /** Whether the batch should be coded now (code): it holds BATCH_ORDERS orders or more. */
  get due(): boolean {
    return this.length >= this.batchOrders;
  }

  /**
   * Order `order`'s customer key data[start, start + length), false (nothing kept) unless it is
   * 64 lowercase hexadecimal digits.
   */
  add(order: number, data: Uint8Array, start: number, length: number): boolean {
    if (length !== 64) return false;
    if (this.length === this.orders.length) this.grow();
    const e = this.length;
    if (!packHexDigits(data, start, 64, this.keys, e * STRIDE + PACKED_AT + 1)) return false;
    // A hash of the 8 words: buckets by its high bits, the bucket's table slots by its low ones.
    const words = this.words;
    let hash = 0x811c9dc5;
    for (let w = e * WORDS + 1, end = w + 8; w < end; w++)
      hash = Math.imul(hash ^ (words[w] as number), 0x01000193);
    hash ^= hash >>> 15;
    hash = Math.imul(hash, 0x2c1b3c6d);
    hash ^= hash >>> 12;
    this.hashes[e] = hash;
    this.orders[e] = order;
    this.length = e + 1;
    return true;
  }

  /**
   * The batch's keys coded (customer[order] set for each), each key new to `codes` appended without
   * being looked up (its table is made at the first lookup): `codes` must hold no key of 64 digits
   * yet (the codes of an organization's first part, the batch's own). The batch is left empty.
   */
  async code(codes: HexTextCodes, customer: Int32Array): Promise<void> {
    const n = this.length;
    if (n === 0) return;
    const first = await firstOccurrences(n, this.hashes, this.words);
    const code = new Int32Array(n);
    for (let e = 0; e < n; e++) {
      if (e % SLICE_KEYS === SLICE_KEYS - 1) await nextTurn();
      const f = first[e] as number;
      const c = f !== e ? (code[f] as number) : codes.appendPacked(this.keys, e * STRIDE + PACKED_AT);
      code[e] = c;
      customer[this.orders[e] as number] = c;
    }
    this.length = 0;
  }

  private grow(): void {
    const length = this.orders.length;
    const size =
      length < this.batchOrders ? Math.min(this.batchOrders, length * 2) : length + (length >> 4) + 16;
    const keys = new Uint8Array(size * STRIDE);
    keys.set(this.keys);
    this.keys = keys;
    this.words = new Int32Array(keys.buffer);
    this.hashes = grown(this.hashes, size);
    this.orders = grown(this.orders, size);
  }
}

function grown(array: Int32Array, size: number): Int32Array {
  const bigger = new Int32Array(size);
  bigger.set(array);
  return bigger;
}

/**
 * For each key e of n, the first key equal to it (e itself when none comes before): the keys
 * placed by the high bits of their hash into buckets, in order, then each bucket's keys found in
 * a table of its own.
 */
async function firstOccurrences(n: number, hashes: Int32Array, words: Int32Array): Promise<Int32Array> {
  const bits = bucketBits(n);
  const buckets = 1 << bits;
  const bucketOf = (e: number): number => (bits === 0 ? 0 : (hashes[e] as number) >>> (32 - bits));
  const start = new Int32Array(buckets + 1);
  for (let e = 0; e < n; e++) start[bucketOf(e) + 1]! += 1;
  let largest = 0;
  for (let b = 0; b < buckets; b++) {
    largest = Math.max(largest, start[b + 1] as number);
    start[b + 1]! += start[b] as number;
  }
  const placed = new Int32Array(n);
  const next = start.slice(0, buckets);
  for (let e = 0; e < n; e++) placed[next[bucketOf(e)]!++] = e;
  const first = new Int32Array(n);
  let slots = 2;
  while (slots < 2 * largest) slots *= 2;
  const table = new Int32Array(slots); // key + 1 of each slot, 0 for an empty one
  for (let b = 0, since = 0; b < buckets; b++) {
    const from = start[b] as number;
    const to = start[b + 1] as number;
    since += to - from;
    if (since >= SLICE_KEYS) {
      since = 0;
      await nextTurn();
    }
    let size = 2;
    while (size < 2 * (to - from)) size *= 2;
    table.fill(0, 0, size);
    const mask = size - 1;
    for (let k = from; k < to; k++) {
      const e = placed[k] as number;
      const hash = hashes[e] as number;
      for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
        const found = (table[slot] as number) - 1;
        if (found < 0) {
          table[slot] = e + 1;
          first[e] = e;
          break;
        }
        if (hashes[found] === hash && sameKey(words, found, e)) {
          first[e] = found;
          break;
        }
      }
    }
  }
  return first;
}

function sameKey(words: Int32Array, a: number, b: number): boolean {
  const p = a * WORDS + 1;
  const q = b * WORDS + 1;
  for (let w = 0; w < 8; w++) if (words[p + w] !== words[q + w]) return false;
  return true;
}
