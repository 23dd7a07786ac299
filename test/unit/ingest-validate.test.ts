import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { customerHash, customerIdentity, customerKeyOf, normalizedEmail } from '../../src/ingest/customer.js';
import { isValidStoreAddress, normalizeStoreAddress } from '../../src/ingest/store-address.js';
import {
  isIsoInstant,
  parseAmount,
  validateOrder,
  type OrderRecord,
} from '../../src/ingest/validate-order.js';

const valid = {
  store: 'https://boutique.example.fr',
  id: '1001',
  created_at: '2026-03-01T23:30:00+01:00',
  status: 'completed',
  items: 2,
  total: '120.00',
};

const KEY = customerKeyOf(
  Buffer.from('7f3a9c0e5b1d2f4a6c8e0b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a', 'hex'),
);
const hashOf = (normalized: string): string =>
  crypto.createHmac('sha256', KEY).update(normalized).digest('hex');

function accepted(record: Record<string, unknown>): OrderRecord {
  const result = validateOrder(record, KEY);
  assert.ok(result.ok, JSON.stringify(result));
  return result.order;
}

function faultyFields(record: Record<string, unknown>): string[] {
  const result = validateOrder(record, KEY);
  assert.ok(!result.ok, 'expected the line to be refused');
  return result.errors.map((e) => e.field);
}

test('U1: a usable email is trimmed and lower-cased into the customer, kept only as its keyed hash', () => {
  assert.equal(normalizedEmail('  Alice@Example.FR '), 'alice@example.fr');
  assert.equal(normalizedEmail('a.b+tag@sub.example.co.uk'), 'a.b+tag@sub.example.co.uk');
  assert.equal(customerIdentity('  Alice@Example.FR ', KEY), hashOf('alice@example.fr'));
  assert.equal(customerIdentity('ALICE@example.fr', KEY), customerHash(KEY, 'alice@example.fr'));
  assert.match(customerIdentity('alice@example.fr', KEY) ?? '', /^[0-9a-f]{64}$/);
  // Another SECRET_KEY gives other hashes: without the key, the hash cannot be tested.
  const other = customerKeyOf(crypto.randomBytes(32));
  assert.notEqual(customerIdentity('alice@example.fr', other), customerIdentity('alice@example.fr', KEY));
});

test('U1: the customer hash is HMAC-SHA256 of the identity, whatever its characters and length', () => {
  for (const key of [KEY, crypto.randomBytes(32), crypto.randomBytes(100)]) {
    for (const identity of [
      'a@b.co',
      'élodie.ñ@exämple.fr',
      '😀@x.y',
      'x'.repeat(254),
      'é'.repeat(254),
      'x'.repeat(400),
    ]) {
      const expected = crypto.createHmac('sha256', key).update(identity).digest('hex');
      assert.equal(customerHash(key, identity), expected, identity.slice(0, 20));
    }
  }
});

test('U1: an unusable email makes the order anonymous', () => {
  for (const email of [
    undefined,
    null,
    42,
    '',
    '   ',
    'alice',
    'alice@localhost',
    '@example.fr',
    'a@b@example.fr',
    'al ice@example.fr',
    'alice@exa\tmple.fr',
    'alice@example.fr\u00a0x',
  ]) {
    assert.equal(customerIdentity(email, KEY), null, String(email));
  }
});

test('U1: the validated order carries only the hash of its customer, never the email', () => {
  const order = accepted({ ...valid, customer_email: ' Bob@Example.be ' });
  assert.equal(order.customer, hashOf('bob@example.be'));
  assert.ok(!JSON.stringify(order).toLowerCase().includes('example.be'));
  assert.equal(accepted({ ...valid, customer_email: 'not an email' }).customer, null);
  assert.equal(accepted({ ...valid, customer_email: '' }).customer, null);
  assert.deepEqual(faultyFields({ ...valid, customer_email: 42 }), ['customer_email']);
});

