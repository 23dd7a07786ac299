// Byte strings (text fields of a binary COPY) coded as dense integers in order of first sight,
// without a JS string or object per value: the keys' bytes sit end to end in blocks of 1 MiB
// (growing never copies them), found through an open-addressing table of codes. Issue 29: the
// first block, and the table, start small and double up to that size (a copy of at most 1 MiB,
// once): a block of 1 MiB from the first key was most of a small organization's snapshot, nine
// times over (customers, anonymous orders, statuses, countries, the lines' texts). A customer hash
// takes 33 bytes packed (HexTextCodes), 12 for its place, length and hash, 4 to 8 of table, and
// no work for the garbage collector.

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Bytes hashed at each end of a key: keys are compared whole anyway. */
const HASHED_BYTES = 12;
const BLOCK_BITS = 20;
const BLOCK_BYTES = 1 << BLOCK_BITS;
/** A first block's bytes, doubled as keys come, up to BLOCK_BYTES. */
const FIRST_BLOCK_BYTES = 256;
/** Codes the places start with (grown by half), and table slots (doubled, at most 3/4 full). */
const FIRST_CODES = 16;
const FIRST_SLOTS = 32;

export interface ByteCodesState {
  readonly size: number;
  readonly used: number;
  readonly blocks: readonly Uint8Array[];
  readonly at: Int32Array;
  readonly lengths: Int32Array;
  readonly hashes: Int32Array;
  readonly slots: Int32Array;
}

export class ByteCodes {
  private readonly blocks: Uint8Array[] = [];
  /** Free bytes from here in the last block. */
  private used = BLOCK_BYTES;
  /**
   * Where key c starts: block index × BLOCK_BYTES + offset, up to 2 GiB of keys (a key longer than
   * a block has its own).
   */
  private at: Int32Array = new Int32Array(FIRST_CODES);
  private lengths: Int32Array = new Int32Array(FIRST_CODES);
  private hashes: Int32Array = new Int32Array(FIRST_CODES);
  /** code + 1 of the key in each slot, 0 for an empty slot; a power of two, at most 3/4 full. */
  private slots: Int32Array = new Int32Array(FIRST_SLOTS);
  /** Bytes of the blocks, together. */
  private blockBytes = 0;
  /** Keys appended (append) since the table was last made: it is made again before any lookup. */
  private unindexed = false;
  size = 0;

  constructor(
    /**
     * Bytes hashed at each end of a key. Keys alike at both ends but for a few bytes in the middle
     * (a line's texts: product … categories, line-codes.ts) are hashed whole (Infinity): the same
     * hash would make them one long chain of full comparisons.
     */
    private readonly hashedBytes = HASHED_BYTES,
    /**
     * Keys expected, if known (issue 28: a build's orders, counted before they are read): room made
     * for them at once instead of grown by half and the table doubled along the way, copies that
     * took a fifth of a second of a million orders' read.
     */
    expected = 0,
  ) {
    if (expected > FIRST_CODES) {
      this.at = new Int32Array(expected);
      this.lengths = new Int32Array(expected);
      this.hashes = new Int32Array(expected);
      let slots = FIRST_SLOTS;
      while (4 * expected > 3 * slots) slots *= 2;
      this.slots = new Int32Array(slots);
    }
  }

  /** The code of data[start, start + length): a new one (size − 1 after the call) if never seen. */
  code(data: Uint8Array, start: number, length: number): number {
    if (this.unindexed) this.rehash(this.slots.length);
    return this.lookUp(data, start, length, true);
  }

  /** The code of data[start, start + length), -1 if never seen (nothing added). */
  find(data: Uint8Array, start: number, length: number): number {
    if (this.unindexed) this.rehash(this.slots.length);
    return this.lookUp(data, start, length, false);
  }

