// The presentation module (issue 30, item 2): every page's French numbers, amounts, changes,
// dates and status labels, and the French CSV's spreadsheet values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  dayFromField,
  formatBucket,
  formatBucketInWords,
  formatChange,
  formatCount,
  formatDay,
  formatLongDay,
  formatMoney,
  formatPeriod,
  formatShortPeriod,
  plural,
  spreadsheetDate,
  spreadsheetNumber,
  statusLabel,
} from '../../../src/web/format.js';

/** Intl's narrow and plain no-break spaces as plain spaces, to compare with readable text. */
const plain = (text: string): string => text.replace(/[\u202f\u00a0]/g, ' ');

test('counts and amounts in French: « 2 718 », « 1 234,56 € », never « -0,00 € »', () => {
  assert.equal(plain(formatCount(2718)), '2 718');
  assert.equal(plain(formatCount(0)), '0');
  assert.equal(plain(formatMoney(1234.56, 'EUR')), '1 234,56 €');
  assert.equal(plain(formatMoney(-0.001, 'EUR')), '0,00 €');
  assert.equal(plain(formatMoney(-3.05, 'EUR')), '-3,05 €');
  assert.equal(plain(formatMoney(12, 'XYZ')), '12,00 XYZ');
  assert.equal(plain(formatMoney(12, 'not a code')), '12,00 not a code');
});

test('changes with their sign and one decimal; plurals in words', () => {
  assert.equal(plain(formatChange(12.34)), '+12,3 %');
  assert.equal(plain(formatChange(-4)), '−4,0 %');
  assert.equal(plain(formatChange(0)), '0,0 %');
  assert.equal(formatChange(null), '—');
  assert.equal(plain(plural(0, 'ligne refusée', 'lignes refusées')), '0 ligne refusée');
  assert.equal(plain(plural(1, 'commande', 'commandes')), '1 commande');
  assert.equal(plain(plural(3, 'commande', 'commandes')), '3 commandes');
  assert.equal(plain(plural(1005, 'commande', 'commandes')), '1 005 commandes');
});

test('days, buckets (G2) and periods in French', () => {
  assert.equal(formatDay('2026-10-29'), '29 oct. 2026');
  assert.equal(formatDay('not a day'), 'not a day');
  assert.equal(formatDay('2026-02-30'), '2026-02-30', 'an impossible day is shown as it is');
  assert.equal(formatBucket('2026-10-26', 'week'), 'sem. du 26 oct. 2026');
  assert.equal(formatBucket('2026-10-01', 'month'), 'octobre 2026');
  assert.equal(formatBucket('2026-10-01', 'quarter'), 'T4 2026');
  assert.equal(formatBucket('2026-01-01', 'year'), '2026');
  assert.equal(formatPeriod('2026-01-29', '2026-02-28'), 'du 29 janvier au 28 février 2026');
  assert.equal(formatPeriod('2025-12-30', '2026-01-05'), 'du 30 décembre 2025 au 5 janvier 2026');
  // French writes the first of a month « 1er » in words (issue 30's review); tables keep « 1 mars 2026 ».
  assert.equal(formatPeriod('2026-03-01', '2026-04-01'), 'du 1er mars au 1er avril 2026');
  assert.equal(formatPeriod('2025-12-01', '2026-01-11'), 'du 1er décembre 2025 au 11 janvier 2026');
  assert.equal(formatPeriod('2026-03-01', '2026-03-01'), 'le 1er mars 2026');
  assert.equal(formatLongDay('2026-11-01'), '1er novembre 2026');
  assert.equal(formatLongDay('2026-11-11'), '11 novembre 2026');
  assert.equal(formatBucketInWords('2026-06-01', 'week'), 'semaine du 1er juin 2026');
  assert.equal(formatDay('2026-03-01'), '1 mars 2026');
  assert.equal(plain(formatShortPeriod('2026-01-29', '2026-02-28')), '29/01 – 28/02/2026');
});

test('statuses: the French label beside the platform value; unknown ones as they are (item 3)', () => {
  assert.equal(statusLabel('cancelled'), 'Annulée (cancelled)');
  assert.equal(statusLabel('checkout-draft'), 'Brouillon de commande (checkout-draft)');
  assert.equal(statusLabel('pending'), 'En attente de paiement (pending)');
  assert.equal(statusLabel('partially_refunded'), 'Partiellement remboursée (partially_refunded)');
  assert.equal(statusLabel('wc-custom'), 'wc-custom');
  assert.equal(statusLabel('constructor'), 'constructor', 'no inherited property is a label');
});

test('spreadsheet values: decimal comma without grouping, JJ/MM/AAAA (item 5)', () => {
  assert.equal(spreadsheetNumber(1234.56, 2), '1234,56');
  assert.equal(spreadsheetNumber(-3.05, 2), '-3,05');
  assert.equal(spreadsheetNumber(-0.001, 2), '0,00');
  assert.equal(spreadsheetNumber(1004, 0), '1004');
  assert.equal(spreadsheetNumber(358.998, 1), '359,0');
  assert.throws(() => spreadsheetNumber(Number.NaN, 2), RangeError);
  assert.equal(spreadsheetDate('2026-10-29'), '29/10/2026');
});

test("a day typed in a period field: jj/mm/aaaa (with / . or -) to the API's day; anything else as it is (P3)", () => {
  assert.equal(dayFromField('09/03/2026'), '2026-03-09');
  assert.equal(dayFromField(' 9/3/2026 '), '2026-03-09');
  assert.equal(dayFromField('9.3.2026'), '2026-03-09');
  assert.equal(dayFromField('09-03-2026'), '2026-03-09');
  assert.equal(dayFromField('2026-03-09'), '2026-03-09', "the API's own day passes (links, bookmarks)");
  assert.equal(dayFromField('31/02/2026'), '2026-02-31', 'left to P3, which refuses it');
  assert.equal(dayFromField('123/03/2026'), '123/03/2026');
  assert.equal(dayFromField('mars'), 'mars');
  assert.equal(spreadsheetDate(dayFromField('1/12/2025')), '01/12/2025');
});
