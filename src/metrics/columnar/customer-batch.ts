// Issue 28, item 2: a build's customer keys coded a batch at a time instead of one dictionary
// lookup an order. Profiled at a million orders on PostgreSQL, the lookups of HexTextCodes were the
// largest share of the orders' decoding (about 1.1 s of 3.6 s): each one a few reads at random
// places of a table and of tens of MB of keys. Here the orders' keys, packed as HexTextCodes packs
// them, are laid end to end as they come. They are placed by their hash into buckets of about a
// thousand keys each at the batch's full size, each bucket with a table of its own, small enough
// to stay in the processor's cache while that bucket's keys are looked for in it; each key met for
// the first time is given its code in the order the orders came (first sight, as a lookup an order
// gave them).
//
// The keys are coded a step at a time while the orders are read (codeSome, between two pieces:
// the build's thread waits for the database about a third of the read), the rest once the batch is
// full or the orders read (code), yielding the event loop every SLICE_KEYS keys. Coded all at the
// end, they were 0.3–0.4 s after the last order came, before the first report could be answered.
//
// Only a customer key of 64 lowercase hexadecimal digits (U1's hashes, every key the service
// writes) goes in the batch; any other text is coded at once, as before. There is one batch, of a
// build's first BATCH_ORDERS orders (36 bytes each: about 38 MB held when it is coded at the end;
// coded a step at a time, only a step's keys are held, the tables naming the coded keys by their
// codes), coded between two pieces of the COPY once full; the orders after it are looked up one at
// a time, as before. Later batches, tried, cost more than they saved at ten million orders: their
// keys, most of them new to the batch, were looked up all the same, and the COPY waited for each
// batch's coding (docs/benchmarks.md).
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

/** Slots of a bucket's first table. */
const FIRST_SLOTS = 16;

/** Bits of the hash that pick a bucket: about a thousand keys a bucket, its table within the L1 cache. */
function bucketBits(n: number): number {
  return Math.max(0, Math.ceil(Math.log2(n / 1024)));
}

/** Keys a step of codeSome codes while the orders are read (some ten milliseconds). */
export const STEP_KEYS = 1 << 15;

export class CustomerBatch {
  private keys: Uint8Array;
  private words: Int32Array;
  private hashes: Int32Array;
  /** The order (its index among the pushed ones) of each key held. */
  private orders: Int32Array;
  /** The code each key held was given, for the keys coded so far. */
  private codes: Int32Array;
  /** Keys held: [coded, length) wait to be coded. */
  length = 0;
  /** Keys coded so far: [0, coded). */
  private coded = 0;
  /** Keys added in all, counted for `due` (the keys held start again from 0 once all are coded). */
  private added = 0;
  /** Bits of a key's hash that pick its bucket, set by the batch's size when it is made. */
  private readonly bits: number;
  /**
   * Each bucket's table, two numbers a slot: its key, then that key's hash (a probe compares hashes
   * within the table). A key is its code + 1 once coded (its bytes then read from the codes), or,
   * during codeSome, -(k + 1) for the key held at k that it first saw. 0: an empty slot. At most
   * half full.
   */
  private readonly tables: Int32Array[];
  /** Keys in each bucket's table. */
  private readonly held: Int32Array;

  constructor(
    capacity: number,
    /** Orders held before the batch is due (a test's smaller batches). */
    private readonly batchOrders = BATCH_ORDERS,
  ) {
    // Room for the whole batch, though coded a step at a time only a step's keys are ever held
    // (issue 28: memory first written costs this machine about 3.5 ms a MB, and 48 MB of keys
    // written once each were a sixth of a million orders' decoding; the room never written is
    // never mapped).
    const size = Math.min(batchOrders, Math.max(16, capacity));
    this.keys = new Uint8Array(size * STRIDE);
    this.words = new Int32Array(this.keys.buffer);
    this.hashes = new Int32Array(size);
    this.orders = new Int32Array(size);
    this.codes = new Int32Array(size);
    this.bits = bucketBits(size);
    this.tables = Array.from({ length: 1 << this.bits }, () => new Int32Array(2 * FIRST_SLOTS));
    this.held = new Int32Array(1 << this.bits);
  }

  /** Whether the batch should be coded now (code): BATCH_ORDERS orders or more were added. */
  get due(): boolean {
    return this.added >= this.batchOrders;
  }

  /** Keys added and not coded yet. */
  get pending(): number {
    return this.length - this.coded;
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
    this.added++;
    return true;
  }

