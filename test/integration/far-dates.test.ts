// Issue 18, finding 1: dates at the edges of the calendar (P3's years 0001 and 9999) on every
// report route, against a real server process with a bounded heap, on each report engine. Before
// the fix, GET /reports/revenue?to=9999-12-31 looped for ever (the day after 9999-12-31,
// '10000-01-01', sorts before it as text): the process stopped answering /healthz and died of
// heap exhaustion. Here it would die within seconds (384 MB) and every test below would fail.
// Covers P3, P4, G2, T1, T2, T3, O1, V1, E1, E3.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GRANULARITIES, type Granularity } from '../../src/query/dates.js';
import {
  startServer,
  startServerOnFreshDatabase,
  type FreshServer,
  type ServerProcess,
} from '../helpers/processes.js';
import { Client } from '../helpers/web-client.js';
import { createKey, rssMb, signUpWithOrders, watchingHealth } from '../helpers/watched-server.js';

const order = (id: string, created_at: string, total: string) =>
  JSON.stringify({
    store: 'https://loin.example',
    id,
    created_at,
    status: 'completed',
    items: 1,
    total,
    customer_email: `c${id}@example.com`,
  });
const ORDERS = [
  order('a', '0001-01-01T01:00:00Z', '10.00'), // year 1 UTC, year 0 in America/New_York
  order('b', '0001-01-08T05:00:00Z', '20.00'),
  order('c', '2026-03-01T12:00:00Z', '5.00'),
  order('d', '9998-06-01T12:00:00Z', '30.00'),
  order('e', '9999-12-31T20:00:00Z', '40.00'), // year 10000 in Asia/Tokyo
];

/**
 * from=0001-01-01&to=9999-12-31 is moved up to 9998-01-01 (P4): the buckets of that period, the
 * first and last, and the buckets of orders d and e (G2).
 */
const FAR: Record<Granularity, { count: number; first: string; last: string; d: string; e: string }> = {
  day: { count: 730, first: '9998-01-01', last: '9999-12-31', d: '9998-06-01', e: '9999-12-31' },
  week: { count: 105, first: '9997-12-29', last: '9999-12-27', d: '9998-06-01', e: '9999-12-27' },
  month: { count: 24, first: '9998-01-01', last: '9999-12-01', d: '9998-06-01', e: '9999-12-01' },
  quarter: { count: 8, first: '9998-01-01', last: '9999-10-01', d: '9998-04-01', e: '9999-10-01' },
  year: { count: 2, first: '9998-01-01', last: '9999-01-01', d: '9998-01-01', e: '9999-01-01' },
};

