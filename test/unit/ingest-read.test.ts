import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import {
  formatOfFileName,
  readCsv,
  readNdjson,
  sniffFormat,
  type ReadEntry,
} from '../../src/ingest/read-orders.js';

/** A stream that delivers the text in chunks of `size` bytes, to cross chunk boundaries. */
function streamOf(text: string, size = 7): Readable {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks);
}

async function collect(entries: AsyncIterable<ReadEntry>): Promise<ReadEntry[]> {
  const all: ReadEntry[] = [];
  for await (const entry of entries) all.push(entry);
  return all;
}

test('NDJSON: one object a line, numbered from 1; blank lines are skipped but counted', async () => {
  const text = '{"id":"1","total":12.5}\n\n   \r\n{"id":"é","items":2}\r\n{"id":"3"}';
  assert.deepEqual(await collect(readNdjson(streamOf(text))), [
    { line: 1, record: { id: '1', total: 12.5 } },
    { line: 4, record: { id: 'é', items: 2 } },
    { line: 5, record: { id: '3' } },
  ]);
});

test('NDJSON: a line that is not a JSON object is an error on the (ligne) field', async () => {
  const text = '{"id":"1"}\n{broken\n[1,2]\nnull\n"text"\n{"id":"6"}\n';
  const entries = await collect(readNdjson(streamOf(text, 3)));
  assert.deepEqual(
    entries.map((e) => ('error' in e ? [e.line, e.error.field] : [e.line, 'ok'])),
    [
      [1, 'ok'],
      [2, '(ligne)'],
      [3, '(ligne)'],
      [4, '(ligne)'],
      [5, '(ligne)'],
      [6, 'ok'],
    ],
  );
  const broken = entries[1]!;
  assert.ok('error' in broken && broken.error.message.startsWith('JSON invalide'));
});

test('NDJSON: a UTF-8 byte order mark is tolerated', async () => {
  const entries = await collect(readNdjson(streamOf('\uFEFF{"id":"1"}\n', 1)));
  assert.deepEqual(entries, [{ line: 1, record: { id: '1' } }]);
});

test('CSV: header on line 1, empty cells absent, quoted commas, quotes and line breaks', async () => {
  const text = [
    '\uFEFFstore,id,status,total',
    'https://a.example,1,completed,10',
    '',
    'https://a.example,2,"on hold, ""soon""",',
    'https://a.example,3,"multi',
    'line",5',
    'https://a.example,4,done,6',
  ].join('\r\n');
  assert.deepEqual(await collect(readCsv(streamOf(text, 5))), [
    { line: 2, record: { store: 'https://a.example', id: '1', status: 'completed', total: '10' } },
    { line: 4, record: { store: 'https://a.example', id: '2', status: 'on hold, "soon"' } },
    { line: 5, record: { store: 'https://a.example', id: '3', status: 'multi\r\nline', total: '5' } },
    { line: 7, record: { store: 'https://a.example', id: '4', status: 'done', total: '6' } },
  ]);
});

test('CSV: a record with the wrong number of columns is an error on its line; reading goes on', async () => {
  const text = 'id,total\n1,10\n2\n3,4,5\n4,40\n';
  const entries = await collect(readCsv(streamOf(text)));
  assert.deepEqual(
    entries.map((e) => ('error' in e ? [e.line, e.error.field] : [e.line, e.record.id])),
    [
      [2, '1'],
      [3, '(ligne)'],
      [4, '(ligne)'],
      [5, '4'],
    ],
  );
});

test('CSV: an unclosed quote is reported where its record starts; the records before it are kept', async () => {
  const entries = await collect(readCsv(streamOf('id,status\n1,ok\n2,"never closed\n3,ok\n', 1000)));
  assert.equal(entries.length, 2);
  assert.deepEqual(entries[0], { line: 2, record: { id: '1', status: 'ok' } });
  const last = entries[1]!;
  assert.ok('error' in last);
  assert.equal(last.line, 3);
  assert.equal(last.error.field, '(ligne)');
  assert.match(last.error.message, /^CSV illisible/);
});

test('CSV: a quote inside an unquoted field is taken literally', async () => {
  const entries = await collect(readCsv(streamOf('id,status\n1,5" screen\n')));
  assert.deepEqual(entries, [{ line: 2, record: { id: '1', status: '5" screen' } }]);
});

test('format detection: by extension for files, by the first non-blank character for stdin', async () => {
  assert.equal(formatOfFileName('orders.ndjson'), 'ndjson');
  assert.equal(formatOfFileName('/tmp/Orders.JSONL'), 'ndjson');
  assert.equal(formatOfFileName('export.csv'), 'csv');
  assert.equal(formatOfFileName('orders.txt'), undefined);

  const ndjson = await sniffFormat(streamOf('\uFEFF\n  \n{"id":"1"}\n', 2));
  assert.equal(ndjson.format, 'ndjson');
  assert.deepEqual(await collect(readNdjson(ndjson.input)), [{ line: 3, record: { id: '1' } }]);

  const csv = await sniffFormat(streamOf('id,total\n1,2\n', 2));
  assert.equal(csv.format, 'csv');
  assert.deepEqual(await collect(readCsv(csv.input)), [{ line: 2, record: { id: '1', total: '2' } }]);
});
