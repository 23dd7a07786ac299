// PostgreSQL's binary COPY format as the snapshot reads it (issue 9): rows cut anywhere by the
// network, NULLs, the header's extension, a stream cut short; numerics as cents, timestamps as
// epoch seconds. (The integration test compares the decoding with a real database's arithmetic.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BinaryCopyRows,
  epochSeconds,
  int64,
  numericCents,
} from '../../../../src/metrics/columnar/copy-binary.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

const int16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int64Bytes = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};

/** numeric_send's layout: digit count, weight, sign, display scale, base-10,000 digits. */
const numeric = (weight: number, sign: number, digits: number[]) =>
  Buffer.concat([int16(digits.length), int16(weight), int16(sign), int16(2), ...digits.map(int16)]);

/** A COPY stream of rows whose fields are byte strings or null. */
function stream(rows: (Buffer | null)[][], extension = Buffer.alloc(0)): Buffer {
  const parts = [SIGNATURE, int32(0), int32(extension.length), extension];
  for (const row of rows) {
    parts.push(int16(row.length));
    for (const field of row)
      parts.push(field === null ? int32(-1) : Buffer.concat([int32(field.length), field]));
  }
  parts.push(int16(-1));
  return Buffer.concat(parts);
}

/** Each row's fields as text (null for NULL), read from the stream cut into pieces of `size` bytes. */
function read(data: Buffer, fields: number, size: number): (string | null)[][] {
  const rows: (string | null)[][] = [];
  const reader = new BinaryCopyRows(fields, (buffer) => {
    rows.push(
      Array.from({ length: fields }, (_, f) =>
        reader.lengths[f]! < 0
          ? null
          : buffer.toString('latin1', reader.starts[f]!, reader.starts[f]! + reader.lengths[f]!),
      ),
    );
  });
  for (let at = 0; at < data.length; at += size) reader.write(data.subarray(at, at + size));
  reader.end();
  return rows;
}

test('BinaryCopyRows: the same rows however the stream is cut, NULLs and empty fields, a header extension', () => {
  const rows = [
    [Buffer.from('a'), null, Buffer.alloc(0)],
    [Buffer.from('x'.repeat(300)), Buffer.from('é', 'latin1'), null],
    [null, null, null],
  ];
  const expected = [
    ['a', null, ''],
    ['x'.repeat(300), 'é', null],
    [null, null, null],
  ];
  for (const data of [stream(rows), stream(rows, Buffer.from('extension'))])
    for (const size of [1, 2, 3, 7, 19, 20, 64, data.length]) assert.deepEqual(read(data, 3, size), expected);
  assert.deepEqual(read(stream([]), 2, 5), []);
});

test('BinaryCopyRows: another field count, a stream cut short, data after the trailer, another format', () => {
  assert.throws(() => read(stream([[Buffer.from('a')]]), 2, 100), /1 fields in a row, 2 expected/);
  const whole = stream([[Buffer.from('abc')]]);
  for (const cut of [5, 21, 25, whole.length - 1])
    assert.throws(() => read(whole.subarray(0, cut), 1, 4), /cut short/);
  assert.throws(() => read(Buffer.concat([whole, int16(1)]), 1, 100), /after the trailer/);
  assert.throws(() => read(Buffer.from('a\tb\n'.repeat(10)), 2, 100), /not binary COPY/);
});

test('numericCents: whole cents of numeric(16,2) values, exact; NaN for NaN, infinities and finer values', () => {
  const cents = (b: Buffer) => numericCents(b, 0);
  assert.equal(cents(numeric(0, 0, [])), 0); // 0
  assert.equal(cents(numeric(0, 0, [123, 4500])), 12_345); // 123.45
  assert.equal(cents(numeric(-1, 0, [500])), 5); // 0.05
  assert.equal(cents(numeric(-1, 0x4000, [100])), -1); // -0.01
  assert.equal(cents(numeric(1, 0, [1])), 1_000_000); // 10000
  assert.equal(cents(numeric(1, 0x4000, [1, 0, 100])), -1_000_001); // -10000.01
  assert.equal(cents(numeric(1, 0, [2147, 4836, 4700])), 2_147_483_647); // 21474836.47
  // 99999999999999.99: past 2^53 the nearest double, far past int32 (the snapshot refuses it).
  assert.equal(cents(numeric(3, 0, [99, 9999, 9999, 9999, 9900])), 1e16);
  assert.ok(Number.isNaN(cents(numeric(0, 0xc000, [])))); // NaN
  assert.ok(Number.isNaN(cents(numeric(0, 0xd000, [])))); // Infinity
  assert.ok(Number.isNaN(cents(numeric(0, 0xf000, [])))); // -Infinity
  assert.ok(Number.isNaN(cents(numeric(-1, 0, [5])))); // 0.0005
  assert.ok(Number.isNaN(cents(numeric(-2, 0, [5000])))); // 0.00005
});

test('epochSeconds: floor of the epoch of a timestamptz, before and after 2000 and 1970, and the infinities', () => {
  const seconds = (micros: bigint) => epochSeconds(int64Bytes(micros), 0);
  const EPOCH_2000 = 946_684_800;
  assert.equal(seconds(0n), EPOCH_2000);
  assert.equal(seconds(1n), EPOCH_2000);
  assert.equal(seconds(999_999n), EPOCH_2000);
  assert.equal(seconds(1_000_000n), EPOCH_2000 + 1);
  assert.equal(seconds(-1n), EPOCH_2000 - 1);
  assert.equal(seconds(-1_000_000n), EPOCH_2000 - 1);
  assert.equal(seconds(-1_000_001n), EPOCH_2000 - 2);
  assert.equal(seconds(-946_684_800_500_000n), -1); // 1969-12-31 23:59:59.5
  assert.equal(seconds(825_000_000_123_456n), EPOCH_2000 + 825_000_000);
  // 294276-12-31 23:59:59.999999, the last instant there is: far past 2^53 µs, still exact.
  assert.equal(seconds(9_223_371_331_199_999_999n), 9_224_318_015_999);
  assert.equal(seconds(-211_813_488_000_000_000n), -210_866_803_200); // 4714-11-24 BC, the first day
  assert.equal(seconds(0x7fffffffffffffffn), Infinity);
  assert.equal(seconds(-0x8000000000000000n), -Infinity);
  assert.equal(int64(int64Bytes(9_007_199_254_740_991n), 0), Number.MAX_SAFE_INTEGER);
  assert.equal(int64(int64Bytes(-5n), 0), -5);
});