test('store addresses have no trailing slash; only http(s) URLs with a host can be added', () => {
  assert.equal(normalizeStoreAddress(' https://shop.example.fr// '), 'https://shop.example.fr');
  assert.equal(normalizeStoreAddress('https://shop.example.fr/fr/'), 'https://shop.example.fr/fr');
  assert.equal(
    accepted({ ...valid, store: 'https://shop.example.fr/' }).storeAddress,
    'https://shop.example.fr',
  );
  assert.ok(isValidStoreAddress('https://shop.example.fr/'));
  assert.ok(isValidStoreAddress('http://localhost:8080'));
  for (const bad of ['shop.example.fr', 'ftp://shop.example.fr', 'https://', 'https://shop example.fr', '']) {
    assert.ok(!isValidStoreAddress(bad), bad);
  }
});

test('created_at: an ISO 8601 instant with Z or an offset, T or space, seconds and fraction optional', () => {
  for (const instant of [
    '2026-03-01T23:30:00+01:00',
    '2026-03-01T23:30:00+0100',
    '2026-03-01T23:30:00Z',
    '2026-03-01 23:30:00Z',
    '2026-03-01T23:30Z',
    '2026-03-01T23:30:00.123456-05:30',
    '2024-02-29T00:00:00Z',
    '2026-12-31T23:59:59-12:00',
  ]) {
    assert.ok(isIsoInstant(instant), instant);
  }
  assert.equal(accepted({ ...valid, created_at: ' 2026-03-01T23:30Z ' }).createdAt, '2026-03-01T23:30Z');
});

test('created_at: no zone, not a real calendar day or time, or not a string → refused', () => {
  for (const instant of [
    '2026-03-01T23:30:00',
    '2026-03-01',
    '2026-02-30T10:00:00Z',
    '2025-02-29T10:00:00Z',
    '2026-04-31T10:00:00Z',
    '2026-13-01T10:00:00Z',
    '2026-03-01T24:00:00Z',
    '2026-03-01T23:60:00Z',
    '2026-03-01T23:59:60Z',
    '2026-03-01T23:30:00+25:00',
    '2026-03-01T23:30:00+01:60',
    '2026-03-01T23:30:00+01',
    '2026-03-01t23:30:00z',
    '0000-01-01T00:00:00Z',
    '1772404200',
  ]) {
    assert.ok(!isIsoInstant(instant), instant);
  }
  assert.deepEqual(faultyFields({ ...valid, created_at: 1772404200 }), ['created_at']);
});

test('amounts: 0, 1 or 2 decimals, as JSON numbers or strings, become exact two-decimal strings', () => {
  assert.equal(parseAmount(0), '0.00');
  assert.equal(parseAmount(12), '12.00');
  assert.equal(parseAmount(12.3), '12.30');
  assert.equal(parseAmount(0.1), '0.10');
  assert.equal(parseAmount(19.99), '19.99');
  assert.equal(parseAmount('12'), '12.00');
  assert.equal(parseAmount('12.3'), '12.30');
  assert.equal(parseAmount('007.05'), '7.05');
  assert.equal(parseAmount('9999999999999.99'), '9999999999999.99');
  assert.equal(parseAmount(9999999999999.99), '9999999999999.99');
});

test('amounts: 3 decimals, negative, too large, not a number → refused', () => {
  for (const bad of [
    '1.234',
    1.234,
    '-1',
    -1,
    '1,5',
    '1e3',
    1e21,
    '.5',
    '5.',
    'abc',
    '10000000000000',
    ' 5',
    '5 ',
    ' 007.05 ',
    true,
    {},
    [],
  ]) {
    assert.equal(parseAmount(bad), undefined, JSON.stringify(bad));
  }
  const result = validateOrder({ ...valid, total: '1.234' }, KEY);
  assert.deepEqual(!result.ok && result.errors, [
    {
      field: 'total',
      message: 'montant invalide « 1.234 » : nombre décimal ≥ 0 avec au plus 2 décimales attendu',
    },
  ]);
});

test('amounts: total is required, the six others default to 0', () => {
  const order = accepted(valid);
  assert.deepEqual(
    [
      order.total,
      order.taxTotal,
      order.shippingTotal,
      order.feeTotal,
      order.refundTotal,
      order.refundTax,
      order.refundShipping,
    ],
    ['120.00', '0.00', '0.00', '0.00', '0.00', '0.00', '0.00'],
  );
  assert.deepEqual(faultyFields({ ...valid, total: undefined }), ['total']);
  assert.deepEqual(faultyFields({ ...valid, total: '' }), ['total']);
});

