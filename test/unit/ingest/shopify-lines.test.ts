// Issue 27 (SPEC L1): a Shopify order's lineItems and its refunds' refundLineItems as lines
// (src/ingest/connectors/shopify/lines.ts), taxes excluded also when the prices include them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { soldLines, withoutTax } from '../../../src/ingest/connectors/shopify/lines.js';
import { readWebhook } from '../../../src/ingest/connectors/shopify/shopify.js';
import crypto from 'node:crypto';

const money = (amount: string) => ({ shopMoney: { amount } });
const TEE = {
  id: 'gid://shopify/LineItem/101',
  quantity: 2,
  title: 'T-shirt',
  variantTitle: 'M',
  sku: 'TEE-M',
  product: { id: 'gid://shopify/Product/12', productType: 'Vêtements' },
  variant: { id: 'gid://shopify/ProductVariant/15' },
  originalTotalSet: money('48.0'),
  discountAllocations: [{ allocatedAmountSet: money('4.8') }],
  taxLines: [{ priceSet: money('7.2'), rate: 0.2 }],
};
const MUG = {
  id: 'gid://shopify/LineItem/102',
  quantity: 1,
  title: 'Mug',
  variantTitle: null,
  sku: '',
  product: { id: 'gid://shopify/Product/20', productType: '' },
  variant: { id: 'gid://shopify/ProductVariant/200' },
  originalTotalSet: money('12.0'),
  discountAllocations: [],
  taxLines: [{ priceSet: money('2.0'), rate: 0.2 }],
};
const CUSTOM = { ...MUG, id: 'gid://shopify/LineItem/103', title: 'Gravure', product: null, variant: null };

test('L1: taxes excluded, prices without taxes: original total and discount allocations as they are; a variant, a default variant, a custom line', () => {
  const lines = soldLines([TEE, MUG, CUSTOM], [], false);
  assert.deepEqual(lines, [
    {
      line_id: '101',
      product_id: '12',
      variant_id: '15',
      sku: 'TEE-M',
      product_name: 'T-shirt',
      variant_name: 'M',
      categories: ['Vêtements'],
      quantity: 2,
      subtotal: '48.00',
      discount: '4.80',
      refunded_quantity: 0,
      refunded_amount: '0.00',
    },
    {
      line_id: '102',
      product_id: '20',
      product_name: 'Mug',
      categories: [],
      quantity: 1,
      subtotal: '12.00',
      discount: '0.00',
      refunded_quantity: 0,
      refunded_amount: '0.00',
    },
    {
      line_id: '103',
      product_name: 'Gravure',
      categories: [],
      quantity: 1,
      subtotal: '12.00',
      discount: '0.00',
      refunded_quantity: 0,
      refunded_amount: '0.00',
    },
  ]);
});

test('L1: prices with taxes: the net paid less its tax is exact, the tax split in proportion; the refund less its tax', () => {
  // 48.00 − 4.80 = 43.20 paid, 7.20 of it tax: 36.00 net; 48 × 36 / 43.2 = 40.00 before discount.
  const refund = {
    refundLineItems: {
      nodes: [
        { quantity: 1, lineItem: { id: TEE.id }, subtotalSet: money('21.6'), totalTaxSet: money('3.6') },
      ],
    },
  };
  const [tee] = soldLines([TEE], [refund], true) as Record<string, unknown>[];
  assert.equal(tee!.subtotal, '40.00');
  assert.equal(tee!.discount, '4.00');
  assert.equal(tee!.refunded_quantity, 1);
  assert.equal(tee!.refunded_amount, '18.00');
  // Rounded half up, and exact in the net: 10.01 paid with 1.67 of tax.
  assert.deepEqual(withoutTax(1001n, 0n, 167n, 0.2), { subtotal: 834n, discount: 0n });
  assert.deepEqual(withoutTax(1000n, 1n, 166n, 0.2), { subtotal: 834n, discount: 1n });
  // Nothing paid (a gift): no tax to read, the rate gives the part without tax.
  assert.deepEqual(withoutTax(1200n, 1200n, 0n, 0.2), { subtotal: 1000n, discount: 1000n });
});

test('L1 bounds: refunds beyond the line are cut, 1,000 lines at most, a line that sold nothing is left out, unreadable money reported', () => {
  const refund = {
    refundLineItems: {
      nodes: [
        { quantity: 5, lineItem: { id: MUG.id }, subtotalSet: money('99.0'), totalTaxSet: money('0') },
        {
          quantity: 1,
          lineItem: { id: 'gid://shopify/LineItem/999' },
          subtotalSet: money('5'),
          totalTaxSet: money('0'),
        },
      ],
    },
  };
  const [mug] = soldLines([MUG], [refund], false) as Record<string, unknown>[];
  assert.equal(mug!.refunded_quantity, 1);
  assert.equal(mug!.refunded_amount, '12.00');
  const many = Array.from({ length: 1_200 }, (_, i) => ({ ...MUG, id: `gid://shopify/LineItem/${i + 1}` }));
  assert.equal((soldLines(many, [], false) as unknown[]).length, 1_000);
  assert.deepEqual(soldLines([{ ...MUG, quantity: 0 }], [], false), []);
  assert.match(String(soldLines([{ ...MUG, originalTotalSet: money('douze') }], [], false)), /illisible/);
});

test('L1 bounds: a SKU or product type longer than L1 allows is cut, never inside an emoji (half of one would refuse the order)', () => {
  const [mug] = soldLines(
    [
      {
        ...MUG,
        sku: `${'S'.repeat(99)}🍵`,
        product: { ...MUG.product, productType: `${'c'.repeat(199)}🍵` },
      },
    ],
    [],
    false,
  ) as Record<string, unknown>[];
  assert.equal(mug!.sku, 'S'.repeat(99));
  assert.deepEqual(mug!.categories, ['c'.repeat(199)]);
});

test('webhooks: refunds/create names its order by order_id (the refund is its body)', () => {
  const body = Buffer.from(JSON.stringify({ id: 777, order_id: 5000000001, refund_line_items: [] }));
  const signature = crypto.createHmac('sha256', 's3cret').update(body).digest('base64');
  const headers = { 'x-shopify-hmac-sha256': signature, 'x-shopify-topic': 'refunds/create' };
  assert.deepEqual(readWebhook(headers, body, 's3cret'), { kind: 'order', id: '5000000001' });
});
