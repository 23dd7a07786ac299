// V1: the CSV answer, read back by csv-parse (an RFC 4180 reader nobody here wrote).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { reportCsv } from '../../../src/domain/report-csv.js';
import { guarded } from '../../../src/web/csv-fr.js';

test('V1: a header of ids, then the rows with the same values, CRLF line ends', () => {
  const csv = reportCsv(
    ['date', 'store', 'orders', 'net_revenue'],
    [
      { date: '2026-01-01', store: 'https://a.example', orders: 3, net_revenue: 1234.5 },
      { date: '2026-01-02', store: 'https://a.example', orders: 1, net_revenue: -12.05 },
    ],
  );
  assert.equal(
    csv,
    'date,store,orders,net_revenue\r\n2026-01-01,https://a.example,3,1234.5\r\n2026-01-02,https://a.example,1,-12.05\r\n',
  );
});

test('V1: a text cell that could start a formula gets a leading quote; numbers never do', () => {
  const statuses = ['=SUM(A1)', '+1', '-x', '@cmd', '\tTab', '\rCR', 'plain', 'a,"b"', 'multi\nline'];
  const csv = reportCsv(
    ['status', 'net_revenue'],
    statuses.map((status, i) => ({ status, net_revenue: -i - 0.5 })),
  );
  const records: string[][] = parse(csv);
  assert.deepEqual(records[0], ['status', 'net_revenue']);
  assert.deepEqual(
    records.slice(1).map((r) => r[0]),
    ["'=SUM(A1)", "'+1", "'-x", "'@cmd", "'\tTab", "'\rCR", 'plain', 'a,"b"', 'multi\nline'],
  );
  assert.deepEqual(
    records.slice(1).map((r) => r[1]),
    statuses.map((_, i) => String(-i - 0.5)),
  );
  assert.match(csv, /"a,""b"""/);
  assert.match(csv, /\r\n"'\rCR",/, 'a lone CR is quoted (RFC 4180)');
  assert.match(csv, /\r\n"multi\nline",/, 'a lone LF is quoted (RFC 4180)');
});

test('V1: no rows is the header line alone', () => {
  assert.equal(reportCsv(['orders'], []), 'orders\r\n');
});

test('V1: the French sheets of the pages guard exactly the cells the API guards, full-width ＝ ＋ － ＠ included', () => {
  // A product named « ＝HYPERLINK(…) » (Apple Numbers reads ＝ as =) was guarded in the API's CSV
  // and written as is in « CSV pour Excel (français) » (csv-fr.ts).
  const texts = ['=1+1', '+1', '-1', '@A1', '\tx', '\rx', '＝HYPERLINK("http://x")', '＋1', '－1', '＠A1'];
  for (const text of [...texts, 'ok', ' =1', '\u202e=1']) {
    const apiCell = (parse(reportCsv(['product'], [{ product: text }])) as string[][])[1]?.[0];
    assert.equal(guarded(text), apiCell, JSON.stringify(text));
  }
  for (const text of texts) assert.equal(guarded(text), `'${text}`, JSON.stringify(text));
});
