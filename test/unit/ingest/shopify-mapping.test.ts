// Issue 21: a Shopify order as an import line, field by field (the README's "Shopify field by
// field" table), and a webhook delivery's signature. Pure functions, no shop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { orderLine } from '../../../src/ingest/connectors/shopify/mapping.js';
import { readWebhook } from '../../../src/ingest/connectors/shopify/shopify.js';

const money = (amount: string) => ({ shopMoney: { amount } });
const order = (changes: Record<string, unknown> = {}) => ({
  legacyResourceId: '5001',
  processedAt: '2025-03-01T23:30:00+01:00',
  cancelledAt: null,
  displayFinancialStatus: 'PARTIALLY_REFUNDED',
  test: false,
  email: 'a@example.com',
  currencyCode: 'EUR',
  taxesIncluded: true,
  billingAddress: { countryCodeV2: 'BE' },
  totalPriceSet: money('126.0'),
  totalTaxSet: money('21.0'),
  totalShippingPriceSet: money('6.0'),
  totalRefundedSet: money('30.5'),
  originalTotalDutiesSet: money('1.5'),
  originalTotalAdditionalFeesSet: null,
  lineItems: { nodes: [{ quantity: 2 }, { quantity: 3 }] },
  shippingLines: { nodes: [{ taxLines: [{ priceSet: money('1.0') }] }] },
  refunds: [
    {
      refundLineItems: { nodes: [{ totalTaxSet: money('4.0') }] },
      refundShippingLines: { nodes: [{ subtotalAmountSet: money('5.0'), taxAmountSet: money('1.0') }] },
    },
  ],
  ...changes,
});

test('an order field by field: processedAt in UTC, lower-case status, shipping without its tax, duties as fees, refund parts', () => {
  const mapped = orderLine(order(), 'EUR');
  assert.ok('line' in mapped);
  // Its lines (one per line item, section 15) are shopify-lines.test.ts's.
  const { lines, ...line } = mapped.line;
  assert.equal((lines as unknown[]).length, 2);
  assert.deepEqual(line, {
    id: '5001',
    created_at: '2025-03-01T22:30:00.000Z',
    status: 'partially_refunded',
    billing_country: 'BE',
    customer_email: 'a@example.com',
    items: 5,
    total: '126.00',
    tax_total: '21.00',
    shipping_total: '5.00',
    fee_total: '1.50',
    refund_total: '30.50',
    refund_tax: '5.00',
    refund_shipping: '5.00',
  });
});

test('cancelled, no financial status, taxes not included, no address or email', () => {
  const line = (changes: Record<string, unknown>) => {
    const mapped = orderLine(order(changes), 'EUR');
    assert.ok('line' in mapped, JSON.stringify(mapped));
    return mapped.line;
  };
  assert.equal(line({ cancelledAt: '2025-03-02T10:00:00Z' }).status, 'cancelled');
  assert.equal(line({ displayFinancialStatus: null }).status, 'pending');
  assert.equal(line({ displayFinancialStatus: 'VOIDED' }).status, 'voided');
  assert.equal(line({ taxesIncluded: false }).shipping_total, '6.00');
  const bare = line({ billingAddress: null, email: null, originalTotalDutiesSet: null });
  assert.deepEqual([bare.billing_country, bare.customer_email, bare.fee_total], [null, null, '0.00']);
});

test('refund parts are capped: shipping ≤ refund_total, tax ≤ what is left', () => {
  const mapped = orderLine(order({ totalRefundedSet: money('5.5') }), 'EUR');
  assert.ok('line' in mapped);
  assert.equal(mapped.line.refund_shipping, '5.00');
  assert.equal(mapped.line.refund_tax, '0.50');
});

test('a test order is never imported; another currency or an unreadable amount is reported', () => {
  assert.deepEqual(orderLine(order({ test: true }), 'EUR'), { gone: true });
  const usd = orderLine(order({ currencyCode: 'USD' }), 'EUR');
  assert.ok('message' in usd && /devise USD/.test(usd.message));
  const bad = orderLine(order({ totalPriceSet: money('douze') }), 'EUR');
  assert.ok('message' in bad && /montant illisible/.test(bad.message));
});

test('webhooks: X-Shopify-Hmac-Sha256 of the raw body checked; the order and the delivery named', () => {
  const body = Buffer.from(JSON.stringify({ id: 820982911946154500 }));
  const hmac = crypto.createHmac('sha256', 'secret').update(body).digest('base64');
  const headers = {
    'x-shopify-hmac-sha256': hmac,
    'x-shopify-topic': 'orders/updated',
    'x-shopify-webhook-id': 'w1',
  };
  assert.deepEqual(readWebhook(headers, body, 'secret'), {
    kind: 'order',
    id: '820982911946154500',
    deliveryId: 'w1',
  });
  assert.equal(readWebhook(headers, body, 'autre').kind, 'refused');
  assert.equal(
    readWebhook({ ...headers, 'x-shopify-hmac-sha256': undefined }, body, 'secret').kind,
    'refused',
  );
  assert.equal(
    readWebhook({ ...headers, 'x-shopify-topic': 'products/update' }, body, 'secret').kind,
    'ignored',
  );
});
