// Issue 29, item 2: a client that goes away stops its answer's serialization too, not only its
// computation. The engine builds the rows of a large answer as they are serialized (runInPieces),
// so serializing is most of the work: it went on to the end, for no one, in the turns that other
// organizations' requests waited for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  runTabularReport,
  type AnswerCache,
  type TabularAnswer,
} from '../../../src/domain/tabular-report.js';
import type { Organization } from '../../../src/domain/organizations.js';
import type { ReportEngine, ReportRow, RowSequence } from '../../../src/metrics/engine.js';
import { parseTabularQuery } from '../../../src/query/parse.js';

const organization: Organization = {
  id: '7',
  slug: 'acme',
  name: 'Acme',
  currency: 'EUR',
  subscriptionState: 'active',
  trialEndsOn: null,
  settings: { excludedStatuses: [], deductions: [] },
};
const query = parseTabularQuery(
  { metrics: 'orders', dimensions: 'date', from: '2026-01-01', to: '2026-01-31' },
  { isTimeZone: () => true },
);

/** 100,000 rows built as they are read, the pieces read counted; `onSlice` runs before each. */
function lazyRows(onSlice: (read: number) => void): { rows: RowSequence; read: () => number } {
  let read = 0;
  const rows: RowSequence = {
    length: 100_000,
    slice(start, end) {
      onSlice(read++);
      return Array.from({ length: end - start }, (_, k): ReportRow => ({
        date: '2026-01-01',
        orders: start + k,
      }));
    },
  };
  return { rows, read: () => read };
}

function stores(): AnswerCache & { readonly kept: TabularAnswer[] } {
  const kept: TabularAnswer[] = [];
  return { kept, get: async () => undefined, set: async (_, answer) => void kept.push(answer) };
}

test('issue 29, item 2: a client gone during the serialization stops it; nothing is cached, the cancellation ends', async () => {
  const gone = new AbortController();
  const { rows, read } = lazyRows((n) => {
    if (n === 3) gone.abort(new Error('client gone'));
  });
  const engine: ReportEngine = {
    run: async () => ({ rows: [], truncated: false }),
    runInPieces: async () => ({ rows, truncated: false }),
  };
  const cache = stores();
  let done = 0;
  const cancellation = () => ({ signal: gone.signal, done: () => void done++ });
  await assert.rejects(
    runTabularReport({ engine, cache }, organization, query, 'json', cancellation),
    /client gone/,
  );
  assert.ok(read() <= 5, `${read()} pieces of 400 serialized after the client left at the 4th`);
  assert.equal(cache.kept.length, 0, 'an answer sent to no one is not cached');
  assert.equal(done, 1, 'the cancellation is ended once');
});

test('issue 29, item 2: a client that stays gets the whole answer, cached, the cancellation ended', async () => {
  const { rows, read } = lazyRows(() => undefined);
  const engine: ReportEngine = {
    run: async () => ({ rows: [], truncated: false }),
    runInPieces: async () => ({ rows, truncated: false }),
  };
  const cache = stores();
  let done = 0;
  const cancellation = () => ({ signal: new AbortController().signal, done: () => void done++ });
  const answer = await runTabularReport({ engine, cache }, organization, query, 'json', cancellation);
  assert.equal(read(), 400);
  assert.equal(JSON.parse(answer.body.toString('utf8')).rowCount, 100_000);
  assert.equal(cache.kept.length, 1);
  assert.equal(done, 1);
});
