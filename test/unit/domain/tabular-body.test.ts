// Issue 18, finding 2: answers are now serialized in pieces into bytes. T2 and V1: the bytes are
// exactly those of the whole answer written at once (one JSON.stringify, one CSV call), for any
// rows, section 14's fields or not, across piece boundaries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { tabularBody } from '../../../src/domain/tabular-report.js';
import { reportCsv } from '../../../src/domain/report-csv.js';
import { parseTabularQuery, type RawQuery } from '../../../src/query/parse.js';
import type { ReportRow } from '../../../src/metrics/engine.js';

const query = (raw: RawQuery) => parseTabularQuery(raw, { isTimeZone: () => true });

/** The body as it was built before: one object, one call (T2's order, section 14 after timezone). */
function wholeJson(q: ReturnType<typeof query>, rows: ReportRow[]): string {
  return JSON.stringify({
    dimensions: q.dimensions,
    metrics: q.metrics,
    from: q.from,
    to: q.to,
    timezone: q.timezone,
    ...(q.granularity === 'day' ? {} : { granularity: q.granularity }),
    ...(Object.keys(q.filters).length === 0 ? {} : { filters: q.filters }),
    ...(q.offset === 0 ? {} : { offset: q.offset }),
    rows,
    rowCount: rows.length,
  });
}

const text = fc.string({ unit: 'grapheme', maxLength: 30 });
const rowOf = (status: string, store: string, orders: number, net: number): ReportRow => ({
  status,
  store,
  orders,
  net_revenue: net,
});

const RAW_QUERIES: RawQuery[] = [
  { metrics: 'orders,net_revenue', dimensions: 'status,store', from: '2026-01-01', to: '2026-01-31' },
  {
    metrics: 'orders,net_revenue',
    dimensions: 'status,store',
    from: '2026-01-01',
    to: '2026-12-31',
    granularity: 'month',
    offset: '20',
    'filter.status': 'a,=b',
    timezone: 'Europe/Paris',
  },
];

test('T2, V1, finding 2: the pieces make exactly the bytes of the whole answer, JSON and CSV', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(text, text, fc.nat(), fc.double({ noNaN: true, noDefaultInfinity: true })), {
        maxLength: 40,
      }),
      fc.constantFrom(...RAW_QUERIES),
      async (tuples, raw) => {
        const rows = tuples.map(([s, st, o, n]) => rowOf(s, st, o, n));
        const q = query(raw);
        assert.equal((await tabularBody(q, 'json', rows)).toString('utf8'), wholeJson(q, rows));
        assert.equal(
          (await tabularBody(q, 'csv', rows)).toString('utf8'),
          reportCsv([...q.dimensions, ...q.metrics], rows),
        );
      },
    ),
  );
});

test('finding 2: across piece boundaries (2,500 rows) and with no row, the same bytes', async () => {
  const q = query(RAW_QUERIES[0] ?? {});
  for (const count of [0, 1, 249, 250, 251, 999, 1000, 1001, 2500]) {
    const rows = Array.from({ length: count }, (_, i) => rowOf(`-s${i}é€`, `https://${i}.example`, i, i / 3));
    assert.equal((await tabularBody(q, 'json', rows)).toString('utf8'), wholeJson(q, rows), `${count} rows`);
    assert.equal(
      (await tabularBody(q, 'csv', rows)).toString('utf8'),
      reportCsv(['status', 'store', 'orders', 'net_revenue'], rows),
      `${count} rows, CSV`,
    );
  }
});
