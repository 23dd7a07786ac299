// Issue 18, "Also": the web pages' query parameters fuzzed as the API's are (test/integration/
// fuzz.test.ts): generated dates (every year from 0001 to 9999 and past both ends, impossible
// days, text), granularities and ids, on every page of a signed-in user, the Revenue page and its
// CSV first. Every answer is below 500 and bounded in size; meanwhile /healthz, probed over a
// real socket every 20 ms, never takes over 100 ms, and the process's memory stays flat: no
// request runs, allocates or holds the event loop in proportion to a number it chose (finding 1).
// Covers P3, P4, G2, E1 and PC1's `compare` (issue 20) on the pages.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServerOnFreshDatabase, type FreshServer } from '../helpers/processes.js';
import { percentile, rssMb, signUpWithOrders, watchingHealth } from '../helpers/watched-server.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);
/** The run stops generating after this long (CI's budget), whatever RUNS says. */
const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_MS ?? 40_000);
const HEALTH_BUDGET_MS = 100;
const MEMORY_BUDGET_MB = 150;

const order = (id: string, created_at: string, total: string) =>
  JSON.stringify({
    store: 'https://fuzz.example',
    id,
    created_at,
    status: 'completed',
    items: 1,
    total,
    customer_email: `c${id}@example.com`,
  });

/** A calendar day of years 0001–9999, as YYYY-MM-DD (toISOString keeps four digits there). */
const realDay = fc
  .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));
const day = fc.oneof(
  { weight: 4, arbitrary: realDay },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '0001-01-01',
      '0001-01-02',
      '0003-01-01',
      '9998-01-01',
      '9999-12-30',
      '9999-12-31',
      '10000-01-01',
      '0000-12-31',
      '9999-12-32',
      '2026-02-29',
      '2024-02-29',
      '2026-13-01',
      '-0001-01-01',
      '+002026-01-01',
      '99999-12-31',
      '2026-1-1',
      '',
    ),
  },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9-]{0,12}$/) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);
const granularity = fc.oneof(
  fc.constantFrom('day', 'week', 'month', 'quarter', 'year', '', 'DAY', 'weekly', 'décennie'),
  fc.string({ maxLength: 12 }),
);
/** PC1 on the page: its two modes, none, and what it refuses (custom, other text, markup). */
const compare = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom('previous_period', 'previous_year', '', 'custom', 'PREVIOUS_YEAR', '<b>x</b>'),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);
const id = fc.oneof(
  fc.uuid(),
  fc.constantFrom('0', '-1', '99999999999999999999999', '00000000-0000-0000-0000-000000000000', '..', '%00'),
  fc.string({ maxLength: 40 }),
);

/** Two real days in order: a period the page computes (P3), often wider than P4's cap. */
const period = fc
  .tuple(realDay, fc.oneof(realDay, fc.constantFrom('9999-12-31', '0001-01-01')))
  .map(([a, b]) => (a <= b ? { from: a, to: b } : { from: b, to: a }));
const validGranularity = fc.constantFrom('day', 'week', 'month', 'quarter', 'year');

/** A revenue query: some of from, to, granularity, sometimes one given twice or an unknown one. */
const revenueQuery = fc
  .oneof(
    fc.record(
      {
        from: day,
        to: day,
        granularity,
        compare,
        extra: fc.constantFrom('', '&x=1', '&from=2026-01-01', '&granularity=day', '&compare=previous_year'),
      },
      { requiredKeys: ['extra'] },
    ),
    fc
      .tuple(period, validGranularity, fc.option(fc.constantFrom('previous_period', 'previous_year')))
      .map(([p, g, c]) => ({ ...p, granularity: g, ...(c ? { compare: c } : {}), extra: '' })),
  )
  .map(({ extra, ...fields }) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) params.set(k, v);
    return `${params.toString()}${extra}`;
  });

const otherPage = fc.oneof(
  id.map((i) => `/settings/stores/imports/${encodeURIComponent(i)}`),
  id.map((i) => `/settings/api-keys/revoke?prefix=${encodeURIComponent(i)}`),
  id.map((i) => `/settings/api-keys?welcome=${encodeURIComponent(i)}&revoked=${encodeURIComponent(i)}`),
  id.map((i) => `/settings/report?saved=${encodeURIComponent(i)}`),
  day.map((d) => `/settings/stores?from=${encodeURIComponent(d)}`),
  fc.constantFrom('/settings/stores/connections', '/settings/subscription', '/settings/api-keys/new', '/'),
);

