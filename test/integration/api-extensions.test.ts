// SPEC section 14 (F1 filters, G2 granularity, O1 offset, V1 CSV) on orders built for it: buckets
// across DST changes and in zones far from UTC, an ISO week over the year change, filters on
// `Unknown` and on each customer type, offsets around the end, CSV cells (formula-looking
// statuses, a comma and a quote, line breaks, a negative net revenue), errors, and the unchanged
// answer of a request that uses none of it. Every answer is compared, byte for byte, with the
// independent oracle (test/helpers/oracle.ts); the comments beside the orders give the values
// worked out by hand, and the tests assert them too, so that the oracle itself is checked. Each
// JSON answer is asked of the columnar report engine (the default) and of the SQL one
// (REPORT_ENGINE=sql) on the same data.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseCsv } from 'csv-parse/sync';
import { importOrderRecords } from '../../src/ingest/import.js';
import { startSqlEngineApp, startTestService, type TestService } from '../helpers/service.js';
import {
  DEFAULT_SETTINGS,
  csvCells,
  rfc4180Violation,
  oracle,
  queryFromSearch,
  type OracleAnswer,
  type RawOrder,
  type Row,
  REFERENCE_FIELDS,
} from '../helpers/oracle.js';

const A = 'https://a.example';
const B = 'https://b.example';
const order = (id: string, created_at: string, extra: Partial<RawOrder> = {}): RawOrder => ({
  store: A,
  id,
  created_at,
  status: 'completed',
  items: 1,
  total: '10.00',
  ...extra,
});