  /**
   * Issue 28: data[start, start + length) as a new code without looking it up (the caller knows it
   * was never added: the keys of one statement's rows), its place in the table left to the first
   * lookup; a key appended twice has two codes, a lookup finding the first.
   */
  append(data: Uint8Array, start: number, length: number): number {
    this.add(data, start, length, this.hashOf(data, start, length));
    this.unindexed = true;
    return this.size - 1;
  }

  /** True when code c's key is data[start, start + length): a guess checked without hashing. */
  holds(c: number, data: Uint8Array, start: number, length: number): boolean {
    return c >= 0 && c < this.size && this.equals(c, data, start, length);
  }

  /** Everything this holds, as arrays (a persisted snapshot, issue 19). */
  state(): ByteCodesState {
    if (this.unindexed) this.rehash(this.slots.length); // a saved table finds every key
    return {
      size: this.size,
      used: this.used,
      blocks: this.blocks,
      at: this.at.subarray(0, this.size),
      lengths: this.lengths.subarray(0, this.size),
      hashes: this.hashes.subarray(0, this.size),
      slots: this.slots,
    };
  }

  /** Codes as they were when `state` was taken; its arrays become this one's (never shared). */
  static restore(state: ByteCodesState): ByteCodes {
    const codes = new ByteCodes();
    codes.size = state.size;
    codes.used = state.used;
    codes.blocks.push(...state.blocks); // taken as they are: the caller gives arrays of their own
    for (const block of state.blocks) codes.blockBytes += block.length;
    // Taken as they are too (a snapshot file's views, issue 19), unless too short to grow by half.
    const room = (array: Int32Array): Int32Array => {
      if (array.length >= FIRST_CODES) return array;
      const roomy = new Int32Array(FIRST_CODES);
      roomy.set(array);
      return roomy;
    };
    codes.at = room(state.at);
    codes.lengths = room(state.lengths);
    codes.hashes = room(state.hashes);
    codes.slots = state.slots;
    return codes;
  }

  /** Memory held, in bytes (keys, their places and the table). */
  get bytes(): number {
    return this.blockBytes + this.at.length * 12 + this.slots.length * 4;
  }

  /** FNV-1a over the length and both ends: tells customer hashes and e-mail addresses apart. */
  private hashOf(data: Uint8Array, start: number, length: number): number {
    let hash = Math.imul(FNV_OFFSET ^ length, FNV_PRIME);
    const end = start + length;
    const head = Math.min(end, start + this.hashedBytes);
    for (let p = start; p < head; p++) hash = Math.imul(hash ^ (data[p] as number), FNV_PRIME);
    for (let p = Math.max(head, end - this.hashedBytes); p < end; p++)
      hash = Math.imul(hash ^ (data[p] as number), FNV_PRIME);
    return hash;
  }

