// Issue 21 item 1: a client-credentials token is replaced before it expires, with a margin that
// fits both Shopify's 24 h token and a short one (a request must still carry a valid token when
// it reaches a slow shop).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renewMarginMs } from '../../../src/ingest/connectors/shopify/token.js';

test('a 24 h token is renewed 30 minutes before it expires, an hour one 6 minutes before', () => {
  assert.equal(renewMarginMs(86_399_000), 1_800_000);
  assert.equal(renewMarginMs(3_600_000), 360_000);
});

test('a short token keeps at least a minute, or half its life when that is shorter', () => {
  assert.equal(renewMarginMs(10 * 60_000), 60_000);
  assert.equal(renewMarginMs(60_000), 30_000);
  assert.equal(renewMarginMs(2_000), 1_000);
  for (const life of [1_000, 5_000, 60_000, 3_600_000, 86_399_000]) {
    const margin = renewMarginMs(life);
    assert.ok(margin > 0 && margin <= life / 2, `${life} ms: ${margin} ms`);
  }
});