describe('fuzzing the web pages’ query parameters', () => {
  let fresh: FreshServer;
  let cookie = '';
  let requests = 0;
  const statuses = new Map<number, number>();

  before(async () => {
    // Its own process, with a bounded heap: a request that loops or allocates without end makes
    // the run fail (no answer, /healthz silent, the process dead) instead of hanging it.
    fresh = await startServerOnFreshDatabase({
      NODE_OPTIONS: '--max-old-space-size=384',
      RATE_LIMIT_MAX: '1000000000',
    });
    const client = await signUpWithOrders(fresh.server.baseUrl, 'fuzz@example.com', [
      order('1', '0001-01-01T01:00:00Z', '10.00'),
      order('2', '2026-03-01T12:00:00Z', '20.00'),
      order('3', '9999-12-31T20:00:00Z', '30.00'),
    ]);
    cookie = client.cookieHeader;
  });
  after(async () => {
    console.log(
      `# web fuzz: ${requests} requests, seed ${SEED}, statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    await fresh?.stop();
  });

  /** The answer to a signed-in GET: below 500, within 10 s, of a bounded size. */
  async function expectBoundedAnswer(url: string): Promise<void> {
    const response = await fetch(`${fresh.server.baseUrl}${url}`, {
      redirect: 'manual',
      headers: { cookie, accept: 'text/html' },
      signal: AbortSignal.timeout(10_000),
    });
    const body = await response.text();
    requests++;
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    assert.ok(response.status < 500, `${response.status} for ${url}: ${body.slice(0, 500)}`);
    // The largest page: 731 days of the two-year cap (P4), a row each.
    assert.ok(body.length < 1_500_000, `${body.length} characters for ${url}`);
    if (url.startsWith('/reports/revenue.csv') && response.status === 200) {
      const lines = body.trimEnd().split('\r\n');
      assert.ok(lines.length <= 733, `${lines.length} lines for ${url}`);
      assert.match(lines.at(-1) ?? '', /^total,/);
    } else if (url.startsWith('/reports/revenue?') && response.status === 200) {
      const rows = body.match(/<tr data-date=/g)?.length ?? 0;
      // Issue 30: a period without any order shows the empty state instead of rows of zeros.
      const empty = body.includes('id="empty-state"');
      assert.ok(empty ? rows === 0 : rows >= 1 && rows <= 731, `${rows} rows for ${url}`);
    }
  }

  test('generated dates, granularities and ids: answers below 500, bounded; /healthz within 100 ms; memory flat', async () => {
    const { server } = fresh;
    const rssBefore = rssMb(server.pid);
    const started = performance.now();
    const watch = await watchingHealth(
      server.baseUrl,
      server.pid,
      () =>
        fc.assert(
          fc.asyncProperty(
            fc.oneof(
              { weight: 3, arbitrary: revenueQuery.map((q) => `/reports/revenue?${q}`) },
              { weight: 2, arbitrary: revenueQuery.map((q) => `/reports/revenue.csv?${q}`) },
              { weight: 1, arbitrary: otherPage },
            ),
            expectBoundedAnswer,
          ),
          { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
        ),
      HEALTH_BUDGET_MS,
    );
    const growthMb = watch.peakRssMb - rssBefore;
    console.log(
      `# web fuzz: ${requests} requests in ${((performance.now() - started) / 1000).toFixed(1)} s; /healthz ${watch.latencies.length} probes, p50 ${percentile(watch.latencies, 50).toFixed(1)} ms, p99 ${percentile(watch.latencies, 99).toFixed(1)} ms, max ${Math.max(...watch.latencies).toFixed(1)} ms; server RSS ${rssBefore.toFixed(0)} MB, +${growthMb.toFixed(0)} MB at the peak; ${watch.held.length} probes over ${HEALTH_BUDGET_MS} ms beyond the time spent waiting for a CPU`,
    );
    assert.ok(requests >= 100, `only ${requests} requests in the time limit`);
    assert.equal(watch.failed, 0, 'every /healthz probe answered');
    assert.deepEqual(watch.held, [], `/healthz over ${HEALTH_BUDGET_MS} ms while the server was busy`);
    // Whatever the machine's load, a request that held the loop for a second would show here.
    assert.ok(
      Math.max(...watch.latencies) < 1_000,
      `/healthz took ${Math.max(...watch.latencies).toFixed(0)} ms`,
    );
    assert.ok(growthMb < MEMORY_BUDGET_MB, `RSS grew by ${growthMb.toFixed(0)} MB`);
  });
});