  private lookUp(data: Uint8Array, start: number, length: number, add: boolean): number {
    const hash = this.hashOf(data, start, length);
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const found = (this.slots[slot] as number) - 1;
      if (found < 0) {
        if (!add) return -1;
        this.slots[slot] = this.add(data, start, length, hash) + 1;
        if (4 * this.size > 3 * this.slots.length) this.rehash(this.slots.length * 2);
        return this.size - 1;
      }
      if (this.hashes[found] === hash && this.equals(found, data, start, length)) return found;
    }
  }

  private equals(c: number, data: Uint8Array, start: number, length: number): boolean {
    if (this.lengths[c] !== length) return false;
    const at = this.at[c] as number;
    const block = this.blocks[at >>> BLOCK_BITS] as Uint8Array;
    const from = at & (BLOCK_BYTES - 1);
    for (let k = 0; k < length; k++) if (block[from + k] !== data[start + k]) return false;
    return true;
  }

  private add(data: Uint8Array, start: number, length: number, hash: number): number {
    const c = this.size++;
    if (c === this.at.length) {
      this.at = grown(this.at);
      this.lengths = grown(this.lengths);
      this.hashes = grown(this.hashes);
    }
    this.makeRoom(length);
    const index = this.blocks.length - 1;
    const block = this.blocks[index] as Uint8Array;
    // Byte by byte: a subarray a key (an object each) cost more than the copy of a short key.
    for (let k = 0, to = this.used; k < length; k++) block[to + k] = data[start + k] as number;
    this.at[c] = index * BLOCK_BYTES + this.used;
    this.used = length > BLOCK_BYTES ? BLOCK_BYTES : this.used + length;
    this.lengths[c] = length;
    this.hashes[c] = hash;
    return c;
  }

  /**
   * Room for `length` more bytes in the last block: that block doubled while it is smaller than a
   * full one (its keys keep their offsets), else a new block, of BLOCK_BYTES, or of its own for
   * a longer key (left full).
   */
  private makeRoom(length: number): void {
    const last = this.blocks.length - 1;
    const block = this.blocks[last];
    const capacity = block ? Math.min(block.length, BLOCK_BYTES) : 0;
    if (block && this.used + length <= capacity) return;
    if (block && block.length < BLOCK_BYTES && this.used + length <= BLOCK_BYTES) {
      let size = block.length * 2;
      while (size < this.used + length) size *= 2;
      const bigger = new Uint8Array(Math.min(size, BLOCK_BYTES));
      bigger.set(block.subarray(0, this.used));
      this.blocks[last] = bigger;
      this.blockBytes += bigger.length - block.length;
      return;
    }
    const first = this.blocks.length === 0;
    const size = length > BLOCK_BYTES ? length : first ? Math.max(FIRST_BLOCK_BYTES, length) : BLOCK_BYTES;
    this.blocks.push(new Uint8Array(size));
    this.blockBytes += size;
    this.used = 0;
  }

  /**
   * The table made again with at least `slots` slots (at most 3/4 full), codes in order: of two
   * equal keys (append), the first one's slot comes first on the probe.
   */
  /**
   * Issue 28: the table made for the keys appended so far (append), each key appended again after
   * its first code given for that first code (code → first code); empty when no key came twice.
   * A lookup finds a key at its first code either way: this says which later codes repeat one.
   */
  indexRepeats(): Map<number, number> {
    const repeats = new Map<number, number>();
    let slots = this.slots.length;
    while (4 * this.size > 3 * slots) slots *= 2;
    this.slots = new Int32Array(slots);
    this.unindexed = false;
    const mask = slots - 1;
    for (let c = 0; c < this.size; c++) {
      const hash = this.hashes[c] as number;
      let slot = hash & mask;
      for (
        let found = (this.slots[slot] as number) - 1;
        found >= 0;
        found = (this.slots[slot] as number) - 1
      ) {
        if (this.hashes[found] === hash && this.sameKeys(found, c)) break;
        slot = (slot + 1) & mask;
      }
      const found = (this.slots[slot] as number) - 1;
      if (found >= 0) repeats.set(c, found);
      else this.slots[slot] = c + 1;
    }
    return repeats;
  }

  private sameKeys(a: number, b: number): boolean {
    const at = this.at[b] as number;
    return this.equals(
      a,
      this.blocks[at >>> BLOCK_BITS] as Uint8Array,
      at & (BLOCK_BYTES - 1),
      this.lengths[b] as number,
    );
  }

  private rehash(slots: number): void {
    while (4 * this.size > 3 * slots) slots *= 2;
    this.slots = new Int32Array(slots);
    this.unindexed = false;
    const mask = this.slots.length - 1;
    for (let c = 0; c < this.size; c++) {
      let slot = (this.hashes[c] as number) & mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
      this.slots[slot] = c + 1;
    }
  }
}

function grown(array: Int32Array): Int32Array {
  const bigger = new Int32Array(Math.ceil(array.length * 1.5));
  bigger.set(array);
  return bigger;
}

/** Value of each lowercase hexadecimal digit's byte, -1 for any other byte. */
const HEX_DIGIT = Int8Array.from({ length: 256 }, (_, byte) =>
  byte >= 0x30 && byte <= 0x39 ? byte - 0x30 : byte >= 0x61 && byte <= 0x66 ? byte - 0x61 + 10 : -1,
);

