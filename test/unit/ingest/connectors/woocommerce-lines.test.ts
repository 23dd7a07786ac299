// Issue 27 (SPEC L1): a WooCommerce order's line_items as lines (src/ingest/connectors/woocommerce/lines.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { soldLines } from '../../../../src/ingest/connectors/woocommerce/lines.js';
import { categoryNames } from '../../../../src/ingest/connectors/woocommerce/categories.js';
import { validateLines } from '../../../../src/ingest/order-line.js';
import type { FieldError } from '../../../../src/ingest/field-checks.js';

const TEE = {
  id: 31,
  name: 'T-shirt - M',
  parent_name: 'T-shirt',
  product_id: 12,
  variation_id: 15,
  quantity: 2,
  subtotal: '40.00',
  total: '36.00',
  sku: 'TEE-M',
  meta_data: [{ key: 'pa_taille', display_key: 'Taille', display_value: 'M' }],
};
const MUG = {
  id: 32,
  name: 'Mug',
  parent_name: null,
  product_id: 20,
  variation_id: 0,
  quantity: 1,
  subtotal: '12.00',
  total: '12.00',
  sku: '',
};
const GONE = {
  id: 33,
  name: 'Ancien produit',
  product_id: 0,
  variation_id: 0,
  quantity: 1,
  subtotal: '5.00',
  total: '5.00',
  sku: '',
};

test('L1: variation 0 is no variant; a variation is named by its parent; subtotal − total is the discount; product 0 has no id', () => {
  const lines = soldLines([TEE, MUG, GONE], [], (id) => (id === '12' ? ['Vêtements', 'Coton'] : []));
  assert.deepEqual(lines, [
    {
      line_id: '31',
      product_id: '12',
      variant_id: '15',
      sku: 'TEE-M',
      product_name: 'T-shirt',
      variant_name: 'M',
      categories: ['Vêtements', 'Coton'],
      quantity: 2,
      subtotal: '40.00',
      discount: '4.00',
      refunded_quantity: 0,
      refunded_amount: '0.00',
    },
    {
      line_id: '32',
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
      line_id: '33',
      product_name: 'Ancien produit',
      categories: [],
      quantity: 1,
      subtotal: '5.00',
      discount: '0.00',
      refunded_quantity: 0,
      refunded_amount: '0.00',
    },
  ]);
});

test('L1: refunds by _refunded_item_id (else same product and variation), summed, positive, cut to what the line can give back', () => {
  const refunds = [
    {
      line_items: [
        {
          product_id: 12,
          variation_id: 15,
          quantity: -1,
          total: '-18.00',
          meta_data: [{ key: '_refunded_item_id', value: '31' }],
        },
      ],
    },
    { line_items: [{ product_id: 12, variation_id: 15, quantity: -1, total: '-18.00', meta_data: [] }] },
    {
      line_items: [
        {
          product_id: 20,
          variation_id: 0,
          quantity: -3,
          total: '-50.00',
          meta_data: [{ key: '_refunded_item_id', value: 32 }],
        },
      ],
    },
  ];
  const lines = soldLines([TEE, MUG], refunds, () => []) as Record<string, unknown>[];
  assert.deepEqual(
    lines.map((l) => [l.refunded_quantity, l.refunded_amount]),
    [
      [2, '36.00'],
      [1, '12.00'],
    ],
  );
});

test('L5: category names decoded from WordPress entities, repeated names once', () => {
  const names = categoryNames([
    {
      id: 12,
      categories: [
        { name: 'Thés &amp; cafés' },
        { name: 'Bio' },
        { name: 'Bio' },
        { name: 'L&#039;atelier' },
      ],
    },
    { id: 13, categories: [] },
  ]);
  assert.deepEqual(names.get('12'), ['Thés & cafés', 'Bio', "L'atelier"]);
  assert.deepEqual(names.get('13'), []);
});

test('L1, L5: a long category name is cut at 200 characters, never inside an emoji; a name that is no text is left out', () => {
  const long = `${'a'.repeat(199)}🍵 et le reste`;
  const names = categoryNames([
    { id: 7, categories: [{ name: long }, { name: 'x\ud800y' }, { name: 'Thé' }] },
  ]);
  assert.deepEqual(names.get('7'), ['a'.repeat(199), 'Thé']);
  for (const name of names.get('7') ?? []) assert.ok(name.isWellFormed() && name.length <= 200);
});

test('L1: a WordPress title longer than L1 allows, a NUL or half an emoji is made to fit, so the order is not refused (its sale not lost)', () => {
  const title = `${'T'.repeat(499)}🍵 suite`; // the emoji straddles the 500th character
  const lines = soldLines(
    [
      { ...MUG, name: title, sku: `${'S'.repeat(99)}🍵` },
      { ...TEE, parent_name: 'Thé\u0000 vert', name: `Thé vert - ${'x'.repeat(600)}`, sku: 'a\ud800b' },
    ],
    [],
    () => [],
  );
  assert.ok(Array.isArray(lines));
  const [mug, tee] = lines;
  assert.equal(mug?.product_name, 'T'.repeat(499));
  assert.equal(mug?.sku, 'S'.repeat(99));
  assert.equal(tee?.product_name, 'Thé vert');
  assert.equal(tee?.variant_name, 'x'.repeat(500));
  assert.equal(tee?.sku, 'a\ufffdb');
  const errors: FieldError[] = [];
  validateLines(lines, errors);
  assert.deepEqual(errors, []);
});