const LINES: RawOrder[] = [
  // Europe/Paris, spring 2026: clocks go forward at 01:00Z on Sunday 29 March (CET +1 → CEST +2).
  order('p1', '2026-03-28T23:30:00Z'), // Paris Sun 29 00:30 CET; UTC Sat 28: week 2026-03-23 for both
  order('p2', '2026-03-29T21:59:00Z'), // Paris Sun 29 23:59 CEST: week 2026-03-23
  order('p3', '2026-03-29T22:30:00Z'), // Paris Mon 30 00:30: week 2026-03-30; UTC Sun 29: week 2026-03-23
  order('p4', '2026-03-31T22:30:00Z'), // Paris Wed 1 April: month 2026-04-01; UTC: month 2026-03-01
  // Europe/Paris, autumn 2025: clocks go back at 01:00Z on Sunday 26 October (CEST +2 → CET +1).
  order('p5', '2025-10-25T22:30:00Z'), // Paris Sun 26 00:30 CEST; UTC Sat 25: week 2025-10-20 for both
  order('p6', '2025-10-26T22:59:00Z'), // Paris Sun 26 23:59 CET: week 2025-10-20
  order('p7', '2025-10-26T23:00:00Z'), // Paris Mon 27 00:00: week 2025-10-27; UTC Sun 26: week 2025-10-20
  order('p8', '2025-10-31T23:00:00Z'), // Paris Sat 1 November: month 2025-11-01; UTC: month 2025-10-01
  // America/New_York: clocks go forward on Sunday 8 March 2026, back on Sunday 2 November 2025.
  order('n1', '2026-03-09T03:30:00Z'), // NY Sun 8 23:30 EDT: week 2026-03-02; UTC Mon 9: week 2026-03-09
  order('n2', '2026-03-09T04:00:00Z'), // NY Mon 9 00:00 EDT: week 2026-03-09
  order('n3', '2025-11-01T03:30:00Z'), // NY Fri 31 October 23:30 EDT: month 2025-10-01; UTC 2025-11-01
  order('n4', '2025-11-03T04:30:00Z'), // NY Sun 2 November 23:30 EST: week 2025-10-27; UTC: 2025-11-03
  order('n5', '2025-11-03T05:00:00Z'), // NY Mon 3 November 00:00 EST: week 2025-11-03
  // Zones far from UTC.
  order('k1', '2025-12-31T10:30:00Z'), // Kiritimati (+14) 2026-01-01 00:30: year 2026; UTC year 2025
  order('k2', '2026-03-31T10:00:00Z'), // Kiritimati 1 April 00:00: quarter 2026-04-01; UTC 2026-01-01
  order('g1', '2026-01-01T11:00:00Z'), // Etc/GMT+12 (−12) 2025-12-31 23:00: year 2025; UTC year 2026
  order('g2', '2026-04-01T11:59:59Z'), // Etc/GMT+12 31 March 23:59:59: quarter 2026-01-01; UTC 2026-04-01
  order('m1', '2026-06-30T18:15:00Z'), // Kathmandu (+05:45) 1 July 00:00: month and quarter 2026-07-01
  order('m2', '2026-06-30T18:14:59Z'), // Kathmandu 30 June 23:59:59: month 2026-06-01, quarter 2026-04-01
  // An ISO week over the year change: Monday 29 December 2025 to Sunday 4 January 2026 (UTC).
  // wendy orders on three of its days (U5: once in the week, on each of the three days).
  order('w0', '2025-12-28T23:59:59Z'), // Sunday: week 2025-12-22
  order('w1', '2025-12-29T08:00:00Z', { customer_email: 'wendy@example.com' }),
  order('w2', '2025-12-31T12:00:00Z', { customer_email: 'Wendy@Example.com' }),
  order('w3', '2026-01-01T12:00:00Z', { customer_email: 'wendy@example.com' }),
  order('w4', '2026-01-04T23:00:00Z'), // UTC Sunday: week 2025-12-29; Paris Mon 5 00:00: week 2026-01-05
  order('w5', '2026-01-05T00:00:00Z', { customer_email: 'wendy@example.com' }), // week 2026-01-05
  // Customers, May 2026 (no other order that month). alice's first order is in April, in store B
  // (U2): she is `returning` in May even when only store A or only `processing` is kept (F1).
  order('c0', '2026-04-10T10:00:00Z', {
    store: B,
    customer_email: 'alice@example.com',
    billing_country: 'FR',
  }),
  order('c1', '2026-05-10T10:00:00Z', {
    status: 'processing',
    customer_email: 'alice@example.com',
    billing_country: 'fr',
    total: '20.00',
  }),
  // bob: first order in May in store B, country missing; a second one in store A, country empty:
  // `new` for all of May (U3), even when only `processing` orders are kept.
  order('c2', '2026-05-05T10:00:00Z', { store: B, customer_email: 'bob@example.com', total: '30.00' }),
  order('c3', '2026-05-12T10:00:00Z', {
    status: 'processing',
    customer_email: 'BOB@example.com',
    billing_country: '',
    total: '40.00',
  }),
  order('c4', '2026-05-15T10:00:00Z', { billing_country: 'de', total: '50.00' }), // anonymous, DE
  // carol: an excluded (S1) pending order in April, then her first counted order in May: `new`.
  order('c5', '2026-04-01T10:00:00Z', { status: 'pending', customer_email: 'carol@example.com' }),
  order('c6', '2026-05-20T10:00:00Z', {
    customer_email: 'carol@example.com',
    billing_country: null,
    total: '60.00',
  }),
  order('c7', '2026-05-21T10:00:00Z', { store: B, customer_email: 'not-an-email', total: '70.00' }), // anonymous, Unknown
  // CSV cells, August 2026 (no other order that month): statuses a spreadsheet would evaluate,
  // a comma and a quote, and a negative net revenue (a full refund and shipping not refunded:
  // 10.00 − 10.00 − 0.00 − (4.00 − 0.00) = −4.00 with the default deductions, S2).
  order('v1', '2026-08-03T10:00:00Z', { status: '=SUM(A1)', total: '1.50' }),
  order('v2', '2026-08-04T10:00:00Z', { status: '+1', total: '2.25' }),
  order('v3', '2026-08-05T10:00:00Z', {
    status: '-x',
    total: '10.00',
    shipping_total: '4.00',
    refund_total: '10.00',
  }),
  order('v4', '2026-08-06T10:00:00Z', { status: '@cmd', total: '3.00' }),
  order('v5', '2026-08-07T10:00:00Z', { status: '\tcmd', total: '4.00' }),
  order('v6', '2026-08-08T10:00:00Z', { status: 'a,b "c"', total: '5.00', billing_country: 'FR' }),
  order('v7', '2026-08-09T10:00:00Z', { status: 'completed', total: '1234567.89', items: 3 }),
  // Line breaks in a status, September 2026 (no other order that month): an LF inside, a CR first.
  order('b1', '2026-09-01T10:00:00Z', { status: 'line\nbreak', total: '6.00' }),
  order('b2', '2026-09-02T10:00:00Z', { status: '\rcr', total: '7.00' }),
  order('b3', '2026-09-03T10:00:00Z', { status: 'crlf\r\ninside', total: '8.00' }),
];

const WHOLE = 'from=2025-01-01&to=2026-12-31';
const MAY = 'from=2026-05-01&to=2026-05-31';
const AUGUST = 'from=2026-08-01&to=2026-08-31';
const SEPTEMBER = 'from=2026-09-01&to=2026-09-30';
const enc = (s: string) => encodeURIComponent(s).replace(/%2C/g, ',');

let service: TestService;
let key: string;
/** A second app on the same database with the SQL report engine alone (REPORT_ENGINE=sql). */
let sqlApp: Awaited<ReturnType<typeof startSqlEngineApp>> | undefined;

async function fetchText(query: string, headers: Record<string, string> = {}, baseUrl = service.baseUrl) {
  const response = await fetch(`${baseUrl}/api/reports/tabular?${query}`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
  });
  return { response, text: await response.text() };
}

