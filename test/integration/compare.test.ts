// PC1 (period comparisons) through real HTTP on orders built for it, worked out by hand in the
// comments: 29 February against 28 February, a comparison shorter and longer than the main
// period, customers new in one period and returning in the other, the change in exact decimals,
// CSV, offset and limit on the matched rows, errors (E3) and the cache key (C1). Every 200 answer
// is asked of the service's default engine (columnar) and of the SQL engine, which must agree
// byte for byte; the random cases are in oracle.test.ts and columnar-differential.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseCsv } from 'csv-parse/sync';
import { startSqlEngineApp, startTestService, type TestService } from '../helpers/service.js';
import { REFERENCE_FIELDS } from '../helpers/oracle.js';

const order = (id: string, created_at: string, total: string, customer_email?: string) => ({
  store: 'https://a.example',
  id,
  created_at,
  status: 'completed',
  items: 1,
  total,
  ...(customer_email ? { customer_email } : {}),
});

const LINES = [
  order('o1', '2024-02-29T10:00:00Z', '40.00', 'alice@example.com'), // alice's first order
  order('o4', '2024-03-01T10:00:00Z', '10.00', 'carol@example.com'), // carol's first order
  order('o2', '2025-02-28T10:00:00Z', '35.10', 'alice@example.com'), // alice: returning in 2025
  order('o3', '2025-03-01T10:00:00Z', '20.00', 'bob@example.com'), // bob's first order
];

let service: TestService;
let key: string;
let sqlApp: Awaited<ReturnType<typeof startSqlEngineApp>> | undefined;

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly type: string | null;
  readonly truncated: string | null;
}