/**
 * The digits data[start, start + length) (an even count) packed two a byte into `into` from `at`;
 * false, at the first byte that is not a lowercase hexadecimal digit (what was written then is
 * not a key).
 */
export function packHexDigits(
  data: Uint8Array,
  start: number,
  length: number,
  into: Uint8Array,
  at: number,
): boolean {
  for (let k = 0; k < length; k += 2) {
    const high = HEX_DIGIT[data[start + k] as number] as number;
    const low = HEX_DIGIT[data[start + k + 1] as number] as number;
    if ((high | low) < 0) return false;
    into[at + (k >> 1)] = (high << 4) | low;
  }
  return true;
}

/** A key of 64 digits packed: its 0 byte, then two digits a byte. */
export const PACKED_HEX_BYTES = 33;

/**
 * ByteCodes for text that is mostly lowercase hexadecimal, as customer hashes are (U1): such a key
 * is kept packed, two digits a byte, behind a 0 byte that no text holds; any other key as it is.
 * A million customer hashes take half the memory.
 */
export class HexTextCodes {
  private packed = new Uint8Array(PACKED_HEX_BYTES);

  constructor(private readonly codes = new ByteCodes()) {}

  state(): ByteCodesState {
    return this.codes.state();
  }

  get size(): number {
    return this.codes.size;
  }

  get bytes(): number {
    return this.codes.bytes;
  }

  /** The code of the text's bytes, -1 if never seen. */
  find(data: Uint8Array, start: number, length: number): number {
    return this.lookUp(data, start, length, false);
  }

  code(data: Uint8Array, start: number, length: number): number {
    return this.lookUp(data, start, length, true);
  }

  /**
   * Issue 28 (customer-batch.ts): a key given packed already, bytes[start, start + 33) (its 0 byte,
   * then its 64 digits two a byte), known never to have been added: a new code, its lookup left to
   * later (ByteCodes.append).
   */
  appendPacked(bytes: Uint8Array, start: number): number {
    return this.codes.append(bytes, start, PACKED_HEX_BYTES);
  }

  /**
   * A text known never to have been added (an import's new customer, EarliestOrders): a new code,
   * its lookup left to later, packed when it is 64 lowercase digits; any other text coded as
   * code() does (looked up).
   */
  appendText(text: string): number {
    const packed = this.packed;
    if (text.length === 2 * (PACKED_HEX_BYTES - 1)) {
      let k = 0;
      for (; k < text.length; k += 2) {
        const high = HEX_DIGIT[text.charCodeAt(k)] ?? -1; // undefined past 0xff
        const low = HEX_DIGIT[text.charCodeAt(k + 1)] ?? -1;
        if ((high | low) < 0) break;
        packed[1 + (k >> 1)] = (high << 4) | low;
      }
      if (k === text.length) return this.codes.append(packed, 0, PACKED_HEX_BYTES);
    }
    const bytes = Buffer.from(text, 'utf8');
    return this.code(bytes, 0, bytes.length);
  }

  /** True when code c's key is the packed key bytes[start, start + 33) (appendPacked's form). */
  holdsPacked(c: number, bytes: Uint8Array, start: number): boolean {
    return this.codes.holds(c, bytes, start, PACKED_HEX_BYTES);
  }

  private lookUp(data: Uint8Array, start: number, length: number, add: boolean): number {
    const codes = this.codes;
    if (length % 2 !== 0) return add ? codes.code(data, start, length) : codes.find(data, start, length);
    const size = 1 + length / 2;
    if (this.packed.length < size) this.packed = new Uint8Array(size);
    const packed = this.packed; // packed[0] stays 0
    if (!packHexDigits(data, start, length, packed, 1))
      return add ? codes.code(data, start, length) : codes.find(data, start, length);
    return add ? codes.code(packed, 0, size) : codes.find(packed, 0, size);
  }
}