/** Both engines' JSON answers equal the oracle's, byte for byte, with the same T6/O1 header. */
async function matchesOracle(query: string): Promise<{ answer: OracleAnswer; rows: Row[] }> {
  const answer = oracle(LINES, DEFAULT_SETTINGS, queryFromSearch(new URLSearchParams(query)));
  for (const [engine, baseUrl] of [
    ['columnar', service.baseUrl],
    ['sql', sqlApp?.baseUrl ?? ''],
  ] as const) {
    const { response, text } = await fetchText(query, {}, baseUrl);
    const what = `${engine} engine, ${query}`;
    assert.equal(response.status, 200, `${what}: ${text}`);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(JSON.parse(text), answer.body, what);
    assert.equal(text, JSON.stringify(answer.body), `${what}: same values, not the same JSON text`);
    assert.equal(response.headers.get('x-rows-truncated'), answer.truncated ? 'true' : null, what);
  }
  return { answer, rows: answer.body.rows };
}

/** The `date` values of an answer, with each one's orders. */
const ordersByDate = (rows: Row[]) => Object.fromEntries(rows.map((r) => [r.date, r.orders]));

async function expectError(
  query: string,
  code: string,
  parameter: string | undefined,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const { response, text } = await fetchText(query, headers);
  assert.equal(response.status, 400, `${query}: ${text}`);
  assert.match(
    response.headers.get('content-type') ?? '',
    /^application\/json/,
    `${query}: errors stay JSON`,
  );
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.equal(body.code, code, `${query}: ${text}`);
  assert.equal(typeof body.error, 'string');
  if (parameter !== undefined) assert.ok(String(body.error).includes(parameter), `${query}: ${text}`);
  return body;
}