test('refund_tax + refund_shipping may reach refund_total, never exceed it (compared exactly)', () => {
  accepted({ ...valid, refund_total: 0.3, refund_tax: 0.1, refund_shipping: 0.2 });
  accepted({ ...valid, refund_total: '10', refund_tax: '10', refund_shipping: 0 });
  assert.deepEqual(
    faultyFields({ ...valid, refund_total: '0.30', refund_tax: '0.10', refund_shipping: '0.21' }),
    ['refund_total'],
  );
  assert.deepEqual(faultyFields({ ...valid, refund_tax: '0.01' }), ['refund_total']);
});

test('items: a JSON integer or a digit string ≥ 0 fitting the column', () => {
  assert.equal(accepted({ ...valid, items: 0 }).items, 0);
  assert.equal(accepted({ ...valid, items: '7' }).items, 7);
  assert.equal(accepted({ ...valid, items: 2147483647 }).items, 2147483647);
  for (const bad of [-1, 1.5, '1.0', '-2', 'two', 2147483648, '2147483648', true]) {
    assert.deepEqual(faultyFields({ ...valid, items: bad }), ['items'], JSON.stringify(bad));
  }
  assert.deepEqual(faultyFields({ ...valid, items: undefined }), ['items']);
});

test('billing_country: two letters in any case, upper-cased; empty, absent or null is missing', () => {
  assert.equal(accepted({ ...valid, billing_country: 'fr' }).billingCountry, 'FR');
  assert.equal(accepted({ ...valid, billing_country: 'Be' }).billingCountry, 'BE');
  for (const missing of [undefined, null, '', '  ']) {
    assert.equal(accepted({ ...valid, billing_country: missing }).billingCountry, null);
  }
  for (const bad of ['FRA', 'F', 'F1', 33]) {
    assert.deepEqual(faultyFields({ ...valid, billing_country: bad }), ['billing_country']);
  }
});

test('id: a non-blank string, or a JSON number converted exactly to its decimal text', () => {
  assert.equal(accepted({ ...valid, id: 1002 }).externalId, '1002');
  assert.equal(accepted({ ...valid, id: 'A-7' }).externalId, 'A-7');
  for (const bad of [undefined, null, '', '  ', 12.5, 2 ** 60, true]) {
    assert.deepEqual(faultyFields({ ...valid, id: bad }), ['id'], String(bad));
  }
});

test('status: kept exactly as sent; whitespace-only is empty', () => {
  assert.equal(accepted({ ...valid, status: ' On Hold ' }).status, ' On Hold ');
  assert.deepEqual(faultyFields({ ...valid, status: '   ' }), ['status']);
  assert.deepEqual(faultyFields({ ...valid, status: 3 }), ['status']);
});

test('text fields refuse the NUL character, which the database cannot store', () => {
  assert.deepEqual(faultyFields({ ...valid, status: 'a\u0000b', customer_email: 'x\u0000' }), [
    'status',
    'customer_email',
  ]);
});

test('I1: every faulty field of a line is reported, in field order, and unknown fields are ignored', () => {
  const result = validateOrder(
    {
      store: '/',
      created_at: '2026-02-30T10:00:00Z',
      status: '',
      billing_country: 'FRA',
      customer_email: 7,
      items: -1,
      tax_total: '1.234',
      refund_total: -5,
      whatever: 'ignored',
    },
    KEY,
  );
  assert.ok(!result.ok);
  assert.deepEqual(
    result.errors.map((e) => e.field),
    [
      'store',
      'id',
      'created_at',
      'status',
      'billing_country',
      'customer_email',
      'items',
      'total',
      'tax_total',
      'refund_total',
    ],
  );
  for (const error of result.errors) assert.ok(error.message.length > 0);
});

test('T1: digits past the microsecond are dropped, so an instant never rounds into the next day', () => {
  const result = validateOrder(
    {
      store: 'https://s.example',
      id: '1',
      created_at: '2026-03-01T23:59:59.9999995Z',
      status: 'completed',
      items: 1,
      total: '1.00',
    },
    KEY,
  );
  assert.ok(result.ok);
  assert.equal(result.order.createdAt, '2026-03-01T23:59:59.999999Z');
});

