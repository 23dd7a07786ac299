// COPY data goes to the database in CopyData messages of at most COPY_PIECE_BYTES (issue 27: an
// import's batch sent whole was copied over and over by the embedded engine's socket).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COPY_PIECE_BYTES, copyPieces } from '../../../src/db/database.js';

test('a batch is cut into pieces of at most COPY_PIECE_BYTES that join back to its bytes', () => {
  for (const size of [
    1,
    COPY_PIECE_BYTES - 1,
    COPY_PIECE_BYTES,
    COPY_PIECE_BYTES + 1,
    3 * COPY_PIECE_BYTES + 7,
  ]) {
    const data = Buffer.alloc(size);
    for (let i = 0; i < size; i++) data[i] = (i * 31) % 251;
    const pieces = copyPieces(data);
    assert.equal(pieces.length, Math.ceil(size / COPY_PIECE_BYTES), `${size} bytes`);
    assert.ok(pieces.every((p) => p.length > 0 && p.length <= COPY_PIECE_BYTES));
    assert.deepEqual(Buffer.concat(pieces), data);
    // Views of the batch, not copies of it.
    assert.ok(pieces.every((p) => p.buffer === data.buffer));
  }
});

test('text is sent as its UTF-8 bytes, a character split between two pieces if it falls so', () => {
  const text = 'é'.repeat(COPY_PIECE_BYTES); // two bytes each: the boundary falls between them
  const pieces = copyPieces(text);
  assert.equal(pieces.length, 2);
  assert.equal(Buffer.concat(pieces).toString('utf8'), text);
});

test('no data, no piece', () => {
  assert.deepEqual(copyPieces(Buffer.alloc(0)), []);
  assert.deepEqual(copyPieces(''), []);
});
