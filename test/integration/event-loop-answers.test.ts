// Issue 26, item 6: no request holds the event loop more than 100 ms, the widest answers
// included. An organization whose report by date, store, country, customer type and status has
// about as many rows as orders (test/helpers/wide-orders.ts); its widest answer (ten metrics,
// limit=100000), with and without compare=previous_year, JSON and CSV, on the columnar engine and
// on the SQL engine, a new offset each time (no cache). The longest synchronous stretch is the
// main thread's CPU time between two turns of the event loop (Linux's schedstat), so a loaded
// CI machine's waits for a CPU are not counted; the server runs in this process, so its stretches
// are this thread's. Before the fix, the compared answers held it for 0.3–3 s.
// The web application's widest answers too (CI's web fuzz saw /healthz take 106–123 ms): the
// Revenue page over P4's 731 days by day compared with the year before, its CSV and its French CSV,
// for a signed-in member of the same organization. Before the fix the page held the loop for
// 0.11–0.18 s (its 731 rows of compared cells written in one piece); it is asserted under a
// tighter bound than the rule's, as it is written in 15 ms slices: a page that holds the loop for
// most of 100 ms fails the web fuzz's /healthz on a loaded machine.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addUserToOrganization } from '../../src/domain/users.js';
import { longestStretch } from '../helpers/event-loop-stretch.js';
import { startSqlEngineApp, startTestService, type TestService } from '../helpers/service.js';
import { Client, PASSWORD } from '../helpers/web-client.js';
import { wideOrders, WIDEST } from '../helpers/wide-orders.js';

const BOUND_MS = 100;
/** The web pages' bound: their tables and CSVs are written in 15 ms slices (see above). */
const PAGE_BOUND_MS = 60;
const WIDEST_PAGE = 'from=2024-01-01&to=2025-12-31&granularity=day&compare=previous_year';

describe('issue 26, item 6: the widest answers, compared or not, never hold the event loop past 100 ms', () => {
  let service: TestService;
  let sqlApp: Awaited<ReturnType<typeof startSqlEngineApp>> | undefined;
  let key = '';
  let offset = 0;
  let member: Client;

  before(async () => {
    service = await startTestService({ RATE_LIMIT_MAX: '100000', ANSWER_MEMORY_MB: '512' });
    const added = await service.addOrganization('Boucle', wideOrders(8_000));
    key = added.key;
    await addUserToOrganization(service.db, added.org.id, 'boucle@example.org', PASSWORD);
    member = new Client(service.baseUrl);
    assert.equal((await member.login('boucle@example.org')).status, 303);
    sqlApp = await startSqlEngineApp(service);
    // The columnar snapshot built before the figures (the first request waits for it).
    assert.equal((await service.get('/api/reports/tabular?metrics=orders', key)).status, 200);
  });
  after(async () => {
    await sqlApp?.close();
    await service?.cleanup();
  });

  for (const engine of ['columnar', 'sql'] as const)
    for (const compare of ['&compare=previous_year', ''])
      for (const format of ['json', 'csv'])
        test(`${engine}, ${compare ? 'compare=previous_year' : 'no comparison'}, ${format}`, async (t) => {
          const baseUrl = engine === 'columnar' ? service.baseUrl : (sqlApp?.baseUrl ?? '');
          const { result, longestMs, longestWallMs } = await longestStretch(async () => {
            const response = await fetch(
              `${baseUrl}/api/reports/tabular?${WIDEST}&format=${format}&offset=${offset++}${compare}`,
              { headers: { authorization: `Bearer ${key}` } },
            );
            return { status: response.status, bytes: (await response.arrayBuffer()).byteLength };
          });
          t.diagnostic(
            `${result.bytes} bytes, longest stretch ${longestMs.toFixed(0)} ms CPU, ${longestWallMs.toFixed(0)} ms wall`,
          );
          assert.equal(result.status, 200);
          assert.ok(result.bytes > 300_000, `a wide answer: ${result.bytes} bytes`);
          assert.ok(
            longestMs <= BOUND_MS,
            `longest stretch ${longestMs.toFixed(0)} ms of CPU (${longestWallMs.toFixed(0)} ms of wall time)`,
          );
        });

  for (const path of ['/reports/revenue', '/reports/revenue.csv', '/reports/revenue-excel.csv'])
    test(`web: ${path}, 731 days by day, compare=previous_year`, async (t) => {
      const { result, longestMs, longestWallMs } = await longestStretch(async () => {
        const response = await member.get(`${path}?${WIDEST_PAGE}`);
        return { status: response.status, text: await response.text() };
      });
      t.diagnostic(
        `${result.text.length} characters, longest stretch ${longestMs.toFixed(0)} ms CPU, ${longestWallMs.toFixed(0)} ms wall`,
      );
      assert.equal(result.status, 200);
      // The whole of it: 731 rows (and the total's), not a refusal or an empty state.
      const rows = path === '/reports/revenue' ? /<tr data-date=/g : /\r\n/g;
      assert.ok((result.text.match(rows)?.length ?? 0) >= 731, `731 rows: ${result.text.slice(0, 300)}`);
      assert.ok(
        longestMs <= PAGE_BOUND_MS,
        `longest stretch ${longestMs.toFixed(0)} ms of CPU (${longestWallMs.toFixed(0)} ms of wall time)`,
      );
    });
});