describe('finding 1: far dates', () => {
  let fresh: FreshServer;
  before(async () => {
    fresh = await startServerOnFreshDatabase();
    await signUpWithOrders(fresh.server.baseUrl, 'far@example.com', ORDERS);
    await fresh.server.stop(); // the same database, served below with each engine and a bounded heap
  });
  after(async () => {
    await fresh?.stop();
  });

  for (const reportEngine of ['columnar', 'sql'] as const) {
    describe(`${reportEngine} report engine`, () => {
      let server: ServerProcess;
      let client: Client;
      let key = '';
      // A request of the old code never ends: each one gives up after 20 s.
      const get = (path: string, headers: Record<string, string> = {}) =>
        fetch(`${server.baseUrl}${path}`, {
          headers: { cookie: client.cookieHeader, ...headers },
          signal: AbortSignal.timeout(20_000),
        });
      const api = (query: string) =>
        fetch(`${server.baseUrl}/api/reports/tabular?${query}`, {
          headers: { authorization: `Bearer ${key}` },
          signal: AbortSignal.timeout(20_000),
        });

      before(async () => {
        // A bounded heap: a request that allocates without end kills the server in seconds.
        server = await startServer({
          ...fresh.env,
          NODE_OPTIONS: '--max-old-space-size=384',
          RATE_LIMIT_MAX: '100000',
          REPORT_ENGINE: reportEngine,
        });
        client = new Client(server.baseUrl);
        assert.equal((await client.login('far@example.com')).status, 303);
        key = await createKey(client);
      });
      after(async () => {
        await server?.stop();
      });

      test('the Revenue page and its CSV, from=0001-01-01 to=9999-12-31, each granularity: every bucket of the capped period, once; /healthz keeps answering; memory stays flat', async () => {
        const rssBefore = rssMb(server.pid);
        const { latencies, failed, held } = await watchingHealth(server.baseUrl, server.pid, async () => {
          for (const granularity of GRANULARITIES) {
            const expected = FAR[granularity];
            const query = `from=0001-01-01&to=9999-12-31&granularity=${granularity}`;
            const page = await get(`/reports/revenue?${query}`);
            assert.equal(page.status, 200, granularity);
            const html = await page.text();
            assert.ok(html.length < 2_000_000, `${granularity}: ${html.length} characters`);
            const dates = [...html.matchAll(/<tr data-date="([^"]+)"/g)].map((m) => m[1]);
            assert.equal(dates.length, expected.count, granularity);
            assert.equal(new Set(dates).size, dates.length, `${granularity}: no bucket twice`);
            assert.deepEqual([dates[0], dates.at(-1)], [expected.first, expected.last], granularity);
            assert.match(html, /id="from"[^>]*value="01\/01\/9998"/, 'P4: the page shows the period used');
            const totals =
              /<tr id="revenue-totals">[^]*?<td [^>]*data-col="orders"[^>]*><span class="cell">(\d+)<\/span>/.exec(
                html,
              )?.[1];
            assert.equal(totals, '2', `${granularity}: orders d and e, counted once (T1)`);

            const csv = await get(`/reports/revenue.csv?${query}`);
            assert.equal(csv.status, 200, granularity);
            const lines = (await csv.text()).trimEnd().split('\r\n');
            assert.equal(lines.length, expected.count + 2, `${granularity}: header, buckets, total`);
            assert.equal(lines[1]?.split(',')[0], expected.first);
            assert.equal(
              lines.find((l) => l.startsWith(`${expected.e},`)),
              `${expected.e},1,40.00,0.00,0.00,0.00,0.00,40.00`,
            );
            assert.equal(lines.at(-1), 'total,2,70.00,0.00,0.00,0.00,0.00,70.00');
          }
          // The request of the finding, as it was sent.
          const finding = await get('/reports/revenue?from=2026-11-01&to=9999-12-31');
          assert.equal(finding.status, 200);
          assert.equal([...(await finding.text()).matchAll(/<tr data-date=/g)].length, 730);
        });
        assert.equal(failed, 0, '/healthz answered every probe');
        assert.deepEqual(held, [], '/healthz within 100 ms while the server ran');
        assert.ok(Math.max(...latencies) < 2_000, `/healthz at most ${Math.max(...latencies).toFixed(0)} ms`);
        const growth = rssMb(server.pid) - rssBefore;
        assert.ok(growth < 150, `RSS grew by ${growth.toFixed(0)} MB`);
      });

      test('year 1 on the Revenue page: week buckets from Monday 0001-01-01, labels of year 1 (not 1901)', async () => {
        const page = await get('/reports/revenue?from=0001-01-01&to=0001-01-14&granularity=week');
        assert.equal(page.status, 200);
        const html = await page.text();
        assert.deepEqual(
          [...html.matchAll(/<tr data-date="([^"]+)"/g)].map((m) => m[1]),
          ['0001-01-01', '0001-01-08'],
        );
        assert.doesNotMatch(html, /1901/, 'the chart reads year 1 as year 1');
        const csv = await (
          await get('/reports/revenue.csv?from=0001-01-01&to=0001-01-14&granularity=month')
        ).text();
        assert.equal(
          csv,
          `${'date,orders,gross_sales,refunds,taxes,shipping,fees,net_revenue'}\r\n0001-01-01,2,30.00,0.00,0.00,0.00,0.00,30.00\r\ntotal,2,30.00,0.00,0.00,0.00,0.00,30.00\r\n`,
        );
        // Days outside P3's years are a 400 next to the field, not a computation.
        for (const bad of ['to=10000-01-01', 'from=0000-12-31&to=0001-01-01', 'to=+09999-12-31']) {
          assert.equal((await get(`/reports/revenue?${bad}`)).status, 400, bad);
          assert.equal((await get(`/reports/revenue.csv?${bad}`)).status, 400, bad);
        }
      });

      test('the API at the edges: every granularity with date values (T2), the largest offset, year 1 weeks, CSV', async () => {
        for (const granularity of GRANULARITIES) {
          const expected = FAR[granularity];
          const response = await api(
            `metrics=orders,gross_sales&dimensions=date&from=0001-01-01&to=9999-12-31&granularity=${granularity}`,
          );
          assert.equal(response.status, 200, granularity);
          const body = (await response.json()) as { from: string; rows: unknown[] };
          assert.equal(body.from, '9998-01-01', 'P4');
          assert.deepEqual(
            body.rows,
            [
              { date: expected.d, orders: 1, gross_sales: 30 },
              { date: expected.e, orders: 1, gross_sales: 40 },
            ],
            granularity,
          );
          const csv = await api(
            `metrics=orders&dimensions=date&from=0001-01-01&to=9999-12-31&granularity=${granularity}&format=csv`,
          );
          assert.equal(await csv.text(), `date,orders\r\n${expected.d},1\r\n${expected.e},1\r\n`);
        }
        const week1 = await api(
          'metrics=orders&dimensions=date&from=0001-01-01&to=0001-01-14&granularity=week',
        );
        assert.deepEqual(((await week1.json()) as { rows: unknown[] }).rows, [
          { date: '0001-01-01', orders: 1 },
          { date: '0001-01-08', orders: 1 },
        ]);
        // O1's largest offset, on the widest rows and the largest limit: an empty page at once.
        const deepest = await api(
          'metrics=orders,unique_customers&dimensions=date,store,country,customer_type,status&from=0001-01-01&to=9999-12-31&offset=10000000&limit=100000&granularity=week',
        );
        assert.equal(deepest.status, 200);
        assert.deepEqual(((await deepest.json()) as { rows: unknown[] }).rows, []);
        const past = await api('metrics=orders&offset=10000001&to=9999-12-31');
        assert.equal(past.status, 400);
        assert.equal(((await past.json()) as { code: string }).code, 'INVALID_PARAMETER');
        for (const bad of ['to=10000-01-01', 'from=0000-12-31', 'to=9999-12-32', 'from=-0001-01-01']) {
          const response = await api(`metrics=orders&${bad}`);
          assert.equal(response.status, 400, bad);
          assert.match(((await response.json()) as { error: string }).error, /Paramètre (from|to) invalide/);
        }
      });

      test('the API in a zone whose local day leaves years 1–9999 at the edge: a 400 naming timezone, not a date PostgreSQL writes wrong', async () => {
        for (const [query, edge] of [
          ['from=9999-12-01&to=9999-12-31&timezone=Asia/Tokyo', '9999-12-31'],
          ['from=0001-01-01&to=0001-01-31&timezone=America/New_York', '0001-01-01'],
        ] as const) {
          const orders = edge === '0001-01-01' ? 2 : 1; // a and b, or e
          for (const granularity of GRANULARITIES) {
            const response = await api(`metrics=orders&dimensions=date&${query}&granularity=${granularity}`);
            assert.equal(response.status, 400, `${query} ${granularity}`);
            const body = (await response.json()) as { error: string; code: string };
            assert.equal(body.code, 'INVALID_PARAMETER');
            assert.match(body.error, /^Paramètre timezone invalide/);
            assert.ok(body.error.includes(edge), body.error);
          }
          // Without the date dimension the zone changes nothing (T1): the totals, as in UTC.
          const totals = await api(`metrics=orders&${query}`);
          assert.equal(totals.status, 200);
          assert.deepEqual(((await totals.json()) as { rows: unknown[] }).rows, [{ orders }]);
        }
        // One day in from the edge, the same zones answer, with days of years 1–9999.
        const tokyo = await api(
          'metrics=orders&dimensions=date&from=9999-12-01&to=9999-12-30&timezone=Asia/Tokyo',
        );
        assert.deepEqual(((await tokyo.json()) as { rows: unknown[] }).rows, []);
        const newYork = await api(
          'metrics=orders&dimensions=date&from=0001-01-02&to=0001-01-31&timezone=America/New_York&granularity=week',
        );
        assert.deepEqual(((await newYork.json()) as { rows: unknown[] }).rows, [
          { date: '0001-01-08', orders: 1 },
        ]);
        const west = await api(
          'metrics=orders&dimensions=date&from=9999-12-01&to=9999-12-31&timezone=America/New_York',
        );
        assert.deepEqual(((await west.json()) as { rows: unknown[] }).rows, [
          { date: '9999-12-31', orders: 1 },
        ]);
      });
    });
  }
});
