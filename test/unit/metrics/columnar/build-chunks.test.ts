// Issue 28, item 3: on the embedded database a build reads in statements over ranges of pages, and
// each holds the one session for everyone: a statement that took long makes the next one shorter
// (a request waiting 5 s for a connection gets 503 DATABASE_UNAVAILABLE), one that took little
// lets it grow back, never past the chunk size asked for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextStep, STATEMENT_TARGET_MS } from '../../../../src/metrics/columnar/page-statements.js';

test('issue 28: the next statement’s pages are scaled to the last one’s time, within bounds', () => {
  assert.equal(STATEMENT_TARGET_MS, 1000);
  assert.equal(nextStep(1250, 4000, 1250), 312); // 4 s: a quarter of the pages
  assert.equal(nextStep(1250, 1000, 1250), 1250);
  assert.equal(nextStep(312, 250, 1250), 1248); // fast again: grows back…
  assert.equal(nextStep(1250, 10, 1250), 1250); // …never past the chunk size asked for
  assert.equal(nextStep(100, 60_000, 1250), 8); // at least 8 pages
  assert.equal(nextStep(2, 60_000, 2), 2); // or the chunk size, when smaller
  assert.equal(nextStep(1250, 0, 1250), 1250);
});
