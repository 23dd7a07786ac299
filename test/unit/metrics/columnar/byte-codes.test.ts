// The byte-string dictionary that codes customers, statuses and countries as they stream in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteCodes, HexTextCodes } from '../../../../src/metrics/columnar/byte-codes.js';

const code = (codes: ByteCodes | HexTextCodes, text: string, pad = 0) => {
  const data = Buffer.concat([Buffer.alloc(pad, 0x2a), Buffer.from(text), Buffer.alloc(3, 0x2a)]);
  return codes.code(data, pad, data.length - pad - 3);
};

test('ByteCodes: dense codes in order of first sight, the same for the same bytes wherever they are', () => {
  const codes = new ByteCodes();
  assert.deepEqual(
    ['b', 'a', '', 'b', 'ab', 'a', ''].map((text, n) => code(codes, text, n)),
    [0, 1, 2, 0, 3, 1, 2],
  );
  assert.equal(codes.size, 4);
});

test('ByteCodes: keys alike at both ends, many keys (rehashes, several blocks), keys longer than a block', () => {
  const codes = new ByteCodes();
  const middle = (n: number) => `${'x'.repeat(20)}${n}${'y'.repeat(20)}`; // the hash reads both ends only
  const hex = (n: number) => n.toString(16).padStart(64, '0');
  const keys = [
    ...Array.from({ length: 1000 }, (_, n) => middle(n)),
    ...Array.from({ length: 40_000 }, (_, n) => hex(n * 2_654_435_761)),
    'z'.repeat(3 << 20),
    `${'z'.repeat(3 << 20)}!`,
  ];
  keys.forEach((key, n) => assert.equal(code(codes, key, n % 5), n, key.slice(0, 80)));
  keys.forEach((key, n) => assert.equal(code(codes, key), n, key.slice(0, 80)));
  assert.equal(codes.size, keys.length);
});

test('HexTextCodes: lowercase hexadecimal packed, any other text as it is, never two texts with one code', () => {
  const codes = new HexTextCodes();
  const texts = [
    '',
    '00',
    'ab',
    'AB',
    'aB',
    'abc',
    'a b',
    'ab@example.com',
    'f'.repeat(64),
    'f'.repeat(63) + 'g',
  ];
  texts.push('0'.repeat(64), '0'.repeat(62), `${'0'.repeat(62)}0a`, 'x'.repeat(200), `${'a'.repeat(300)}`);
  const first = texts.map((text) => code(codes, text, 2));
  assert.deepEqual(
    first,
    texts.map((_, n) => n),
  );
  assert.deepEqual(
    texts.map((text) => code(codes, text)),
    first,
  );
  assert.equal(codes.size, texts.length);
});

test('HexTextCodes.appendText: new texts appended (64 lowercase digits packed), then found as code() finds them', () => {
  const codes = new HexTextCodes();
  const hex = (n: number) => (n * 2_654_435_761).toString(16).padStart(64, '0').slice(-64);
  const texts = [
    ...Array.from({ length: 5000 }, (_, n) => hex(n + 1)),
    'f'.repeat(63) + 'g', // not a digit: as it is
    'F'.repeat(64), // uppercase: as it is
    `${'0'.repeat(63)}\u00e9`, // a character past 0x7f
    `${'0'.repeat(63)}\u0130`, // past 0xff
    'ab@example.com',
  ];
  assert.deepEqual(
    texts.map((text) => codes.appendText(text)),
    texts.map((_, n) => n),
  );
  assert.equal(codes.size, texts.length);
  // Found again, wherever their bytes lie, and as a text that was never added is not.
  assert.deepEqual(
    texts.map((text, n) => code(codes, text, n % 4)),
    texts.map((_, n) => n),
  );
  assert.equal(codes.find(Buffer.from(hex(0)), 0, 64), -1);
  assert.equal(codes.size, texts.length);
});

test('issue 29: a few keys take memory in proportion to them, not a block of 1 MiB; growing and a restore keep every code', () => {
  const codes = new ByteCodes();
  const key = (n: number) => `c${n}@example.com`.padEnd(33, '.');
  const first = Array.from({ length: 100 }, (_, n) => key(n));
  first.forEach((text, n) => assert.equal(code(codes, text, n % 3), n));
  // 3,300 bytes of keys: a first block doubled from 256 to 4 KiB, places and table for 100 codes.
  assert.ok(codes.bytes < 16 * 1024, `${codes.bytes} B for 100 keys of 33 bytes`);
  assert.equal(new ByteCodes().bytes < 1024, true, 'an empty one holds no block');
  // Through a snapshot file's state (its last block cut to its used bytes), then growing again.
  const state = codes.state();
  const restored = ByteCodes.restore({
    ...state,
    blocks: state.blocks.map((block) => block.slice()),
    at: state.at.slice(),
    lengths: state.lengths.slice(),
    hashes: state.hashes.slice(),
    slots: state.slots.slice(),
  });
  const more = [...Array.from({ length: 40_000 }, (_, n) => key(100 + n)), 'z'.repeat(2 << 20), 'w'];
  more.forEach((text, n) => assert.equal(code(restored, text, n % 5), 100 + n, text.slice(0, 40)));
  [...first, ...more].forEach((text, n) => assert.equal(code(restored, text), n, text.slice(0, 40)));
  assert.equal(restored.size, 100 + more.length);
});

test('issue 29: a first key longer than a first block, then one longer than a block, then small ones', () => {
  const codes = new ByteCodes();
  const keys = ['a'.repeat(300), 'b'.repeat(5000), 'c'.repeat((1 << 20) + 7), 'd', 'e'.repeat(200)];
  keys.forEach((text, n) => assert.equal(code(codes, text, 1), n));
  keys.forEach((text, n) => assert.equal(code(codes, text), n));
});
