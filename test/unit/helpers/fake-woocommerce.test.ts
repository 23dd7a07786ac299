// The stand-in WooCommerce store (test/helpers/fake-woocommerce.ts), checked through real HTTPS
// requests: what the connector's tests will rely on must hold here first.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  FakeWooCommerce,
  type FakeOrder,
  type FakeRefund,
  type FakeWooCommerceOptions,
} from '../../helpers/fake-woocommerce.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function call(
  fake: FakeWooCommerce,
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
) {
  const url = path.startsWith('http') ? path : `${fake.url}${path}`;
  return new Promise<Answer>((resolve, reject) => {
    const lib = url.startsWith('https:') ? https : http;
    const req = lib.request(
      url,
      { method: init.method ?? 'GET', headers: init.headers, ca: fake.ca || undefined, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const basic = (fake: FakeWooCommerce) => ({
  authorization: `Basic ${Buffer.from(`${fake.consumerKey}:${fake.consumerSecret}`).toString('base64')}`,
});
const get = (fake: FakeWooCommerce, path: string) => call(fake, path, { headers: basic(fake) });
const cents = (s: string) => Math.round(Number(s) * 100);

function links(header: string | string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of String(header ?? '').matchAll(/<([^>]+)>;\s*rel="([^"]+)"/g))
    out[m[2] as string] = m[1] as string;
  return out;
}

const certificate = await FakeWooCommerce.generateCertificate();
const started: FakeWooCommerce[] = [];
async function start(options: FakeWooCommerceOptions = {}): Promise<FakeWooCommerce> {
  const fake = await FakeWooCommerce.start({ certificate, ...options });
  started.push(fake);
  return fake;
}
after(async () => {
  await Promise.all(started.map((f) => f.close()));
});

test('walking the pages by their Link headers returns every order but the trashed ones, once', async () => {
  const fake = await start();
  fake.addOrders(57, 3);
  const expected = fake.allOrders().map((o) => o.id);
  assert.ok(
    fake.allOrders({ includeTrash: true }).length > expected.length,
    'the generated orders include trashed ones',
  );

  const seen: number[] = [];
  let next: string | undefined = '/wp-json/wc/v3/orders?per_page=10&orderby=id&order=asc';
  let pages = 0;
  while (next) {
    const res = await get(fake, next);
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-wp-total'], String(expected.length));
    assert.equal(res.headers['x-wp-totalpages'], String(Math.ceil(expected.length / 10)));
    const body = JSON.parse(res.body) as FakeOrder[];
    seen.push(...body.map((o) => o.id));
    const rel = links(res.headers.link);
    if (pages > 0)
      assert.ok(rel.prev?.includes(`page=${pages}`), `page ${pages + 1} links back to page ${pages}`);
    next = rel.next;
    pages++;
  }
  assert.equal(pages, Math.ceil(expected.length / 10));
  assert.deepEqual(seen, expected);

  // Past the last page: an empty list, not an error (WC_REST_CRUD_Controller::get_items).
  const past = await get(fake, `/wp-json/wc/v3/orders?per_page=10&page=${pages + 1}`);
  assert.equal(past.status, 200);
  assert.equal(past.body, '[]');
  assert.equal(past.headers['x-wp-total'], String(expected.length));

  // Default order: newest first by date_created.
  const first = JSON.parse((await get(fake, '/wp-json/wc/v3/orders')).body) as FakeOrder[];
  assert.equal(first.length, 10);
  const dates = first.map((o) => o.date_created_gmt);
  assert.deepEqual(dates, [...dates].sort().reverse());
});

test('parameters are validated before the credentials are looked at: per_page 101 is a 400', async () => {
  const fake = await start();
  for (const headers of [{}, basic(fake)]) {
    const res = await call(fake, '/wp-json/wc/v3/orders?per_page=101', { headers });
    assert.equal(res.status, 400);
    const body = JSON.parse(res.body) as { code: string; data: { params: Record<string, string> } };
    assert.equal(body.code, 'rest_invalid_param');
    assert.equal(body.data.params.per_page, 'per_page must be between 1 (inclusive) and 100 (inclusive)');
  }
  const badStatus = await get(fake, '/wp-json/wc/v3/orders?status=done');
  assert.equal(badStatus.status, 400);
  assert.match(badStatus.body, /status\[0\] is not one of any, trash, pending/);
  assert.equal((await get(fake, '/wp-json/wc/v3/orders?modified_after=yesterday')).status, 400);
});

test('wrong or missing keys get WooCommerce 401 JSON errors', async () => {
  const fake = await start();
  const json = async (headers: Record<string, string>, path = '/wp-json/wc/v3/orders') => {
    const res = await call(fake, path, { headers });
    assert.equal(res.status, 401);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    return JSON.parse(res.body) as { code: string; message: string; data: { status: number } };
  };
  const auth = (k: string, s: string) => ({
    authorization: `Basic ${Buffer.from(`${k}:${s}`).toString('base64')}`,
  });

  assert.deepEqual(await json(auth(fake.consumerKey, 'cs_wrong')), {
    code: 'woocommerce_rest_authentication_error',
    message: 'Consumer secret is invalid.',
    data: { status: 401 },
  });
  // An unknown key is no error of its own in WooCommerce: the request is just not authenticated.
  assert.equal((await json(auth('ck_unknown', fake.consumerSecret))).code, 'woocommerce_rest_cannot_view');
  assert.deepEqual(await json({}), {
    code: 'woocommerce_rest_cannot_view',
    message: 'Sorry, you cannot list resources.',
    data: { status: 401 },
  });
  assert.equal((await json({}, '/wp-json/wc/v3/orders/1')).message, 'Sorry, you cannot view this resource.');

  // Revoked keys stop working.
  const old = basic(fake);
  assert.equal((await call(fake, '/wp-json/wc/v3/orders', { headers: old })).status, 200);
  fake.setKeys();
  assert.equal((await json(old)).code, 'woocommerce_rest_cannot_view');
  assert.equal((await get(fake, '/wp-json/wc/v3/orders')).status, 200);
});

test('query-string credentials work and are recorded as such, secret included', async () => {
  const fake = await start();
  const order = fake.addOrder();
  const q = `consumer_key=${fake.consumerKey}&consumer_secret=${fake.consumerSecret}`;
  const res = await call(fake, `/wp-json/wc/v3/orders/${order.id}?${q}`);
  assert.equal(res.status, 200);
  assert.equal((JSON.parse(res.body) as FakeOrder).id, order.id);
  await get(fake, `/wp-json/wc/v3/orders/${order.id}`);
  const [byQuery, byBasic] = fake.requests;
  assert.equal(byQuery?.auth, 'query');
  assert.equal(byQuery?.authenticated, true);
  assert.equal(
    byQuery?.query.consumer_secret,
    fake.consumerSecret,
    'recorded as sent, so tests can catch secrets in URLs',
  );
  assert.equal(byBasic?.auth, 'basic');
  assert.equal(byBasic?.route, `/wc/v3/orders/${order.id}`);
});

test('modified_after: zone-less values are GMT with dates_are_gmt=true, site time without it', async () => {
  const fake = await start({ timezoneOffsetMinutes: 60, now: new Date('2026-03-01T12:00:00Z') });
  const a = fake.addOrder({ dateCreatedGmt: new Date('2026-03-01T09:00:00Z') });
  const b = fake.addOrder({ dateCreatedGmt: new Date('2026-03-01T09:00:00Z') });
  assert.equal(a.date_created, '2026-03-01T10:00:00', 'non-GMT dates are in the site time (UTC+1)');
  assert.equal(a.date_created_gmt, '2026-03-01T09:00:00');
  fake.setNow(new Date('2026-03-01T12:30:00Z'));
  const updated = fake.updateOrder(b.id, { status: 'refunded' });
  assert.equal(updated.date_modified_gmt, '2026-03-01T12:30:00');

  const ids = async (query: string) =>
    (JSON.parse((await get(fake, `/wp-json/wc/v3/orders?${query}`)).body) as FakeOrder[]).map((o) => o.id);
  assert.deepEqual(await ids('modified_after=2026-03-01T12:15:00&dates_are_gmt=true'), [b.id]);
  // 09:30: as GMT only b's change (12:30 GMT) is later; as site time a (10:00 there) is too.
  assert.deepEqual(await ids('modified_after=2026-03-01T09:30:00&dates_are_gmt=true'), [b.id]);
  assert.deepEqual((await ids('modified_after=2026-03-01T09:30:00')).sort(), [a.id, b.id].sort());
  assert.deepEqual(
    (await ids('modified_after=2026-03-01T09:30:00&dates_are_gmt=false')).sort(),
    [a.id, b.id].sort(),
  );
  // A value with a zone is turned into site time first, then compared with the GMT column: shifted.
  assert.deepEqual(await ids('modified_after=2026-03-01T11:45:00Z&dates_are_gmt=true'), []);
  assert.deepEqual(await ids('modified_after=2026-03-01T11:45:00Z'), [b.id]);
  assert.deepEqual((await ids('after=2026-03-01T08:59:59&dates_are_gmt=1')).sort(), [a.id, b.id].sort());
  assert.deepEqual(await ids('before=2026-03-01T09:00:00&dates_are_gmt=1'), [], 'bounds are exclusive');
});

test('status=trash lists trashed orders; a trashed order is still served, a deleted one is a 404', async () => {
  const fake = await start();
  const kept = fake.addOrder({ status: 'processing' });
  const trashed = fake.addOrder();
  const deleted = fake.addOrder();
  fake.trashOrder(trashed.id);
  fake.deleteOrder(deleted.id);
  const ids = async (query: string) =>
    (JSON.parse((await get(fake, `/wp-json/wc/v3/orders?${query}`)).body) as FakeOrder[])
      .map((o) => o.id)
      .sort();

  assert.deepEqual(await ids(''), [kept.id]);
  assert.deepEqual(await ids('status=trash'), [trashed.id]);
  assert.deepEqual(await ids('status[]=processing&status[]=trash'), [kept.id, trashed.id].sort());
  assert.deepEqual(await ids('status=processing,trash'), [kept.id, trashed.id].sort());
  assert.deepEqual(await ids('status=completed'), []);

  const one = await get(fake, `/wp-json/wc/v3/orders/${trashed.id}`);
  assert.equal(one.status, 200);
  assert.equal((JSON.parse(one.body) as FakeOrder).status, 'trash');
  const gone = await get(fake, `/wp-json/wc/v3/orders/${deleted.id}`);
  assert.equal(gone.status, 404);
  assert.deepEqual(JSON.parse(gone.body), {
    code: 'woocommerce_rest_shop_order_invalid_id',
    message: 'Invalid ID.',
    data: { status: 404 },
  });
});

test('refunds: positive amounts on the refunds route, negative lines, the order refunded once all is back', async () => {
  const fake = await start();
  const order = fake.addOrder({
    billingCountry: 'FR',
    lineItems: [
      { quantity: 2, total: '40.00', totalTax: '8.00' },
      { quantity: 1, total: '10.00', totalTax: '2.00' },
    ],
    shippingTotal: '5.00',
    shippingTax: '1.00',
  });
  assert.equal(order.total, '66.00');
  fake.advance(60_000);
  const first = fake.addRefund(order.id, {
    lineItems: [{ quantity: 1, total: 20, totalTax: 4 }],
    shipping: { total: 5, totalTax: 1 },
    reason: 'Broken',
  });
  assert.equal(first.amount, '30.00');
  const res = await get(fake, `/wp-json/wc/v3/orders/${order.id}/refunds`);
  assert.equal(res.status, 200);
  assert.equal(res.headers['x-wp-total'], '1');
  const [listed] = JSON.parse(res.body) as FakeRefund[];
  assert.equal(listed?.amount, '30.00');
  assert.equal(listed?.line_items[0]?.quantity, -1);
  assert.equal(listed?.line_items[0]?.total, '-20.00');
  assert.equal(listed?.line_items[0]?.total_tax, '-4.00');
  assert.equal(listed?.line_items[0]?.meta_data[0]?.value, String(order.line_items[0]?.id));
  assert.equal(listed?.shipping_lines[0]?.total, '-5.00');

  const afterFirst = JSON.parse((await get(fake, `/wp-json/wc/v3/orders/${order.id}`)).body) as FakeOrder;
  assert.equal(afterFirst.status, 'completed');
  assert.deepEqual(afterFirst.refunds, [{ id: first.id, reason: 'Broken', total: '-30.00' }]);
  assert.ok(afterFirst.date_modified_gmt > order.date_modified_gmt, 'a refund moves date_modified');
  assert.equal(afterFirst.total, '66.00', 'the order keeps its totals');

  assert.throws(() => fake.addRefund(order.id, { amount: '36.01' }), /Invalid refund amount/);
  const second = fake.addRefund(order.id, { amount: '36.00' });
  const done = fake.order(order.id);
  assert.equal(done?.status, 'refunded');
  assert.deepEqual(
    done?.refunds.map((r) => r.id),
    [second.id, first.id],
    'newest first',
  );
  assert.equal((await get(fake, `/wp-json/wc/v3/orders/${order.id}/refunds/${second.id}`)).status, 200);
});

test('failNext answers the next requests with the fault, Retry-After included, then recovers', async () => {
  const fake = await start();
  fake.failNext(2, 429, { retryAfterSeconds: 7 });
  for (let i = 0; i < 2; i++) {
    const res = await get(fake, '/wp-json/wc/v3/orders');
    assert.equal(res.status, 429);
    assert.equal(res.headers['retry-after'], '7');
  }
  fake.failNext(1, 503, { body: '{"code":"busy"}' });
  const busy = await get(fake, '/wp-json/wc/v3/orders');
  assert.equal(busy.status, 503);
  assert.match(String(busy.headers['content-type']), /json/);
  assert.equal((await get(fake, '/wp-json/wc/v3/orders')).status, 200);
  assert.deepEqual(
    fake.requests.map((r) => r.fault),
    [429, 429, 503, undefined],
  );

  fake.failPages((info) => (info.route === '/wc/v3/orders' && info.page === 2 ? 500 : null));
  assert.equal((await get(fake, '/wp-json/wc/v3/orders?page=2')).status, 500);
  assert.equal((await get(fake, '/wp-json/wc/v3/orders?page=1')).status, 200);
  fake.failPages(null);
});

test('goDown refuses connections until comeBack, on the same port', async () => {
  const fake = await start();
  const port = fake.port;
  await fake.goDown();
  await assert.rejects(get(fake, '/wp-json/'), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
  await fake.comeBack();
  assert.equal(fake.port, port);
  assert.equal((await get(fake, '/wp-json/')).status, 200);

  await fake.goDown('reset');
  await assert.rejects(get(fake, '/wp-json/'));
  await fake.comeBack();
  assert.equal((await get(fake, '/wp-json/')).status, 200);
});

test('writes are recorded and refused; concurrency is measured', async () => {
  const fake = await start();
  fake.slowDown(30);
  await Promise.all([get(fake, '/wp-json/wc/v3/orders'), get(fake, '/wp-json/wc/v3/orders')]);
  assert.equal(fake.maxConcurrentRequests, 2);
  fake.slowDown(0);
  fake.resetRecording();

  const write = await call(fake, '/wp-json/wc/v3/orders/1', { method: 'PUT', headers: basic(fake) });
  assert.equal(write.status, 401);
  assert.equal(JSON.parse(write.body).message, 'The API key provided does not have write permissions.');
  const anonymous = await call(fake, '/wp-json/wc/v3/orders', { method: 'POST' });
  assert.equal(JSON.parse(anonymous.body).code, 'woocommerce_rest_cannot_create');
  assert.deepEqual(
    fake.requests.map((r) => r.method),
    ['PUT', 'POST'],
  );
  assert.equal(fake.maxConcurrentRequests, 1);
});

test('the site: REST index, namespace index, unknown routes, a sub-path, no REST API', async () => {
  const fake = await start({ sitePath: '/shop', tls: false });
  assert.match(fake.url, /^http:\/\/127\.0\.0\.1:\d+\/shop$/);
  const index = await call(fake, '/wp-json/');
  assert.equal(index.status, 200);
  assert.ok((JSON.parse(index.body) as { namespaces: string[] }).namespaces.includes('wc/v3'));
  assert.match(index.body, /"home":"http:\\\/\\\/127\.0\.0\.1:\d+\\\/shop"/, 'slashes escaped as PHP does');
  assert.equal(JSON.parse((await call(fake, '/wp-json/wc/v3')).body).namespace, 'wc/v3');
  const noRoute = await call(fake, '/wp-json/wc/v3/coupons');
  assert.equal(noRoute.status, 404);
  assert.equal(JSON.parse(noRoute.body).code, 'rest_no_route');
  const outside = await call(fake, `${fake.url.replace('/shop', '')}/wp-json/`);
  assert.equal(outside.status, 404);
  assert.match(String(outside.headers['content-type']), /^text\/html/);

  const plain = await start({ tls: false, restApi: false });
  const res = await call(plain, '/wp-json/wc/v3/orders');
  assert.equal(res.status, 404);
  assert.match(String(res.headers['content-type']), /^text\/html/);
});

test('webhooks are signed like WooCommerce: base64 HMAC-SHA256 of the raw body', async () => {
  const fake = await start();
  const order = fake.addOrder({ billing: { first_name: 'Zoë' } });
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const target = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/hooks/woo`;
  try {
    const secret = 'a secret & more';
    const result = await fake.deliver(targetUrl, 'order.updated', order.id, secret);
    assert.equal(result.status, 200);
    const [hook] = received;
    assert.ok(hook);
    const expected = crypto.createHmac('sha256', secret).update(hook.body).digest('base64');
    assert.equal(hook.headers['x-wc-webhook-signature'], expected);
    assert.equal(hook.headers['x-wc-webhook-topic'], 'order.updated');
    assert.equal(hook.headers['x-wc-webhook-resource'], 'order');
    assert.equal(hook.headers['x-wc-webhook-event'], 'updated');
    assert.equal(hook.headers['x-wc-webhook-source'], `${fake.url}/`);
    assert.match(String(hook.headers['x-wc-webhook-delivery-id']), /^[0-9a-f]{32}$/);
    assert.match(String(hook.headers['user-agent']), /^WooCommerce\/[\d.]+ Hookshot \(WordPress\/[\d.]+\)$/);
    assert.match(hook.body, /Zo\\u00eb/, 'non-ASCII escaped as PHP json_encode does');
    assert.equal((JSON.parse(hook.body) as FakeOrder).id, order.id);

    await fake.deliver(targetUrl, 'order.deleted', order.id, secret);
    assert.equal(received[1]?.body, `{"id":${order.id}}`);
    await fake.deliver(targetUrl, 'order.created', order.id, secret, { signature: 'forged' });
    assert.equal(received[2]?.headers['x-wc-webhook-signature'], 'forged');
    await fake.deliver(targetUrl, 'order.created', order.id, secret, { omitSignature: true });
    assert.equal(received[3]?.headers['x-wc-webhook-signature'], undefined);

    await fake.deliverPing(targetUrl, 12);
    assert.equal(received[4]?.body, 'webhook_id=12');
    assert.equal(received[4]?.headers['x-wc-webhook-topic'], undefined);
  } finally {
    await new Promise<void>((resolve) => target.close(() => resolve()));
  }
});

test('generated orders add up to the cent: total = lines + fees + shipping + taxes', async () => {
  const fake = await start();
  const orders = fake.addOrders(300, 11);
  const statuses = new Set(orders.map((o) => o.status));
  for (const s of ['completed', 'processing', 'refunded', 'trash', 'shipped', 'checkout-draft'])
    assert.ok(statuses.has(s), s);
  assert.ok(orders.some((o) => o.billing.email === ''));
  assert.ok(orders.some((o) => o.billing.country === ''));
  assert.ok(orders.some((o) => o.fee_lines.some((f) => cents(f.total) < 0)));
  for (const o of orders) {
    const sum = (list: { total: string }[]) => list.reduce((s, x) => s + cents(x.total), 0);
    const taxSum = (list: { total_tax: string }[]) => list.reduce((s, x) => s + cents(x.total_tax), 0);
    const cartTax = taxSum(o.line_items) + taxSum(o.fee_lines);
    assert.equal(cents(o.cart_tax), cartTax, `order ${o.id} cart_tax`);
    assert.equal(cents(o.shipping_total), sum(o.shipping_lines), `order ${o.id} shipping_total`);
    assert.equal(cents(o.shipping_tax), taxSum(o.shipping_lines), `order ${o.id} shipping_tax`);
    assert.equal(cents(o.total_tax), cartTax + cents(o.shipping_tax), `order ${o.id} total_tax`);
    assert.equal(
      cents(o.total),
      sum(o.line_items) + sum(o.fee_lines) + cents(o.shipping_total) + cartTax + cents(o.shipping_tax),
      `order ${o.id} total`,
    );
    assert.match(o.total, /^-?\d+\.\d{2}$/);
    const refunded = o.refunds.reduce((s, r) => s - cents(r.total), 0);
    assert.ok(refunded <= cents(o.total), `order ${o.id} refunded no more than its total`);
    if (o.status === 'refunded') assert.equal(refunded, cents(o.total), `order ${o.id} fully refunded`);
  }
  // The same seed and clock give the same orders.
  const again = await start({ now: fake.now() });
  const copy = again.addOrders(300, 11);
  assert.deepEqual(
    copy.map((o) => [o.status, o.total, o.date_created_gmt, o.billing.email]),
    orders.map((o) => [o.status, o.total, o.date_created_gmt, o.billing.email]),
  );
});
