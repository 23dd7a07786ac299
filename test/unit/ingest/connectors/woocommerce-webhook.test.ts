// Issue 11, item 3: WooCommerce deliveries authenticated by X-WC-Webhook-Signature.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { readWebhook } from '../../../../src/ingest/connectors/woocommerce/woocommerce.js';
import { retryAfterSeconds } from '../../../../src/ingest/connectors/polite-get.js';
import { failed, retryDelayS, sweepDue } from '../../../../src/ingest/connectors/sync.js';
import { AppError } from '../../../../src/errors.js';

const secret = 'le-secret-du-webhook';
const sign = (body: Buffer, key = secret) => crypto.createHmac('sha256', key).update(body).digest('base64');
const delivery = (topic: string, body: Buffer, signature = sign(body)) =>
  readWebhook({ 'x-wc-webhook-topic': topic, 'x-wc-webhook-signature': signature }, body, secret);

test('a signed order delivery names its order; the signature covers the exact bytes', () => {
  const body = Buffer.from('{"id":1234,"status":"completed"}');
  assert.deepEqual(delivery('order.updated', body), { kind: 'order', id: '1234' });
  assert.deepEqual(delivery('order.deleted', Buffer.from('{"id":77}')), { kind: 'order', id: '77' });
  const spaced = Buffer.from('{"id": 1234, "status":"completed"}');
  assert.equal(delivery('order.updated', spaced, sign(body)).kind, 'refused');
});

test('unsigned, wrongly signed or truncated signatures are refused', () => {
  const body = Buffer.from('{"id":1}');
  assert.equal(readWebhook({ 'x-wc-webhook-topic': 'order.created' }, body, secret).kind, 'refused');
  assert.equal(delivery('order.created', body, sign(body, 'autre')).kind, 'refused');
  assert.equal(delivery('order.created', body, sign(body).slice(0, 20)).kind, 'refused');
  assert.equal(delivery('order.created', body, 'not base64 at all !!').kind, 'refused');
});

test('other topics and bodies without an order id are acknowledged and ignored; the ping is answered', () => {
  assert.equal(delivery('product.updated', Buffer.from('{"id":5}')).kind, 'ignored');
  assert.equal(delivery('order.created', Buffer.from('{"id":"../../etc"}')).kind, 'ignored');
  assert.equal(delivery('order.created', Buffer.from('not json')).kind, 'ignored');
  assert.deepEqual(readWebhook({}, Buffer.from('webhook_id=12'), secret), { kind: 'ping' });
});

test('Retry-After in seconds or as a date; retry delays double up to an hour, never under Retry-After', () => {
  assert.equal(retryAfterSeconds('120'), 120);
  assert.equal(retryAfterSeconds(new Date(Date.now() + 30_000).toUTCString()), 30);
  assert.equal(retryAfterSeconds('soon'), undefined);
  assert.equal(retryAfterSeconds(undefined), undefined);
  for (let failures = 1; failures <= 12; failures++) {
    const delay = retryDelayS(failures, undefined);
    const bound = Math.min(3600, 60 * 2 ** (failures - 1));
    assert.ok(delay >= bound * 0.75 - 1 && delay <= bound * 1.25 + 1, `${failures}: ${delay}`);
  }
  assert.ok(retryDelayS(1, 900) >= 900);
});

test('a deletion sweep is due hourly for a small store, less often for a large one', () => {
  const now = Date.now();
  const ago = (hours: number) => new Date(now - hours * 3_600_000);
  assert.equal(sweepDue({ sweptAt: null, orders: 10 }, now), true);
  assert.equal(sweepDue({ sweptAt: ago(0.5), orders: 3_000 }, now), false);
  assert.equal(sweepDue({ sweptAt: ago(1.1), orders: 3_000 }, now), true);
  assert.equal(sweepDue({ sweptAt: ago(5), orders: 1_000_000 }, now), false);
  assert.equal(sweepDue({ sweptAt: ago(101), orders: 1_000_000 }, now), true);
  // At least daily, however large (issue 21).
  assert.equal(sweepDue({ sweptAt: ago(24.1), orders: 1_000_000 }, now), true);
});

test('our own database busy or unreachable during a pass: tried again in seconds, in the owner’s words, not an internal error', () => {
  for (const code of ['SERVICE_BUSY', 'DATABASE_UNAVAILABLE'] as const) {
    const outcome = failed({ failures: 0 }, new AppError(code, 'occupé', {}, { retryAfterS: 2 }), 60);
    assert.equal(outcome.ok, false);
    assert.match(outcome.ok ? '' : outcome.error, /Base de données occupée ou injoignable/);
    assert.ok(outcome.nextInS >= 2 && outcome.nextInS <= 10, `${outcome.nextInS} s`);
  }
  const internal = failed({ failures: 0 }, new TypeError('bug'), 60);
  assert.match(internal.ok ? '' : internal.error, /Erreur interne/);
  assert.ok(internal.nextInS >= 44, `${internal.nextInS} s`);
});