describe('section 14 on orders built for it (F1, G2, O1, V1)', () => {
  before(async () => {
    service = await startTestService({ RATE_LIMIT_MAX: '100000' });
    const created = await service.addOrganization('Extensions', []);
    key = created.key;
    // The import path the oracle test uses; every line must be taken.
    const result = await importOrderRecords(service.db, created.org.id, LINES);
    assert.equal(result.rejected, 0, JSON.stringify(result.errors.slice(0, 5)));
    sqlApp = await startSqlEngineApp(service);
  });
  after(async () => {
    await sqlApp?.close();
    await service?.cleanup();
  });

  test('T2/T3: a request without section 14 parameters gets byte for byte the body of before', async () => {
    for (const query of [
      `metrics=orders,net_revenue,unique_customers&dimensions=date&${WHOLE}&timezone=Europe/Paris`,
      `metrics=orders,gross_sales&dimensions=status,country&${AUGUST}&limit=3`,
      `metrics=orders,new_customers,returning_customers&${MAY}`,
      // Explicit defaults and unknown parameters (P7) change nothing either.
      `metrics=orders&dimensions=customer_type,store&${MAY}&granularity=day&offset=0&format=json&filterstore=x`,
    ]) {
      const answer = oracle(LINES, DEFAULT_SETTINGS, queryFromSearch(new URLSearchParams(query)));
      assert.deepEqual(Object.keys(answer.body), REFERENCE_FIELDS);
      await matchesOracle(query); // byte for byte, on both engines
    }
  });

  test('G2/T3: week and month buckets across the DST changes of Europe/Paris (late March, late October)', async () => {
    const spring = 'from=2026-03-23&to=2026-04-05&metrics=orders&dimensions=date';
    const { rows: parisWeeks, answer } = await matchesOracle(
      `${spring}&granularity=week&timezone=Europe/Paris`,
    );
    assert.equal(answer.body.granularity, 'week');
    // p1 p2 | p3 p4 k2 g2 in Paris (k2: 31 March 10:00Z, g2: 1 April 11:59:59Z).
    assert.deepEqual(ordersByDate(parisWeeks), { '2026-03-23': 2, '2026-03-30': 4 });
    const { rows: utcWeeks } = await matchesOracle(`${spring}&granularity=week`);
    assert.deepEqual(ordersByDate(utcWeeks), { '2026-03-23': 3, '2026-03-30': 3 });
    const { rows: parisMonths } = await matchesOracle(`${spring}&granularity=month&timezone=Europe/Paris`);
    assert.deepEqual(ordersByDate(parisMonths), { '2026-03-01': 4, '2026-04-01': 2 });
    const { rows: utcMonths } = await matchesOracle(`${spring}&granularity=month`);
    assert.deepEqual(ordersByDate(utcMonths), { '2026-03-01': 5, '2026-04-01': 1 });

    const autumn = 'from=2025-10-20&to=2025-11-02&metrics=orders&dimensions=date';
    const { rows: octWeeks } = await matchesOracle(`${autumn}&granularity=week&timezone=Europe/Paris`);
    // p5 p6 | p7 p8 n3 (n3: 1 November 04:30 in Paris).
    assert.deepEqual(ordersByDate(octWeeks), { '2025-10-20': 2, '2025-10-27': 3 });
    const { rows: octUtcWeeks } = await matchesOracle(`${autumn}&granularity=week`);
    assert.deepEqual(ordersByDate(octUtcWeeks), { '2025-10-20': 3, '2025-10-27': 2 });
    const { rows: octMonths } = await matchesOracle(`${autumn}&granularity=month&timezone=Europe/Paris`);
    assert.deepEqual(ordersByDate(octMonths), { '2025-10-01': 3, '2025-11-01': 2 });
  });

  test('G2: week and month buckets across the DST changes of America/New_York', async () => {
    const march = 'from=2026-03-02&to=2026-03-15&metrics=orders&dimensions=date&timezone=America/New_York';
    assert.deepEqual(ordersByDate((await matchesOracle(`${march}&granularity=week`)).rows), {
      '2026-03-02': 1,
      '2026-03-09': 1,
    });
    const november = 'from=2025-10-27&to=2025-11-09&metrics=orders&dimensions=date';
    // NY: p8 n3 n4 in the week of 27 October (p8 is 31 October 19:00 EDT), n5 in the next.
    assert.deepEqual(
      ordersByDate((await matchesOracle(`${november}&granularity=week&timezone=America/New_York`)).rows),
      { '2025-10-27': 3, '2025-11-03': 1 },
    );
    assert.deepEqual(ordersByDate((await matchesOracle(`${november}&granularity=week`)).rows), {
      '2025-10-27': 2,
      '2025-11-03': 2,
    });
    assert.deepEqual(
      ordersByDate((await matchesOracle(`${november}&granularity=month&timezone=America/New_York`)).rows),
      { '2025-10-01': 2, '2025-11-01': 2 },
    );
    await matchesOracle(
      `${WHOLE}&metrics=orders,unique_customers&dimensions=date&granularity=week&timezone=US/Eastern`,
    );
  });

  test('G2: zones far from UTC (Pacific/Kiritimati, Etc/GMT+12, Asia/Kathmandu): month, quarter and year', async () => {
    const turn = 'from=2025-12-30&to=2026-01-02&metrics=orders&dimensions=date&granularity=year';
    // k1 w2 | g1 w3 in UTC; Kiritimati moves k1 (00:30) and w2 (02:00) to 1 January 2026;
    // Etc/GMT+12 moves g1 (23:00) back to 2025, not w3 (1 January 00:00).
    assert.deepEqual(ordersByDate((await matchesOracle(turn)).rows), { '2025-01-01': 2, '2026-01-01': 2 });
    assert.deepEqual(ordersByDate((await matchesOracle(`${turn}&timezone=Pacific/Kiritimati`)).rows), {
      '2026-01-01': 4,
    });
    assert.deepEqual(ordersByDate((await matchesOracle(`${turn}&timezone=Etc/GMT%2B12`)).rows), {
      '2025-01-01': 3,
      '2026-01-01': 1,
    });
    const quarter = 'from=2026-03-31&to=2026-04-01&metrics=orders&dimensions=date&granularity=quarter';
    // p4 k2 | g2 in UTC; Kiritimati: p4 (1 April 12:30) k2 (1 April 00:00) in Q2; Etc/GMT+12: all in Q1.
    assert.deepEqual(ordersByDate((await matchesOracle(quarter)).rows), { '2026-01-01': 2, '2026-04-01': 1 });
    assert.deepEqual(ordersByDate((await matchesOracle(`${quarter}&timezone=Pacific/Kiritimati`)).rows), {
      '2026-04-01': 3,
    });
    assert.deepEqual(ordersByDate((await matchesOracle(`${quarter}&timezone=Etc/GMT%2B12`)).rows), {
      '2026-01-01': 3,
    });
    const july = 'from=2026-06-30&to=2026-06-30&metrics=orders&dimensions=date&timezone=Asia/Kathmandu';
    assert.deepEqual(ordersByDate((await matchesOracle(`${july}&granularity=month`)).rows), {
      '2026-06-01': 1,
      '2026-07-01': 1,
    });
    assert.deepEqual(ordersByDate((await matchesOracle(`${july}&granularity=quarter`)).rows), {
      '2026-04-01': 1,
      '2026-07-01': 1,
    });
    for (const zone of ['Pacific/Kiritimati', 'Etc/GMT%2B12', 'Asia/Kathmandu']) {
      for (const granularity of ['week', 'month', 'quarter', 'year']) {
        await matchesOracle(
          `${WHOLE}&metrics=orders,gross_sales,unique_customers&dimensions=date,store&granularity=${granularity}&timezone=${zone}`,
        );
      }
    }
  });

  test('G2/U5: the ISO week of Monday 2025-12-29 spans the year change; a customer counts once per bucket', async () => {
    const period = 'from=2025-12-28&to=2026-01-05&metrics=orders,unique_customers&dimensions=date';
    const { rows } = await matchesOracle(`${period}&granularity=week`);
    // w0 | w1 w2 k1 w3 g1 w4 | w5; wendy once in each week she ordered in.
    assert.deepEqual(rows, [
      { date: '2025-12-22', orders: 1, unique_customers: 0 },
      { date: '2025-12-29', orders: 6, unique_customers: 1 },
      { date: '2026-01-05', orders: 1, unique_customers: 1 },
    ]);
    // By day, wendy counts on each of her days (U5).
    const days = (await matchesOracle(period)).rows.filter((r) => r.unique_customers === 1);
    assert.deepEqual(
      days.map((r) => r.date),
      ['2025-12-29', '2025-12-31', '2026-01-01', '2026-01-05'],
    );
    // In Paris, w4 (Sunday 23:00Z) is Monday 5 January.
    const paris = await matchesOracle(`${period}&granularity=week&timezone=Europe/Paris`);
    assert.deepEqual(ordersByDate(paris.rows), { '2025-12-29': 6, '2026-01-05': 2 });
    // Without the date dimension, granularity changes nothing (G2), not even the body.
    const totals = await matchesOracle(`${period.replace('&dimensions=date', '')}&granularity=month`);
    assert.deepEqual(totals.rows, [{ orders: 8, unique_customers: 1 }]);
    assert.deepEqual(Object.keys(totals.answer.body), REFERENCE_FIELDS);
  });

  test('F1/U3: filters on Unknown countries and on each customer type', async () => {
    const metrics = 'metrics=orders,gross_sales,unique_customers,new_customers,returning_customers';
    const unknown = await matchesOracle(`${metrics}&${MAY}&filter.country=Unknown`);
    // c2 c3 (bob) c6 (carol) c7 (anonymous): missing, empty and null countries all show Unknown.
    assert.deepEqual(unknown.rows, [
      { orders: 4, gross_sales: 200, unique_customers: 2, new_customers: 2, returning_customers: 0 },
    ]);
    assert.deepEqual(unknown.answer.body.filters, { country: ['Unknown'] });
    // `unknown` is not how a row shows it: no order.
    assert.deepEqual((await matchesOracle(`${metrics}&${MAY}&filter.country=unknown`)).rows, [
      { orders: 0, gross_sales: 0, unique_customers: 0, new_customers: 0, returning_customers: 0 },
    ]);
    const byType = async (type: string) =>
      (await matchesOracle(`${metrics}&${MAY}&filter.customer_type=${type}`)).rows[0];
    assert.deepEqual(await byType('returning'), {
      orders: 1,
      gross_sales: 20,
      unique_customers: 1,
      new_customers: 0,
      returning_customers: 1,
    });
    assert.deepEqual(await byType('new'), {
      orders: 3,
      gross_sales: 130,
      unique_customers: 2,
      new_customers: 2,
      returning_customers: 0,
    });
    assert.deepEqual(await byType('anonymous'), {
      orders: 2,
      gross_sales: 120,
      unique_customers: 0,
      new_customers: 0,
      returning_customers: 0,
    });
    // With the dimension requested as well, and two types.
    const { rows } = await matchesOracle(
      `metrics=orders&dimensions=customer_type,country&${MAY}&filter.customer_type=anonymous,new`,
    );
    assert.deepEqual(rows, [
      { customer_type: 'anonymous', country: 'DE', orders: 1 },
      { customer_type: 'anonymous', country: 'Unknown', orders: 1 },
      { customer_type: 'new', country: 'Unknown', orders: 3 },
    ]);
  });

  test('F1/U2/U3: filters never change a first order; filters AND together; a filter given twice is joined', async () => {
    const metrics = 'metrics=orders,unique_customers,new_customers,returning_customers';
    // Only store A: alice's first order (store B, April) still makes her returning; bob (first
    // order in store B, in May) is still new.
    const storeA = await matchesOracle(`${metrics}&dimensions=customer_type&${MAY}&filter.store=${enc(A)}`);
    assert.deepEqual(storeA.rows, [
      {
        customer_type: 'anonymous',
        orders: 1,
        unique_customers: 0,
        new_customers: 0,
        returning_customers: 0,
      },
      { customer_type: 'new', orders: 2, unique_customers: 2, new_customers: 2, returning_customers: 0 },
      {
        customer_type: 'returning',
        orders: 1,
        unique_customers: 1,
        new_customers: 0,
        returning_customers: 1,
      },
    ]);
    // Only `processing`: bob's first order (completed) is filtered out, he stays new for May.
    const processing = await matchesOracle(
      `${metrics}&dimensions=customer_type,status&${MAY}&filter.status=processing`,
    );
    assert.deepEqual(
      processing.rows.map((r) => [r.customer_type, r.orders]),
      [
        ['new', 1],
        ['returning', 1],
      ],
    );
    // AND: store A and new and Unknown → c3 (bob) and c6 (carol); trimmed values, empties dropped,
    // the parameter given twice joined (P1 style), the filters listed in the body in F1's order.
    const both = await matchesOracle(
      `filter.customer_type=${enc(' new ,,')}&${metrics}&${MAY}&filter.country=Unknown&filter.store=${enc(A)}&filter.customer_type=returning`,
    );
    assert.deepEqual(both.answer.body.filters, {
      store: [A],
      country: ['Unknown'],
      customer_type: ['new', 'returning'],
    });
    assert.deepEqual(both.rows, [
      { orders: 2, unique_customers: 2, new_customers: 2, returning_customers: 0 },
    ]);
    // A store as registered, not as a URL with a trailing slash; an absent store keeps no order.
    assert.equal(
      (await matchesOracle(`metrics=orders&${MAY}&filter.store=${enc(`${A}/`)}`)).rows[0]!.orders,
      0,
    );
    assert.equal(
      (await matchesOracle(`metrics=orders&${MAY}&filter.store=${enc(`${B},https://absent.example`)}`))
        .rows[0]!.orders,
      2,
    );
    // An excluded status (S1) is never a row's value: no order.
    assert.equal(
      (await matchesOracle(`metrics=orders&from=2026-04-01&to=2026-04-30&filter.status=pending`)).rows[0]!
        .orders,
      0,
    );
    // T4: with a dimension, a filter that keeps nothing gives no row at all.
    assert.deepEqual(
      (await matchesOracle(`metrics=orders&dimensions=date&${MAY}&filter.status=refunded`)).rows,
      [],
    );
  });

  test('O1/T6: offsets past the end give no row and no truncation; X-Rows-Truncated at the offset + limit boundary', async () => {
    const base = `metrics=orders,gross_sales&dimensions=date&${WHOLE}`;
    const total = oracle(LINES, DEFAULT_SETTINGS, queryFromSearch(new URLSearchParams(base))).totalRows;
    assert.ok(total > 20, `${total} days with orders`);
    const all = (await matchesOracle(base)).rows;
    for (const offset of [total, total + 1, total + 100, 10_000_000]) {
      const { answer } = await matchesOracle(`${base}&offset=${offset}`);
      assert.deepEqual(answer.body.rows, []);
      assert.equal(answer.body.rowCount, 0);
      assert.equal(answer.body.offset, offset);
      assert.equal(answer.truncated, false);
    }
    // The last two rows exactly: nothing remains after them.
    const last = await matchesOracle(`${base}&offset=${total - 2}&limit=2`);
    assert.deepEqual(last.rows, all.slice(-2));
    assert.equal(last.answer.truncated, false);
    // One row earlier: the last row remains, so the answer is truncated.
    const cut = await matchesOracle(`${base}&offset=${total - 3}&limit=2`);
    assert.deepEqual(cut.rows, all.slice(-3, -1));
    assert.equal(cut.answer.truncated, true);
    // Pages of 7 rows put back together are the whole answer, in T3 order.
    const pages: Row[] = [];
    for (let offset = 0; offset < total; offset += 7)
      pages.push(...(await matchesOracle(`${base}&offset=${offset}&limit=7`)).rows);
    assert.deepEqual(pages, all);
    // With filters and a granularity too.
    await matchesOracle(
      `${base}&granularity=week&filter.store=${enc(A)}&offset=3&limit=4&timezone=Asia/Kathmandu`,
    );
  });

  test('O1/T5: without a dimension, the single totals row is skipped by any offset from 1', async () => {
    const base = `metrics=orders,net_revenue&${MAY}`;
    const zero = await matchesOracle(`${base}&offset=0`);
    assert.equal(zero.rows.length, 1);
    assert.equal(zero.answer.body.offset, undefined); // the default: not in the body
    for (const offset of [1, 2, 10_000_000]) {
      const { answer } = await matchesOracle(`${base}&offset=${offset}`);
      assert.deepEqual(answer.body.rows, []);
      assert.equal(answer.truncated, false);
    }
    // No order at all: T5's row of zeros, skipped the same way.
    assert.equal((await matchesOracle(`${base}&filter.status=nothing`)).rows.length, 1);
    assert.equal((await matchesOracle(`${base}&filter.status=nothing&offset=1`)).rows.length, 0);
  });

  test("V1: format=csv and Accept: text/csv give the JSON answer's rows as RFC 4180 CSV; Vary: Accept", async () => {
    for (const query of [
      `metrics=orders,gross_sales,net_revenue,average_order_value&dimensions=date,status&${AUGUST}`,
      `metrics=orders,unique_customers&dimensions=store,country,customer_type&${MAY}&filter.customer_type=new,anonymous`,
      `metrics=orders,gross_sales&dimensions=date&${WHOLE}&granularity=month&timezone=Europe/Paris&offset=2&limit=5`,
      `metrics=orders,net_revenue&${MAY}`,
      `metrics=orders&dimensions=date&${MAY}&filter.status=nothing`, // no row: the header line alone
    ]) {
      const json = await matchesOracle(query);
      assert.equal((await fetchText(query)).response.headers.get('vary'), 'Accept');
      for (const [how, path, headers, baseUrl] of [
        ['format=csv', `${query}&format=csv`, {}, service.baseUrl],
        ['Accept: text/csv', query, { accept: 'text/csv' }, service.baseUrl],
        ['format=csv, SQL engine', `${query}&format=csv`, {}, sqlApp?.baseUrl ?? ''],
      ] as const) {
        const { response, text } = await fetchText(path, headers, baseUrl);
        assert.equal(response.status, 200, `${how} ${query}: ${text}`);
        assert.equal(response.headers.get('content-type'), 'text/csv; charset=utf-8');
        assert.equal(response.headers.get('vary'), 'Accept');
        assert.equal(response.headers.get('x-rows-truncated'), json.answer.truncated ? 'true' : null);
        // A header line of the ids, then one line per row, each ended by CRLF.
        const ids = [...json.answer.body.dimensions, ...json.answer.body.metrics];
        assert.ok(text.startsWith(`${ids.join(',')}\r\n`), `${how}: ${JSON.stringify(text.slice(0, 80))}`);
        assert.ok(text.endsWith('\r\n'));
        assert.equal(rfc4180Violation(text), undefined, `${how} ${query}`);
        const cells = parseCsv(text, { record_delimiter: '\r\n' }) as string[][];
        assert.equal(cells.length, 1 + json.rows.length);
        assert.deepEqual(cells, csvCells(json.answer.body), `${how} ${query}`);
      }
    }
    // format=json wins over Accept: text/csv; Accept: application/json and */* give JSON.
    const query = `metrics=orders&dimensions=status&${AUGUST}`;
    const expected = oracle(LINES, DEFAULT_SETTINGS, queryFromSearch(new URLSearchParams(query))).body;
    for (const [path, headers] of [
      [`${query}&format=json`, { accept: 'text/csv' }],
      [query, { accept: 'application/json' }],
      [query, { accept: '*/*' }],
    ] as const) {
      const { response, text } = await fetchText(path, headers);
      assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8', path);
      assert.equal(text, JSON.stringify(expected));
    }
  });

  test('V1: formula-looking statuses get a leading quote, a comma and a quote are quoted, negative numbers are not touched', async () => {
    const query = `metrics=net_revenue,orders,gross_sales&dimensions=status&${AUGUST}`;
    const json = await matchesOracle(query);
    // T3 by code point: tab, +, -, =, @, a, c.
    assert.deepEqual(json.rows, [
      { status: '\tcmd', net_revenue: 4, orders: 1, gross_sales: 4 },
      { status: '+1', net_revenue: 2.25, orders: 1, gross_sales: 2.25 },
      { status: '-x', net_revenue: -4, orders: 1, gross_sales: 10 },
      { status: '=SUM(A1)', net_revenue: 1.5, orders: 1, gross_sales: 1.5 },
      { status: '@cmd', net_revenue: 3, orders: 1, gross_sales: 3 },
      { status: 'a,b "c"', net_revenue: 5, orders: 1, gross_sales: 5 },
      { status: 'completed', net_revenue: 1234567.89, orders: 1, gross_sales: 1234567.89 },
    ]);
    const { response, text } = await fetchText(`${query}&format=csv`);
    assert.equal(response.status, 200, text);
    assert.equal(rfc4180Violation(text), undefined, JSON.stringify(text));
    const cells = parseCsv(text, { record_delimiter: '\r\n' }) as string[][];
    assert.deepEqual(cells, [
      ['status', 'net_revenue', 'orders', 'gross_sales'],
      ["'\tcmd", '4', '1', '4'],
      ["'+1", '2.25', '1', '2.25'],
      ["'-x", '-4', '1', '10'],
      ["'=SUM(A1)", '1.5', '1', '1.5'],
      ["'@cmd", '3', '1', '3'],
      ['a,b "c"', '5', '1', '5'],
      ['completed', '1234567.89', '1', '1234567.89'],
    ]);
    assert.deepEqual(cells, csvCells(json.answer.body));
    // RFC 4180 on the raw text: the comma and the quote inside quotes, the quote doubled; the
    // negative number written as JSON writes it; no thousands separator.
    assert.ok(text.includes('\r\n"a,b ""c""",5,1,5\r\n'), JSON.stringify(text));
    assert.ok(text.includes(',-4,1,10\r\n'), JSON.stringify(text));
    assert.ok(text.includes('\r\ncompleted,1234567.89,1,1234567.89\r\n'), JSON.stringify(text));
    // Also in a dimension of a filtered and offset answer, through Accept.
    const filtered = `metrics=orders&dimensions=status,country&${AUGUST}&filter.status=${enc('-x,@cmd,=SUM(A1)')}&offset=1`;
    const fj = await matchesOracle(filtered);
    const csv = await fetchText(filtered, { accept: 'text/csv' });
    assert.deepEqual(parseCsv(csv.text, { record_delimiter: '\r\n' }), csvCells(fj.answer.body));
    assert.deepEqual(parseCsv(csv.text, { record_delimiter: '\r\n' }), [
      ['status', 'country', 'orders'],
      ["'=SUM(A1)", 'Unknown', '1'],
      ["'@cmd", 'Unknown', '1'],
    ]);
  });

  test('V1: a status with a line break (an LF inside, a CR first, a CRLF inside) is quoted, as RFC 4180 requires', async () => {
    const query = `metrics=orders,gross_sales&dimensions=status&${SEPTEMBER}`;
    const json = await matchesOracle(query);
    assert.deepEqual(
      json.rows.map((r) => r.status),
      ['\rcr', 'crlf\r\ninside', 'line\nbreak'],
    );
    const { response, text } = await fetchText(`${query}&format=csv`);
    assert.equal(response.status, 200, text);
    // RFC 4180's ABNF: CR and LF only inside a quoted (escaped) field; a reader that ends a record
    // at any line break (spreadsheets do) would otherwise cut the row in two.
    assert.equal(rfc4180Violation(text), undefined, `not RFC 4180: ${JSON.stringify(text)}`);
    assert.equal(
      text,
      'status,orders,gross_sales\r\n"\'\rcr",1,7\r\n"crlf\r\ninside",1,8\r\n"line\nbreak",1,6\r\n',
    );
    assert.deepEqual(parseCsv(text, { record_delimiter: '\r\n' }), csvCells(json.answer.body));
  });

  test('C1/V1: section 14 parameters and the format are part of the cache key', async () => {
    const query = `metrics=orders&dimensions=status&${AUGUST}&limit=4`;
    const plain = await fetchText(query);
    const asCsv = await fetchText(query, { accept: 'text/csv' });
    assert.equal(asCsv.response.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.notEqual(asCsv.text, plain.text);
    const again = await fetchText(query);
    assert.equal(again.text, plain.text);
    assert.equal(again.response.headers.get('content-type'), 'application/json; charset=utf-8');
    for (const extra of ['&offset=1', '&filter.status=completed', '&format=csv']) {
      const { text } = await fetchText(`${query}${extra}`);
      assert.notEqual(text, plain.text, extra);
    }
    // G2 without the date dimension changes nothing: the very answer of the plain query.
    assert.equal((await fetchText(`${query}&granularity=week`)).text, plain.text);
    assert.notEqual(
      (await fetchText(`${query.replace('dimensions=status', 'dimensions=date')}&granularity=week`)).text,
      (await fetchText(query.replace('dimensions=status', 'dimensions=date'))).text,
    );
    await matchesOracle(`${query}&offset=1`);
    await matchesOracle(`${query}&filter.status=completed`);
    await matchesOracle(query);
  });

  test('F1/G2/O1/V1 errors: unknown filters, empty filters, bad granularity, offset and format; errors stay JSON', async () => {
    const base = `metrics=orders&${MAY}`;
    const unknown = await expectError(
      `${base}&dimensions=date,bogusdim&filter.date=2026-05-01&filter.bogus=x`,
      'UNKNOWN_IDENTIFIERS',
      undefined,
    );
    assert.equal(unknown.error, 'Dimensions ou métriques inconnues');
    assert.deepEqual(unknown.unknownDimensions, ['bogusdim', 'date', 'bogus']);
    assert.deepEqual(unknown.unknownMetrics, []);
    const bogusOnly = await expectError(`${base}&filter.bogus=x`, 'UNKNOWN_IDENTIFIERS', undefined);
    assert.deepEqual(bogusOnly.unknownDimensions, ['bogus']);
    for (const empty of ['filter.store=', 'filter.store=,', 'filter.store=%20,%20', 'filter.country=']) {
      await expectError(`${base}&${empty}`, 'INVALID_PARAMETER', empty.slice(0, empty.indexOf('=')));
    }
    for (const g of ['hour', 'Week', 'days', '', 'week,month']) {
      await expectError(`${base}&granularity=${g}`, 'INVALID_PARAMETER', 'granularity');
    }
    for (const o of ['-1', '1.5', '10000001', 'abc', '', '1e3', '0x10']) {
      await expectError(`${base}&offset=${enc(o)}`, 'INVALID_PARAMETER', 'offset');
    }
    for (const f of ['xml', 'CSV', '', 'text/csv']) {
      await expectError(`${base}&format=${enc(f)}`, 'INVALID_PARAMETER', 'format');
    }
    // Asked as CSV, an error is still JSON.
    await expectError(`${base}&format=csv&offset=-1`, 'INVALID_PARAMETER', 'offset');
    await expectError(`${base}&offset=-1`, 'INVALID_PARAMETER', 'offset', { accept: 'text/csv' });
    await expectError(`${base}&format=csv&filter.bogus=x`, 'UNKNOWN_IDENTIFIERS', undefined);
    await expectError(`metrics=orders&from=2026-13-01&format=csv`, 'INVALID_PARAMETER', 'from');
    const noKey = await service.get(`/api/reports/tabular?${base}&format=csv`, undefined, {
      accept: 'text/csv',
    });
    assert.equal(noKey.status, 401);
    assert.match(noKey.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(((await noKey.json()) as { code: string }).code, 'UNAUTHENTICATED');
  });
});