test('issue 18, finding 4 (T1, T2): an instant outside 0001-01-01T00:00Z – 9999-12-31T23:59:59.999999Z in UTC is refused', () => {
  for (const outside of [
    '9999-12-31T23:30:00-01:00', // 10000-01-01T00:30Z
    '9999-12-31T23:00:00-01:00',
    '9999-12-31T12:00:00-12:00',
    '0001-01-01T00:30:00+01:00', // year 0 in UTC
    '0001-01-01T00:00:00.5+00:01',
    '0001-01-01T13:59:59+14:00',
  ]) {
    assert.ok(!isIsoInstant(outside), outside);
    const result = validateOrder({ ...valid, created_at: outside }, KEY);
    assert.deepEqual(!result.ok && result.errors.map((e) => e.field), ['created_at'], outside);
    assert.match(!result.ok ? result.errors[0]!.message : '', /^date hors limites « .* » : en UTC/, outside);
  }
  for (const inside of [
    '9999-12-31T23:59:59.999999Z',
    '9999-12-31T22:59:59.999-01:00',
    '9999-12-31T23:30:00+01:00',
    '9999-12-31T23:30:00-00:00',
    '0001-01-01T00:00:00Z',
    '0001-01-01T00:30:00-01:00',
    '0001-01-01T01:00:00+01:00',
  ]) {
    assert.ok(isIsoInstant(inside), inside);
    assert.equal(accepted({ ...valid, created_at: inside }).createdAt, inside);
  }
});

test('issue 18, finding 6: a lone surrogate in any text field is refused; a surrogate pair is text', () => {
  for (const field of ['store', 'id', 'status', 'customer_email']) {
    for (const lone of ['\ud800x', 'x\udfff', '\udc00\ud800']) {
      const value = field === 'store' ? `https://s.example/${lone}` : lone;
      const result = validateOrder({ ...valid, [field]: value }, KEY);
      assert.ok(!result.ok, `${field}: ${JSON.stringify(value)}`);
      assert.deepEqual(result.errors, [
        {
          field,
          message:
            'caractère invalide : moitié de paire UTF-16 isolée (\\ud800–\\udfff), ce n’est pas du texte Unicode',
        },
      ]);
    }
  }
  assert.equal(accepted({ ...valid, status: 'livré 📦' }).status, 'livré 📦');
});

test('issue 18, finding 6: amounts and items with blanks around them are refused, as +5 and .5 are', () => {
  for (const field of ['total', 'tax_total', 'refund_total']) {
    for (const blank of [' 5', '5 ', '\t5', ' 5.00', '\u00a05', '5\r']) {
      const result = validateOrder({ ...valid, [field]: blank }, KEY);
      assert.ok(!result.ok, `${field}: ${JSON.stringify(blank)}`);
      assert.equal(result.errors[0]?.field, field);
      assert.match(
        result.errors[0]?.message ?? '',
        /^montant invalide « .* » : pas d’espace avant ou après le nombre$/s,
      );
    }
    for (const bad of ['+5', '.5', '5.']) assert.deepEqual(faultyFields({ ...valid, [field]: bad }), [field]);
  }
  for (const blank of [' 5', '5 ', '\t5']) {
    const result = validateOrder({ ...valid, items: blank }, KEY);
    assert.ok(!result.ok, JSON.stringify(blank));
    assert.match(
      result.errors[0]?.message ?? '',
      /entier ≥ 0 attendu, pas d’espace avant ou après le nombre$/,
    );
  }
  assert.deepEqual(faultyFields({ ...valid, items: '+5' }), ['items']);
  // Blank only is still missing: an optional amount defaults to 0, a required one is missing.
  assert.equal(accepted({ ...valid, tax_total: '   ' }).taxTotal, '0.00');
  assert.deepEqual(faultyFields({ ...valid, total: '  ' }), ['total']);
});

test('issue 18, finding 3: a message never quotes a NUL or a lone surrogate (messages are stored)', () => {
  const result = validateOrder(
    { ...valid, billing_country: 'F\u0000', total: '1\u0000', items: '\ud800', created_at: '\u0000' },
    KEY,
  );
  assert.ok(!result.ok);
  assert.deepEqual(
    result.errors.map((e) => e.field),
    ['created_at', 'billing_country', 'items', 'total'],
  );
  for (const error of result.errors) {
    assert.ok(!error.message.includes('\u0000'), error.message);
    assert.ok(error.message.isWellFormed(), error.message);
  }
  assert.match(result.errors[1]!.message, /« F␀ »/);
});