  /**
   * The keys added since the last call coded (customer[order] set for each), up to `most` of them,
   * in one go: each key new to `codes` appended without being looked up (its table is made at the
   * first lookup). `codes` must hold no key of 64 digits but the batch's own. Once every key held
   * is coded, the next ones are held from the start again.
   */
  codeSome(codes: HexTextCodes, customer: Int32Array, most = this.pending): void {
    const from = this.coded;
    const to = from + Math.min(most, this.pending);
    if (to === from) return;
    const { first, news } = this.firstOccurrences(codes, from, to);
    for (let e = from; e < to; e++) {
      const f = first[e - from] as number;
      let c: number;
      if (f >= 0)
        c = f; // a key coded in an earlier step
      else if (-f - 1 !== e)
        c = this.codes[-f - 1] as number; // a repeat of this step's key
      else c = codes.appendPacked(this.keys, e * STRIDE + PACKED_AT); // a new customer
      this.codes[e] = c;
      customer[this.orders[e] as number] = c;
    }
    // The new keys' slots now name their codes: the keys held may start again from 0.
    for (let n = 0; n < news.count; n++) {
      const table = this.tables[news.bucket[n] as number] as Int32Array;
      const slot = news.slot[n] as number;
      table[slot] = (this.codes[-(table[slot] as number) - 1] as number) + 1;
    }
    this.coded = to;
    if (this.coded === this.length) this.coded = this.length = 0;
  }

  /** Every key not coded yet coded (codeSome), yielding between slices. */
  async code(codes: HexTextCodes, customer: Int32Array): Promise<void> {
    while (this.pending > 0) {
      this.codeSome(codes, customer, SLICE_KEYS);
      if (this.pending > 0) await nextTurn();
    }
  }

  /**
   * For each key e of [from, to), the code of the key equal to it coded before (≥ 0), or -(k + 1)
   * for the first key k of [from, to) equal to it (k = e when none comes before, then kept in its
   * bucket's table, its slot listed in `news`): the keys placed by the high bits of their hash
   * into their buckets, in order, then each bucket's keys found in its table.
   */
  private firstOccurrences(
    codes: HexTextCodes,
    from: number,
    to: number,
  ): { first: Int32Array; news: { bucket: Int32Array; slot: Int32Array; count: number } } {
    const { bits, hashes, tables, held, words, keys } = this;
    const buckets = 1 << bits;
    const bucketOf = (e: number): number => (bits === 0 ? 0 : (hashes[e] as number) >>> (32 - bits));
    const start = new Int32Array(buckets + 1);
    for (let e = from; e < to; e++) start[bucketOf(e) + 1]! += 1;
    for (let b = 0; b < buckets; b++) start[b + 1]! += start[b] as number;
    const placed = new Int32Array(to - from);
    const next = start.slice(0, buckets);
    for (let e = from; e < to; e++) placed[next[bucketOf(e)]!++] = e;
    const first = new Int32Array(to - from);
    const news = { bucket: new Int32Array(to - from), slot: new Int32Array(to - from), count: 0 };
    for (let b = 0; b < buckets; b++) {
      const begin = start[b] as number;
      const end = start[b + 1] as number;
      if (begin === end) continue;
      let table = tables[b] as Int32Array;
      if (4 * ((held[b] as number) + end - begin) > table.length) {
        table = rehashed(table, (held[b] as number) + end - begin);
        tables[b] = table;
      }
      const mask = (table.length >> 1) - 1;
      for (let k = begin; k < end; k++) {
        const e = placed[k] as number;
        const hash = hashes[e] as number;
        for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
          const entry = table[2 * slot] as number;
          if (entry === 0) {
            table[2 * slot] = -(e + 1);
            table[2 * slot + 1] = hash;
            held[b]! += 1;
            first[e - from] = -(e + 1);
            news.bucket[news.count] = b;
            news.slot[news.count++] = 2 * slot;
            break;
          }
          if (table[2 * slot + 1] !== hash) continue;
          if (
            entry < 0
              ? sameKey(words, -entry - 1, e)
              : codes.holdsPacked(entry - 1, keys, e * STRIDE + PACKED_AT)
          ) {
            first[e - from] = entry < 0 ? entry : entry - 1;
            break;
          }
        }
      }
    }
    return { first, news };
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
    this.codes = grown(this.codes, size);
  }
}

/** A bucket's table with room for `keys` keys (at most half full), its keys placed again. */
function rehashed(table: Int32Array, keys: number): Int32Array {
  let slots = table.length >> 1;
  while (slots < 2 * keys) slots *= 2;
  const bigger = new Int32Array(2 * slots);
  const mask = slots - 1;
  for (let at = 0; at < table.length; at += 2) {
    const entry = table[at] as number;
    if (entry === 0) continue;
    const hash = table[at + 1] as number;
    let slot = hash & mask;
    while (bigger[2 * slot] !== 0) slot = (slot + 1) & mask;
    bigger[2 * slot] = entry;
    bigger[2 * slot + 1] = hash;
  }
  return bigger;
}

function grown(array: Int32Array, size: number): Int32Array {
  const bigger = new Int32Array(size);
  bigger.set(array);
  return bigger;
}

function sameKey(words: Int32Array, a: number, b: number): boolean {
  const p = a * WORDS + 1;
  const q = b * WORDS + 1;
  for (let w = 0; w < 8; w++) if (words[p + w] !== words[q + w]) return false;
  return true;
}
