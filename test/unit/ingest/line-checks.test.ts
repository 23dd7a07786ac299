// The reading thread's shortcuts for lines (issue 27, item 6) answer exactly as the long ways did:
// blank is missing whatever the blank (I1), cents are exact (L1's comparisons), a category is
// accepted or refused as before, array literals and COPY fields escape what they must.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cents, isMissing, parseAmount } from '../../../src/ingest/field-checks.js';
import { validateLines } from '../../../src/ingest/order-line.js';
import { arrayLiteral, copyField } from '../../../src/ingest/staging.js';
import type { FieldError } from '../../../src/ingest/field-checks.js';

test('I1: missing is absent, null, empty or blank of any kind; a visible first character is never missing', () => {
  for (const blank of [undefined, null, '', ' ', '\t\n', '\u00a0', '\u3000 ', '\ufeff'])
    assert.equal(isMissing(blank), true, JSON.stringify(blank));
  for (const present of ['a', ' a', '\u00a0x', 'é', '0', 0, false, [], {}])
    assert.equal(isMissing(present), false, JSON.stringify(present));
});

test('L1: cents of every amount parseAmount writes, exact up to 13 digits before the point', () => {
  for (const [raw, expected] of [
    ['0', 0],
    ['0.05', 5],
    ['12.3', 1230],
    ['1000', 100000],
    ['9999999999999.99', 999999999999999],
  ] as const) {
    const amount = parseAmount(raw);
    assert.ok(amount !== undefined);
    assert.equal(cents(amount), expected, raw);
  }
});

const line = (fields: Record<string, unknown>) => ({
  line_id: 'l1',
  product_name: 'Thé',
  quantity: 1,
  subtotal: '10.00',
  ...fields,
});

function errorsOf(lines: unknown[]): FieldError[] {
  const errors: FieldError[] = [];
  validateLines(lines, errors);
  return errors;
}

test('L1: categories: plain ones kept; blank, too long, NUL, lone surrogate or repeated refused with their place', () => {
  const ok: FieldError[] = [];
  const [kept] = validateLines([line({ categories: ['Thés', ' Infusions ', 'x'.repeat(200)] })], ok) ?? [];
  assert.deepEqual(ok, []);
  assert.deepEqual(kept?.categories, ['Thés', ' Infusions ', 'x'.repeat(200)]);
  for (const [bad, message] of [
    [' ', /catégorie 2 : champ obligatoire manquant/],
    ['x'.repeat(201), /catégorie 2 : texte trop long/],
    ['a\u0000b', /catégorie 2 :/],
    ['\ud800', /catégorie 2 :/],
    ['Thés', /en double/],
    [7, /catégorie 2 : texte attendu/],
  ] as const) {
    const errors = errorsOf([line({}), line({ line_id: 'l2', categories: ['Thés', bad] })]);
    assert.equal(errors.length, 1, String(bad));
    assert.equal(errors[0]?.field, 'lines[1].categories');
    assert.match(errors[0]?.message ?? '', message);
  }
});

test('L1: a faulty field is named lines[k].field, also for two fields together', () => {
  assert.deepEqual(
    errorsOf([
      line({}),
      line({ line_id: 'l2', quantity: 0 }),
      line({ line_id: 'l3', discount: '11.00' }),
    ]).map((e) => e.field),
    ['lines[1].quantity', 'lines[2].discount'],
  );
  assert.deepEqual(
    errorsOf([line({ discount: '4.00', refunded_amount: '6.01' })]).map((e) => e.field),
    ['lines[0].refunded_amount'],
  );
  assert.deepEqual(errorsOf([line({ discount: '4.00', refunded_amount: '6.00' })]), []);
});

test('L1, section 10: a JSON number too large for a double (1e309, read as Infinity) is quoted as a number, never « null »', () => {
  const errors = errorsOf([line({ subtotal: JSON.parse('1e309'), quantity: JSON.parse('-1e309') })]);
  assert.deepEqual(
    errors.map((e) => e.field),
    ['lines[0].quantity', 'lines[0].subtotal'],
  );
  for (const error of errors) {
    assert.doesNotMatch(error.message, /« null »/);
    assert.match(error.message, /« -?Infinity »/);
  }
});

test('COPY text: fields and array elements escaped only where needed, literal otherwise', () => {
  assert.equal(copyField('plain café'), 'plain café');
  assert.equal(copyField('a\\b\tc'), 'a\\\\b\\tc');
  assert.equal(arrayLiteral([]), '{}');
  assert.equal(arrayLiteral(['Thés']), '{"Thés"}');
  assert.equal(arrayLiteral(['a"b', 'c\\d', 'e']), '{"a\\"b","c\\\\d","e"}');
});
