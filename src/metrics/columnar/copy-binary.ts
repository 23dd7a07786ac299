// PostgreSQL's binary COPY format, read as it streams in: the snapshot takes its columns straight
// from the bytes (no row objects, no strings but the dictionaries' new values). Format:
// https://www.postgresql.org/docs/current/sql-copy.html#SQL-COPY-BINARY-FORMAT

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const HEADER_BYTES = SIGNATURE.length + 8; // then the flags and the header extension's length
/** A binary COPY's header as a writer sends it: the signature, no flags, no header extension. */
export const BINARY_COPY_HEADER = Buffer.concat([SIGNATURE, Buffer.alloc(8)]);

const int16 = (d: Uint8Array, p: number): number =>
  (((d[p] as number) << 24) | ((d[p + 1] as number) << 16)) >> 16;

/** A big-endian int4 at p. */
export const int32 = (d: Uint8Array, p: number): number =>
  ((d[p] as number) << 24) |
  ((d[p + 1] as number) << 16) |
  ((d[p + 2] as number) << 8) |
  (d[p + 3] as number);

/** A big-endian int8 at p as a number: exact for magnitudes under 2^53 (ids, counts). */
export const int64 = (d: Uint8Array, p: number): number =>
  int32(d, p) * 4_294_967_296 + (int32(d, p + 4) >>> 0);

// timestamptz is int8 microseconds since 2000-01-01 00:00 UTC; ±infinity are the int8 extremes.
export const EPOCH_2000 = 946_684_800;
const MICROS = 1_000_000;
// 2^32 µs = 4,294 s + 967,296 µs: splitting the high word keeps every step an exact integer.
const HIGH_SECONDS = 4_294;
const HIGH_MICROS = 967_296;

/** floor(extract(epoch FROM t)) of a binary timestamptz at p, exact over the whole range. */
export function epochSeconds(d: Uint8Array, p: number): number {
  const high = int32(d, p);
  const low = int32(d, p + 4) >>> 0;
  if (high === 0x7fffffff && low === 0xffffffff) return Infinity;
  if (high === -0x80000000 && low === 0) return -Infinity;
  const micros = high * HIGH_MICROS + low; // |…| < 2^53
  const rest = ((micros % MICROS) + MICROS) % MICROS; // floor, also for instants before 2000
  return EPOCH_2000 + high * HIGH_SECONDS + (micros - rest) / MICROS;
}

const NUMERIC_NEGATIVE = 0x4000;
/** 100 × 10,000^k, the cents of a base-10,000 digit of weight k (k < 4: exact; past it, `**` as before). */
const CENTS_OF_WEIGHT = [100, 1_000_000, 10_000_000_000, 100_000_000_000_000];

/**
 * A binary numeric at p as whole hundredths (cents): exact while the result is under 2^53, NaN for
 * NaN, ±Infinity or a value that is not a whole number of hundredths.
 * Layout: int2 digit count, int2 weight, uint2 sign, int2 display scale, then base-10,000 digits,
 * the first one worth 10,000^weight.
 */
export function numericCents(d: Uint8Array, p: number): number {
  const digits = int16(d, p);
  const weight = int16(d, p + 2);
  const sign = ((d[p + 4] as number) << 8) | (d[p + 5] as number);
  if (sign !== 0 && sign !== NUMERIC_NEGATIVE) return NaN;
  let cents = 0;
  for (let k = 0; k < digits; k++) {
    const digit = int16(d, p + 8 + 2 * k);
    const power = weight - k; // this digit is worth digit × 10,000^power
    if (power >= 0) cents += digit * (power < 4 ? (CENTS_OF_WEIGHT[power] as number) : 100 * 10_000 ** power);
    else if (power === -1 && digit % 100 === 0) cents += digit / 100;
    else if (digit !== 0) return NaN; // finer than a hundredth
  }
  return sign === NUMERIC_NEGATIVE ? -cents : cents;
}

/**
 * Cuts a binary COPY stream into rows of `fields` fields. Each row goes to onRow with the buffer
 * holding it; starts[f] and lengths[f] (-1 for NULL) locate field f in it until onRow returns.
 * Rows are read in place in the pieces received; only a row cut by a piece's end is copied.
 */
export class BinaryCopyRows {
  readonly starts: Int32Array;
  readonly lengths: Int32Array;
  /** Bytes received but not read yet: the start of an unfinished row, or of the header. */
  private pending: Buffer | undefined;
  private header = true;
  private ended = false;

  constructor(
    private readonly fields: number,
    private readonly onRow: (data: Buffer) => void,
  ) {
    this.starts = new Int32Array(fields);
    this.lengths = new Int32Array(fields);
  }

  /** The bytes piece[from, to) (the whole piece by default), read until onRow returns. */
  write(piece: Buffer, from = 0, to = piece.length): void {
    let at = from;
    const pending = this.pending;
    if (pending) {
      // The unfinished row, completed with as few of the piece's bytes as it takes.
      for (let take = Math.min(to - from, 1024); ; take = Math.min(to - from, take * 8)) {
        const joined = Buffer.concat([pending, piece.subarray(from, from + take)]);
        const end = this.next(joined, 0, joined.length);
        if (end >= 0) {
          at = from + end - pending.length;
          this.pending = undefined;
          break;
        }
        if (take === to - from) {
          this.pending = joined;
          return;
        }
      }
    }
    while (at < to) {
      const end = this.next(piece, at, to);
      if (end < 0) {
        this.pending = Buffer.from(piece.subarray(at, to)); // a copy: the piece itself is not kept
        return;
      }
      at = end;
    }
  }

  /** Throws unless the stream ended with its trailer. */
  end(): void {
    if (!this.ended || this.pending) throw new Error('COPY: output cut short');
  }

  /** Reads the header, a row or the trailer at `at`: the offset after it, or -1 if data ends (at `end`) first. */
  private next(data: Buffer, at: number, end: number): number {
    if (this.header) {
      if (end - at < HEADER_BYTES) return -1;
      if (!data.subarray(at, at + SIGNATURE.length).equals(SIGNATURE))
        throw new Error('COPY: not binary COPY output');
      const after = at + HEADER_BYTES + int32(data, at + SIGNATURE.length + 4);
      if (end < after) return -1;
      this.header = false;
      return after;
    }
    if (this.ended) throw new Error('COPY: data after the trailer');
    if (end - at < 2) return -1;
    const count = int16(data, at);
    if (count === -1) {
      this.ended = true;
      return at + 2;
    }
    if (count !== this.fields) throw new Error(`COPY: ${count} fields in a row, ${this.fields} expected`);
    let p = at + 2;
    for (let f = 0; f < count; f++) {
      if (end - p < 4) return -1;
      const length = int32(data, p);
      p += 4;
      this.starts[f] = p;
      this.lengths[f] = length;
      if (length > 0) p += length;
    }
    if (p > end) return -1;
    this.onRow(data);
    return p;
  }
}
