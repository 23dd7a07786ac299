// Issue 28: the embedded database's COPY … TO STDOUT for the process that hosts it, run beside the
// socket and its output posted back as it comes (src/db/direct-copy.ts). Its bytes must be the
// COPY's own, in order, across the pieces they come in, whatever the reader does; a statement
// that fails must fail the COPY with its SQLSTATE and leave the database usable.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { GATHERED_BYTES } from '../../src/db/session-queue.js';
import { BinaryCopyRows, int32 } from '../../src/metrics/columnar/copy-binary.js';
import { describeOn, openTestDatabase, type TestDatabase } from '../helpers/database.js';

/** A binary COPY of rows (g, a text of g % 700 letters): about 6 MB for 20,000 rows, many pieces. */
const rowsCopy = (from: number, to: number) =>
  `COPY (SELECT g, repeat(chr(97 + g % 26), g % 700) FROM generate_series(${from}, ${to}) g) TO STDOUT (FORMAT binary)`;

/**
 * Reads a COPY of rowsCopy's shape, checking each row; `slow`: the reader awaits a turn now and
 * then; `kept`: each piece the COPY came in, once.
 */
async function readRows(
  database: TestDatabase,
  sql: string,
  slow = false,
  kept: Buffer[] = [],
): Promise<number[]> {
  const seen: number[] = [];
  const rows: BinaryCopyRows = new BinaryCopyRows(2, (data) => {
    const g = int32(data, rows.starts[0] as number);
    const text = data.toString(
      'latin1',
      rows.starts[1] as number,
      (rows.starts[1] as number) + (rows.lengths[1] as number),
    );
    assert.equal(text, String.fromCharCode(97 + (g % 26)).repeat(g % 700), `row ${g}`);
    seen.push(g);
  });
  let calls = 0;
  await database.db.copyOut(sql, (data, from, to) => {
    if (kept.at(-1) !== data) kept.push(data);
    rows.write(data, from, to);
    if (slow && ++calls % 97 === 0) return new Promise((resolve) => setTimeout(resolve, 1));
    return undefined;
  });
  rows.end();
  return seen;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describeOn('embedded', 'the hosting process’s own COPY, posted by PGlite’s thread (issue 28)', () => {
  let database: TestDatabase;
  before(async () => (database = await openTestDatabase()));
  after(async () => database?.cleanup());

  test('every row, in order, across the pieces; a reader that makes it wait gets the same', async () => {
    assert.deepEqual(await readRows(database, rowsCopy(1, 20_000)), range(1, 20_000));
    assert.deepEqual(await readRows(database, rowsCopy(1, 5_000), true), range(1, 5_000));
    assert.deepEqual(await readRows(database, rowsCopy(1, 0)), []);
  });

  test('COPYs asked at once, with queries between them: each its own rows, in order', async () => {
    const [a, count, b, c] = await Promise.all([
      readRows(database, rowsCopy(1, 8_000)),
      database.db.query<{ n: number }>('SELECT count(*)::integer AS n FROM generate_series(1, 1000)'),
      readRows(database, rowsCopy(50_001, 53_000), true),
      readRows(database, rowsCopy(7, 9)),
    ]);
    assert.deepEqual(a, range(1, 8_000));
    assert.equal(count[0]?.n, 1000);
    assert.deepEqual(b, range(50_001, 53_000));
    assert.deepEqual(c, [7, 8, 9]);
  });

  test('a statement that fails fails its COPY with its SQLSTATE, after its rows; the database goes on', async () => {
    const seen: number[] = [];
    await assert.rejects(
      database.db.copyOut(
        'COPY (SELECT 10 / (3000 - g) FROM generate_series(1, 5000) g) TO STDOUT (FORMAT binary)',
        (_data, from, to) => void seen.push(to - from),
      ),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, '22012', String(error));
        assert.match(error.message, /division by zero/);
        return true;
      },
    );
    assert.ok(seen.length > 0, 'the rows before the failure were read');
    await assert.rejects(
      database.db.copyOut('COPY (SELECT * FROM no_such_table) TO STDOUT', () => undefined),
      {
        code: '42P01',
      },
    );
    const [row] = await database.db.query<{ n: number }>('SELECT 41 + 1 AS n');
    assert.equal(row?.n, 42);
    assert.deepEqual(await readRows(database, rowsCopy(1, 300)), range(1, 300));
  });

  test('a reader that throws fails its COPY; the next ones are read whole', async () => {
    let calls = 0;
    await assert.rejects(
      database.db.copyOut(rowsCopy(1, 20_000), () => {
        if (++calls === 500) throw new Error('lecteur en échec');
      }),
      /lecteur en échec/,
    );
    assert.deepEqual(await readRows(database, rowsCopy(1, 20_000)), range(1, 20_000));
  });

  test('pieces given back are written again by the next COPYs, whose rows are their own; pieces of another origin are left alone', async () => {
    for (let round = 0; round < 3; round++) {
      const kept: Buffer[] = [];
      assert.deepEqual(await readRows(database, rowsCopy(1, 20_000), false, kept), range(1, 20_000));
      const gathered = kept.filter((piece) => piece.buffer.byteLength === GATHERED_BYTES);
      assert.ok(gathered.length >= 10, `${gathered.length} pieces of ${GATHERED_BYTES} bytes`);
      const foreign = [Buffer.alloc(GATHERED_BYTES, 7), Buffer.from('abc'), Buffer.alloc(100, 1)];
      database.db.giveBack([...kept, ...foreign]);
      // Their memory moved to PGlite's thread; given back twice, nothing happens.
      assert.ok(gathered.every((piece) => piece.buffer.byteLength === 0));
      database.db.giveBack(kept);
      assert.deepEqual(
        foreign.map((piece) => [piece.length, piece[0]]),
        [
          [GATHERED_BYTES, 7],
          [3, 0x61],
          [100, 1],
        ],
      );
      // Two at once, in the pieces given back: each its own rows, in order.
      const [a, b] = await Promise.all([
        readRows(database, rowsCopy(100_001, 112_000)),
        readRows(database, rowsCopy(5, 9_000), true),
      ]);
      assert.deepEqual(a, range(100_001, 112_000));
      assert.deepEqual(b, range(5, 9_000));
    }
  });
});
