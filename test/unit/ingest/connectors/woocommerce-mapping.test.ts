// Issue 11: a WooCommerce order resource as an import line (docs/connectors.md, "WooCommerce field by field").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cents,
  decimalText,
  orderLine,
  refundParts,
} from '../../../../src/ingest/connectors/woocommerce/mapping.js';

const order = (changes: Record<string, unknown> = {}) => ({
  id: 4242,
  status: 'completed',
  currency: 'EUR',
  date_created_gmt: '2026-03-01T22:30:00',
  date_created: '2026-03-01T23:30:00',
  billing: { country: 'FR', email: 'Marie@Example.fr' },
  line_items: [{ quantity: 2 }, { quantity: 3 }],
  total: '150.40',
  total_tax: '25.07',
  shipping_total: '8.00',
  shipping_tax: '1.60',
  fee_lines: [{ total: '2.50' }, { total: '1.00' }],
  refunds: [],
  ...changes,
});

/** The order's fields of section 12 (its lines, section 15, are woocommerce-lines.test.ts'). */
function lineOf(result: ReturnType<typeof orderLine>) {
  assert.ok('line' in result, JSON.stringify(result));
  const order: Record<string, unknown> = { ...result.line };
  delete order.lines;
  return order;
}

test('cents reads WooCommerce money exactly and rounds past two decimals half away from zero', () => {
  assert.equal(cents('29.35'), 2935n);
  assert.equal(cents('-10.00'), -1000n);
  assert.equal(cents('0'), 0n);
  assert.equal(cents(''), 0n);
  assert.equal(cents(12.5), 1250n);
  assert.equal(cents('1.005'), 101n);
  assert.equal(cents('-1.005'), -101n);
  assert.equal(cents('1.004'), 100n);
  assert.equal(cents('0.1'), 10n);
  assert.equal(cents('12,50'), undefined);
  assert.equal(cents('1e3'), undefined);
  assert.equal(cents(null), undefined);
  assert.equal(decimalText(-1000n), '-10.00');
  assert.equal(decimalText(5n), '0.05');
});

test('an order maps field by field: GMT creation, items summed, shipping without its tax, fees summed', () => {
  assert.deepEqual(lineOf(orderLine(order(), [], 'EUR')), {
    id: '4242',
    created_at: '2026-03-01T22:30:00Z',
    status: 'completed',
    billing_country: 'FR',
    customer_email: 'Marie@Example.fr',
    items: 5,
    total: '150.40',
    tax_total: '25.07',
    shipping_total: '8.00',
    fee_total: '3.50',
    refund_total: '0.00',
    refund_tax: '0.00',
    refund_shipping: '0.00',
  });
});

test('a negative fee is a discount already out of total: no fee deduction', () => {
  const line = lineOf(orderLine(order({ fee_lines: [{ total: '-5.00' }, { total: '2.00' }] }), [], 'EUR'));
  assert.equal(line.fee_total, '0.00');
});

test('refunds: amounts summed, tax of items, shipping and fees, shipping without its tax', () => {
  const refunds = [
    {
      id: 1,
      amount: '24.00',
      line_items: [{ total: '-10.00', total_tax: '-2.00' }],
      shipping_lines: [{ total: '-10.00', total_tax: '-2.00' }],
      fee_lines: [],
    },
    { id: 2, amount: '5.00', line_items: [], shipping_lines: [] },
  ];
  const line = lineOf(orderLine(order({ refunds: [{ id: 1 }, { id: 2 }] }), refunds, 'EUR'));
  assert.equal(line.refund_total, '29.00');
  assert.equal(line.refund_tax, '4.00');
  assert.equal(line.refund_shipping, '10.00');
});

test('refund parts beyond the refunded amount are cut so that tax + shipping ≤ total (SPEC 12)', () => {
  const parts = refundParts([
    {
      id: 1,
      amount: '3.00',
      shipping_lines: [{ total: '-2.50', total_tax: '-0.50' }],
      line_items: [{ total_tax: '-1.00' }],
    },
  ]);
  assert.deepEqual(parts, { total: 300n, tax: 50n, shipping: 250n });
  assert.equal(typeof refundParts([{ id: 9, amount: 'beaucoup' }]), 'string');
});

test('missing and odd values: empty country and email stay missing, another currency is refused', () => {
  const line = lineOf(orderLine(order({ billing: { country: '', email: '' } }), [], 'EUR'));
  assert.equal(line.billing_country, '');
  assert.equal(line.customer_email, '');
  const other = orderLine(order({ currency: 'USD' }), [], 'EUR');
  assert.ok('message' in other && other.message.includes('USD'));
  const noDate = orderLine(order({ date_created_gmt: null }), [], 'EUR');
  assert.ok('message' in noDate && noDate.message.includes('date_created_gmt'));
  const badQuantity = orderLine(order({ line_items: [{ quantity: 1.5 }] }), [], 'EUR');
  assert.ok('message' in badQuantity);
  const badTotal = orderLine(order({ total: 'abc' }), [], 'EUR');
  assert.ok('message' in badTotal);
});
