// Issue 7, findings 1 and 13: the readers' bounds and strictness (src/ingest/read-orders.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import {
  MAX_LINE_BYTES,
  MAX_NDJSON_LINE_BYTES,
  readCsv,
  readNdjson,
  type ReadEntry,
} from '../../../src/ingest/read-orders.js';

async function all(entries: AsyncIterable<ReadEntry>): Promise<ReadEntry[]> {
  const out: ReadEntry[] = [];
  for await (const entry of entries) out.push(entry);
  return out;
}

const lineErrors = (entries: ReadEntry[]) =>
  entries.flatMap((e) => ('error' in e ? [{ line: e.line, message: e.error.message }] : []));

/** A stream of `total` bytes of one long line, in 64 KiB chunks, never held whole. */
function longLine(total: number, head: string, tail: string): Readable {
  return Readable.from(
    (function* () {
      yield Buffer.from(head);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      for (let sent = 0; sent < total; sent += chunk.length) yield chunk;
      yield Buffer.from(tail);
    })(),
  );
}

test("finding 1, L1: an NDJSON line longer than the bound (1,000 of L1's longest lines) is an error of its own; the next lines are read", async () => {
  const entries = await all(
    readNdjson(longLine(MAX_NDJSON_LINE_BYTES, '{"id":"1"}\n{"x":"', '"}\n{"id":"3"}\n')),
  );
  assert.deepEqual(
    entries.map((e) => e.line),
    [1, 2, 3],
  );
  assert.deepEqual(lineErrors(entries), [{ line: 2, message: 'ligne trop longue : 30 Mio au plus' }]);
  assert.deepEqual((entries[2] as { record: unknown }).record, { id: '3' });
});

test('finding 1: a CSV line longer than its bound (one order line a row, L8) is an error of its own', async () => {
  const entries = await all(readCsv(longLine(MAX_LINE_BYTES, 'id,x\n1,"', '"\n3,y\n')));
  assert.deepEqual(lineErrors(entries), [
    { line: 2, message: "ligne trop longue : 64 Kio au plus ; la suite du fichier n'est pas lue" },
  ]);
});

test('finding 1, L1: an NDJSON line of exactly the bound is read', async () => {
  const text = `{"id":"${'a'.repeat(MAX_NDJSON_LINE_BYTES - 9)}"}`;
  assert.equal(Buffer.byteLength(text), MAX_NDJSON_LINE_BYTES);
  const [entry] = await all(readNdjson(Readable.from([Buffer.from(`${text}\r\n`)])));
  assert.ok(entry && 'record' in entry);
});

test('finding 13, issue 18 finding 3: bytes that are not UTF-8 are an error naming their line, never replaced; the file is not read further', async () => {
  const latin1 = Buffer.concat([
    Buffer.from('{"id":"1"}\n{"status":"r'),
    Buffer.from([0xe9]), // é in Latin-1
    Buffer.from('gl\u00e9"}\n{"id":"3"}\n'),
  ]);
  const ndjson = await all(readNdjson(Readable.from([latin1])));
  assert.deepEqual(lineErrors(ndjson), [
    {
      line: 2,
      message:
        'le fichier n’est pas en UTF-8 (octets invalides sur cette ligne : Windows-1252 ou Latin-1 ?) : enregistrez-le en UTF-8 (import refusé en entier)',
    },
  ]);
  assert.equal(ndjson.length, 2, 'the file is refused: line 3 is not read');
  // A UTF-8 character split across two chunks is fine.
  const split = Buffer.from('{"status":"réglé"}\n');
  const [entry] = await all(readNdjson(Readable.from([split.subarray(0, 13), split.subarray(13)])));
  assert.deepEqual((entry as { record: unknown }).record, { status: 'réglé' });

  const csv = Buffer.concat([
    Buffer.from('id,status\n1,ok\n2,r'),
    Buffer.from([0xe9]),
    Buffer.from('gl\n3,ok\n'),
  ]);
  const csvEntries = await all(readCsv(Readable.from([csv])));
  assert.deepEqual(
    csvEntries.map((e) => ('record' in e ? e.record.id : `error@${e.line}`)),
    ['1', 'error@3'],
  );
  assert.match(lineErrors(csvEntries)[0]!.message, /UTF-8/);
});

test('finding 13: a CSV header with a column twice is refused', async () => {
  const entries = await all(readCsv(Readable.from(['id,total,status,total\n1,10.00,ok,99.00\n'])));
  assert.deepEqual(lineErrors(entries), [
    { line: 1, message: "colonne « total » en double dans l'en-tête : fichier refusé" },
  ]);
  assert.equal(entries.length, 1, 'no record is read under an ambiguous header');
});

test('finding 13: an unclosed quote is reported on the line where it opened, a line the file has', async () => {
  const file = 'id,status\n1,ok\n2,"open\n3,ok\n4,ok\n';
  const entries = await all(readCsv(Readable.from([file])));
  const errors = lineErrors(entries);
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!.line, 3);
  assert.ok(errors[0]!.line <= file.split('\n').length - 1);
  assert.deepEqual(
    entries.flatMap((e) => ('record' in e ? [e.record.id] : [])),
    ['1'],
  );
});
