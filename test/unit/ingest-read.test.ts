import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import {
  formatOfFileName,
  readCsv,
  readCsvOrders,
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

const NUL_REFUSED = 'caractère nul (U+0000) interdit : la base de données ne peut pas le garder';
const summary = (entries: ReadEntry[]) =>
  entries.map((e) =>
    'error' in e ? [e.line, e.error.field, e.error.message, e.fatal === true] : [e.line, e.record.id],
  );

test('issue 18, finding 3: NDJSON: a NUL, raw or escaped, in any field is that line’s error; reading goes on', async () => {
  const text = [
    '{"id":"1"}',
    '\u0000',
    '{"id":"3","status":"a\u0000b"}',
    '{"id":"4","note":"x\\u0000"}',
    '{"id":"5","meta":{"deep":"\\u0000"}}',
    '{"id":"6","status":"\\\\u0000 is text"}',
    '{"id":"7"}',
  ].join('\n');
  for (const size of [1, 7, 1000]) {
    const entries = await collect(readNdjson(streamOf(text, size)));
    assert.deepEqual(summary(entries), [
      [1, '1'],
      [2, '(ligne)', NUL_REFUSED, false],
      [3, '(ligne)', NUL_REFUSED, false],
      [4, 'note', NUL_REFUSED, false],
      [5, '(ligne)', NUL_REFUSED, false],
      [6, '6'],
      [7, '7'],
    ]);
  }
  // The escaped backslash stays text: `\u0000` written out, no NUL.
  const kept = (await collect(readNdjson(streamOf('{"id":"1","status":"\\\\u0000"}'))))[0];
  assert.ok(kept && 'record' in kept && kept.record.status === '\\u0000');
});

test('L1: a NUL in an order line’s field or category is named lines[k].field, as every other line error', async () => {
  const text = [
    '{"id":"1","lines":[{"line_id":"a"},{"line_id":"b","product_name":"x\\u0000"}]}',
    '{"id":"2","lines":[{"line_id":"a","categories":["ok","\\u0000"]}]}',
    '{"id":"3","lines":[{"line_id":"a","meta":{"deep":"\\u0000"}}]}',
  ].join('\n');
  assert.deepEqual(summary(await collect(readNdjson(streamOf(text)))), [
    [1, 'lines[1].product_name', NUL_REFUSED, false],
    [2, 'lines[0].categories', NUL_REFUSED, false],
    [3, '(ligne)', NUL_REFUSED, false],
  ]);
});

test('issue 18, finding 3: a JSON error message never quotes a NUL', async () => {
  const [entry] = await collect(readNdjson(streamOf('{"id":\u0000}\n')));
  assert.ok(entry && 'error' in entry);
  assert.equal(entry.error.message, NUL_REFUSED);
});

/** UTF-16 (or UTF-32) bytes of a text, little- or big-endian, with or without a byte order mark. */
function utf16(text: string, endian: 'le' | 'be', bom: boolean): Buffer {
  const le = Buffer.from(`${bom ? '\uFEFF' : ''}${text}`, 'utf16le');
  return endian === 'le' ? le : Buffer.from(le).swap16();
}

test('issue 18, finding 3: a UTF-16 or UTF-32 file is refused at once, by name, whatever its format and chunks', async () => {
  const ndjson = '{"id":"1","status":"é"}\n{"id":"2"}\n';
  const csv = 'id,status\n1,é\n2,ok\n';
  const utf32le = Buffer.alloc(4 * (csv.length + 1));
  [...`\uFEFF${csv}`].forEach((c, i) => utf32le.writeUInt32LE(c.codePointAt(0)!, 4 * i));
  const cases: [string, Buffer, RegExp][] = [
    [
      'UTF-16 LE',
      utf16(ndjson, 'le', true),
      /en UTF-16 LE, pas en UTF-8 \(sa marque d’ordre des octets le dit\)/,
    ],
    ['UTF-16 BE', utf16(ndjson, 'be', true), /en UTF-16 BE, pas en UTF-8/],
    [
      'UTF-16 LE without mark',
      utf16(ndjson, 'le', false),
      /en UTF-16 LE, pas en UTF-8 \(un octet sur deux est nul\)/,
    ],
    ['UTF-16 BE without mark', utf16(csv, 'be', false), /en UTF-16 BE/],
    ['UTF-32 LE', utf32le, /en UTF-32 LE/],
  ];
  for (const [name, bytes, message] of cases) {
    for (const size of [1, 3, 1 << 16]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      for (const read of [readNdjson, readCsv]) {
        const entries = await collect(read(Readable.from(chunks)));
        assert.equal(entries.length, 1, `${name}, ${read.name}, chunks of ${size}`);
        const [entry] = entries;
        assert.ok(entry && 'error' in entry, name);
        assert.deepEqual([entry.line, entry.error.field, entry.fatal], [1, '(fichier)', true], name);
        assert.match(entry.error.message, message, name);
        assert.match(entry.error.message, /enregistrez-le en UTF-8/);
      }
    }
  }
});

test('issue 18, finding 3: bytes that are not UTF-8 refuse the file where they are; nothing after is read', async () => {
  const bytes = Buffer.concat([
    Buffer.from('{"id":"1"}\n{"id":"2"}\n{"id":"3","status":"r'),
    Buffer.from([0xe9]), // é in Latin-1
    Buffer.from('gl"}\n{"id":"4"}\n'),
  ]);
  const raw = await collect(readNdjson(Readable.from([bytes.subarray(0, 9), bytes.subarray(9)])));
  assert.deepEqual(
    raw.map((e) => ('error' in e ? [e.line, e.error.field, e.fatal] : [e.line, e.record.id])),
    [
      [1, '1'],
      [2, '2'],
      [3, '(fichier)', true],
    ],
  );
  const last = raw[2]!;
  assert.ok('error' in last);
  assert.match(last.error.message, /^le fichier n’est pas en UTF-8 .*Latin-1.*enregistrez-le en UTF-8/);
  // CSV: the same, and a lone surrogate written in bytes (CESU-8) is not UTF-8 either.
  const csv = Buffer.concat([
    Buffer.from('id,status\n1,ok\n2,x'),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from('\n3,ok\n'),
  ]);
  const fromCsv = await collect(readCsv(Readable.from([csv])));
  assert.deepEqual(
    fromCsv.map((e) => ('error' in e ? [e.line, e.error.field, e.fatal] : [e.line, e.record.id])),
    [
      [2, '1'],
      [3, '(fichier)', true],
    ],
  );
});

test('issue 18, finding 3: CSV: a NUL in a cell is that record’s error, naming its column; in the header, the file is refused', async () => {
  const text = 'id,status,note\n1,ok,\n2,a\u0000b,\n\u0000\n4,ok,x\u0000\n5,ok,\n';
  for (const size of [1, 5, 1000]) {
    assert.deepEqual(summary(await collect(readCsv(streamOf(text, size)))), [
      [2, '1'],
      [3, 'status', NUL_REFUSED, false],
      [4, 'id', NUL_REFUSED, false],
      [5, 'note', NUL_REFUSED, false],
      [6, '5'],
    ]);
  }
  assert.deepEqual(summary(await collect(readCsv(streamOf('id,sta\u0000tus\n1,ok\n')))), [
    [1, '(ligne)', NUL_REFUSED, true],
  ]);
});

test('a CSV header naming a column twice refuses the whole file (fatal)', async () => {
  const [entry] = await collect(readCsv(streamOf('id,total,total\n1,2,3\n')));
  assert.ok(entry && 'error' in entry);
  assert.equal(entry.fatal, true);
});

test('L8: an order whose rows come back after another order is refused there, naming its first row; its first rows are kept', async () => {
  const text = [
    'store,id,created_at,status,total,line_id,quantity,subtotal,discount',
    'https://s.example,nc1,2026-03-01T10:00:00Z,completed,30.00,l1,1,10.00,0',
    ',,,,,l2,1,10.00,0',
    'https://s.example,nc2,2026-03-01T11:00:00Z,completed,5.00,p1,1,5.00,0',
    'https://s.example,nc1,,,,l9,1,10.00,0',
    'https://other.example,nc1,2026-03-01T12:00:00Z,completed,7.00,x1,1,7.00,0',
  ].join('\n');
  const entries = (await collect(readCsvOrders(streamOf(text, 11)))).filter((e) => 'record' in e);
  assert.deepEqual(
    entries.map((e) => [e.line, (e.record.lines as unknown[]).length, e.problems?.map((p) => p.field) ?? []]),
    [
      [2, 2, []],
      [4, 1, []],
      [5, 1, ['id']],
      [6, 1, []], // the same id in another store is another order
    ],
  );
  assert.match(entries[2]?.problems?.[0]?.message ?? '', /ne se suivent pas.*ligne 2/);
});