async function ask(baseUrl: string, query: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${baseUrl}/api/reports/tabular?${query}`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
  });
  return {
    status: response.status,
    text: await response.text(),
    type: response.headers.get('content-type'),
    truncated: response.headers.get('x-rows-truncated'),
  };
}

/** The answer of both engines, which must be the same bytes and headers. */
async function both(query: string, headers: Record<string, string> = {}): Promise<Answer> {
  const columnar = await ask(service.baseUrl, query, headers);
  const sql = await ask(sqlApp?.baseUrl ?? '', query, headers);
  assert.deepEqual(columnar, sql, `both engines, ${query}`);
  assert.equal(columnar.status, 200, `${query}: ${columnar.text}`);
  return columnar;
}

const rowsOf = async (query: string) => (JSON.parse((await both(query)).text) as { rows: unknown[] }).rows;

describe('PC1 period comparisons', () => {
  before(async () => {
    service = await startTestService({ RATE_LIMIT_MAX: '100000' });
    key = (await service.addOrganization('Compare', LINES)).key;
    sqlApp = await startSqlEngineApp(service);
  });
  after(async () => {
    await sqlApp?.close();
    await service?.cleanup();
  });

  test('previous_year: 29 February becomes 28 February, buckets matched by index, those past the main period left out', async () => {
    const answer = await both(
      'metrics=orders,gross_sales&dimensions=date&from=2025-02-28&to=2025-03-01&compare=previous_year',
    );
    // Comparison 2024-02-28 … 2024-03-01 (3 days) against 2 days: its third day (carol's order) is left out.
    assert.equal(
      answer.text,
      JSON.stringify({
        dimensions: ['date'],
        metrics: ['orders', 'gross_sales'],
        from: '2025-02-28',
        to: '2025-03-01',
        timezone: 'UTC',
        compare: { mode: 'previous_year', from: '2024-02-28', to: '2024-03-01' },
        rows: [
          {
            date: '2025-02-28',
            date_previous: '2024-02-28',
            orders: 1,
            gross_sales: 35.1,
            orders_previous: 0,
            gross_sales_previous: 0,
            orders_change: null,
            gross_sales_change: null,
          },
          {
            date: '2025-03-01',
            date_previous: '2024-02-29',
            orders: 1,
            gross_sales: 20,
            orders_previous: 1,
            gross_sales_previous: 40,
            orders_change: 0,
            gross_sales_change: -50,
          },
        ],
        rowCount: 2,
      }),
    );
  });

  test('the change in exact decimals: 35.10 against 40.00 is −12.25, so −12.3 (T5 totals, custom)', async () => {
    const rows = await rowsOf(
      'metrics=gross_sales,orders&from=2025-02-28&to=2025-02-28&compare=custom&compare_from=2024-02-29&compare_to=2024-02-29',
    );
    assert.deepEqual(rows, [
      {
        gross_sales: 35.1,
        orders: 1,
        gross_sales_previous: 40,
        orders_previous: 1,
        gross_sales_change: -12.3,
        orders_change: 0,
      },
    ]);
  });

  // Main 2025-02-27 … 2025-03-01 (3 days) against custom 2024-02-29 … 2024-03-01 (2 days).
  const LONGER =
    'metrics=orders&dimensions=date&from=2025-02-27&to=2025-03-01&compare=custom&compare_from=2024-02-29&compare_to=2024-03-01';
  const LONGER_ROWS = [
    { date: '2025-02-27', date_previous: '2024-02-29', orders: 0, orders_previous: 1, orders_change: -100 },
    { date: '2025-02-28', date_previous: '2024-03-01', orders: 1, orders_previous: 1, orders_change: 0 },
    { date: '2025-03-01', date_previous: null, orders: 1, orders_previous: null, orders_change: null },
  ];

  test('a main period longer than the comparison: a row for orders on either side, nulls past its buckets', async () => {
    assert.deepEqual(await rowsOf(LONGER), LONGER_ROWS);
  });

  test('O1 and T6 on the matched rows', async () => {
    const answer = await both(`${LONGER}&offset=1&limit=1`);
    assert.deepEqual((JSON.parse(answer.text) as { rows: unknown[] }).rows, [LONGER_ROWS[1]]);
    assert.equal(answer.truncated, 'true');
    assert.equal((await both(`${LONGER}&offset=1&limit=2`)).truncated, null);
  });

  test('V1: the same columns in the same order, null as an empty cell', async () => {
    const answer = await both(`${LONGER}&format=csv`);
    assert.equal(answer.type, 'text/csv; charset=utf-8');
    assert.deepEqual(parseCsv(answer.text, { record_delimiter: '\r\n' }), [
      ['date', 'date_previous', 'orders', 'orders_previous', 'orders_change'],
      ['2025-02-27', '2024-02-29', '0', '1', '-100'],
      ['2025-02-28', '2024-03-01', '1', '1', '0'],
      ['2025-03-01', '', '1', '', ''],
    ]);
  });

  test('U3 per period: alice new in 2024 and returning in 2025, bob new, carol only before', async () => {
    const rows = await rowsOf(
      'metrics=new_customers,returning_customers&dimensions=customer_type&from=2025-02-28&to=2025-03-01&compare=previous_year',
    );
    // 2025: alice returning, bob new. 2024-02-28 … 03-01: alice and carol new.
    assert.deepEqual(rows, [
      {
        customer_type: 'new',
        new_customers: 1,
        returning_customers: 0,
        new_customers_previous: 2,
        returning_customers_previous: 0,
        new_customers_change: -50,
        returning_customers_change: null,
      },
      {
        customer_type: 'returning',
        new_customers: 0,
        returning_customers: 1,
        new_customers_previous: 0,
        returning_customers_previous: 0,
        new_customers_change: null,
        returning_customers_change: null,
      },
    ]);
  });

  test('previous_period in Europe/Paris: three local buckets on each side, matched by index', async () => {
    // Main 2025-03-01 … 2025-03-02 (UTC) in Paris: buckets 03-01 and 03-02; previous 02-27 … 02-28.
    const rows = await rowsOf(
      'metrics=orders&dimensions=date&from=2025-03-01&to=2025-03-02&compare=previous_period&timezone=Europe/Paris',
    );
    assert.deepEqual(rows, [
      { date: '2025-03-01', date_previous: '2025-02-27', orders: 1, orders_previous: 0, orders_change: null },
      { date: '2025-03-02', date_previous: '2025-02-28', orders: 0, orders_previous: 1, orders_change: -100 },
    ]);
  });

  test('C1 and the unchanged answer: without compare the body is the reference one; each comparison its own cache entry', async () => {
    const plain = 'metrics=orders&dimensions=date&from=2025-02-28&to=2025-03-01';
    const before = await both(plain);
    const year = await both(`${plain}&compare=previous_year`);
    const period = await both(`${plain}&compare=previous_period`);
    assert.deepEqual(Object.keys(JSON.parse(before.text) as object), [...REFERENCE_FIELDS]);
    assert.equal(
      before.text,
      '{"dimensions":["date"],"metrics":["orders"],"from":"2025-02-28","to":"2025-03-01","timezone":"UTC","rows":[{"date":"2025-02-28","orders":1},{"date":"2025-03-01","orders":1}],"rowCount":2}',
    );
    assert.notEqual(year.text, period.text);
    assert.match(period.text, /"compare":\{"mode":"previous_period","from":"2025-02-26","to":"2025-02-27"\}/);
    assert.equal((await both(plain)).text, before.text);
  });

  test('E3: French errors naming compare, compare_from or compare_to, with their code', async () => {
    const cases: [string, string][] = [
      ['compare=next_year', 'compare'],
      ['compare=', 'compare'],
      ['compare_from=2024-01-01', 'compare_from'],
      ['compare=previous_year&compare_to=2024-01-01', 'compare_to'],
      ['compare=custom&compare_from=2024-01-01', 'compare_to'],
      ['compare=custom&compare_to=2024-01-01', 'compare_from'],
      ['compare=custom&compare_from=2024-02-30&compare_to=2024-03-01', 'compare_from'],
      ['compare=custom&compare_from=2024-03-02&compare_to=2024-03-01', 'compare_from'],
      ['compare=previous_year&compare=previous_period', 'compare'],
    ];
    for (const [extra, parameter] of cases) {
      const query = `metrics=orders&from=2025-02-28&to=2025-03-01&${extra}`;
      const answer = await ask(service.baseUrl, query);
      assert.equal(answer.status, 400, `${query}: ${answer.text}`);
      const body = JSON.parse(answer.text) as { error: string; code: string };
      assert.equal(body.code, 'INVALID_PARAMETER', query);
      assert.ok(body.error.includes(parameter), `${query}: ${body.error}`);
      assert.match(answer.type ?? '', /^application\/json/, `${query}: errors stay JSON`);
    }
  });

  test('PC1, E3: compare_from and compare_to both given without compare=custom are both named (issue 26)', async () => {
    for (const compare of ['', '&compare=previous_year']) {
      const query = `metrics=orders&from=2025-02-28&to=2025-03-01&compare_from=2024-01-01&compare_to=2024-01-05${compare}`;
      const answer = await ask(service.baseUrl, query);
      assert.equal(answer.status, 400, query);
      const body = JSON.parse(answer.text) as { error: string; code: string };
      assert.equal(body.code, 'INVALID_PARAMETER');
      assert.match(body.error, /compare_from/, query);
      assert.match(body.error, /compare_to/, query);
    }
  });

  test('PC1: a previous period reaching before year 1 is the 400 naming compare on both engines, JSON and CSV (issue 26)', async () => {
    for (const extra of ['', '&dimensions=date', '&format=csv', '&dimensions=date&format=csv']) {
      const query = `metrics=orders,net_revenue&from=0001-01-02&to=0002-01-05&compare=previous_period${extra}`;
      for (const baseUrl of [service.baseUrl, sqlApp?.baseUrl ?? '']) {
        const answer = await ask(baseUrl, query);
        assert.equal(answer.status, 400, `${query}: ${answer.text}`);
        const body = JSON.parse(answer.text) as { error: string; code: string };
        assert.equal(body.code, 'INVALID_PARAMETER');
        assert.match(body.error, /^Paramètre compare invalide/, query);
        assert.ok(!body.error.includes('-0001'), `no computed day the user never typed: ${body.error}`);
      }
    }
  });
});
