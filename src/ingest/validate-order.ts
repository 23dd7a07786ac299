// Validation of one imported order line (SPEC section 12). Pure: a raw record (NDJSON values of
// any JSON type, or CSV cells, all strings) becomes a typed OrderRecord, or the list of every
// faulty field of the line (I1 reports them all, not only the first).
import { daysInMonth } from '../query/dates.js';
import { customerIdentity } from './customer.js';
import {
  BLANK_EDGES,
  DOT,
  ZERO,
  amountProblem,
  boundedText,
  cents,
  hasBlankEdges,
  isMissing,
  parseAmount,
  shown,
  type Fail,
  type FieldError,
} from './field-checks.js';
import { validateLines, type OrderLineRecord } from './order-line.js';
import { checkStoreAddress, type StoreAddressCheck } from './store-address.js';

export interface OrderRecord {
  storeAddress: string;
  externalId: string;
  /** The ISO 8601 text as sent, checked to be a real instant with a zone. */
  createdAt: string;
  status: string;
  billingCountry: string | null;
  /** U1: the keyed hash of the customer's email (the email itself is never kept), or null. */
  customer: string | null;
  items: number;
  /** Amounts are exact decimal strings with two decimals ("12.30"), never binary floats. */
  total: string;
  taxTotal: string;
  shippingTotal: string;
  feeTotal: string;
  refundTotal: string;
  refundTax: string;
  refundShipping: string;
  /** L1: what the order sold, in the order sent; empty when `lines` is absent. */
  lines: OrderLineRecord[];
}

export type { FieldError } from './field-checks.js';
export { parseAmount } from './field-checks.js';

export type OrderValidation = { ok: true; order: OrderRecord } | { ok: false; errors: FieldError[] };

const MAX_ITEMS = 2_147_483_647; // the orders.items integer column
/** Longest text of each field (finding 10): a status or a store shows on every report page. */
export const FIELD_BOUNDS = { store: 2048, id: 200, status: 200, customer_email: 254 } as const;
// Groups: 1 year, 2 month, 3 day, 4 hour, 5 minute, 6 second, 7 fraction digits, 8 offset sign,
// 9 offset hours, 10 offset minutes.
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+-])(\d{2}):?(\d{2}))$/;
/** Microseconds: what PostgreSQL keeps of a fraction. */
const MAX_FRACTION_DIGITS = 6;

/** The parts of an ISO 8601 instant with Z or an offset naming a real calendar date and time. */
function instantParts(text: string): RegExpExecArray | undefined {
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  // Read group by group, without an intermediate array: this runs once per imported line (I3).
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const offsetHours = Number(m[9] ?? 0);
  const offsetMinutes = Number(m[10] ?? 0);
  const real =
    year >= 1 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    Number(m[4]) <= 23 &&
    Number(m[5]) <= 59 &&
    Number(m[6] ?? 0) <= 59 &&
    offsetMinutes <= 59 &&
    offsetHours * 60 + offsetMinutes <= 14 * 60; // real offsets span −12:00 to +14:00
  return real ? m : undefined;
}

/**
 * Whether the instant, in UTC, falls outside 0001-01-01T00:00:00Z – 9999-12-31T23:59:59.999999Z
 * (issue 18, finding 4): `9999-12-31T23:30:00-01:00` is in year 10000, whose day has no ISO date
 * (T1, T2). Only the first and last days of that span can cross it, by their offset: the others
 * cost two string comparisons (I3).
 */
function outsideYears(m: RegExpExecArray): boolean {
  const first = m[1] === '0001' && m[2] === '01' && m[3] === '01';
  const last = m[1] === '9999' && m[2] === '12' && m[3] === '31';
  if (!(first || last) || m[8] === undefined) return false;
  const offset = (Number(m[9]) * 60 + Number(m[10])) * (m[8] === '-' ? -1 : 1);
  const utcMinutes = Number(m[4]) * 60 + Number(m[5]) - offset; // whole-minute offsets: seconds never cross
  return first ? utcMinutes < 0 : utcMinutes >= 24 * 60;
}

/** True for an ISO 8601 instant with Z or an offset that names a real calendar date and time in 0001–9999 UTC. */
export function isIsoInstant(text: string): boolean {
  const parts = instantParts(text);
  return parts !== undefined && !outsideYears(parts);
}

/**
 * A checked instant (an OrderRecord's createdAt) as PostgreSQL stores it: its whole seconds since
 * 1970 (floor(extract(epoch …)), as a snapshot reads it) and its microseconds past them, to order
 * two instants exactly (issue 27: a command's import builds its snapshot and first orders as it reads).
 */
export function instantOf(text: string): { readonly seconds: number; readonly micros: number } {
  // Read by position (I3: once per order of an import; the text passed INSTANT already):
  // YYYY-MM-DD, T or a space, HH:MM, then :SS, .fraction, Z or an offset with or without its colon.
  const digits = (from: number, count: number): number => {
    let value = 0;
    for (let k = from; k < from + count; k++) value = value * 10 + (text.charCodeAt(k) - ZERO);
    return value;
  };
  let at = 16;
  let second = 0;
  let micros = 0;
  if (text.charCodeAt(at) === COLON) {
    second = digits(at + 1, 2);
    at += 3;
    if (text.charCodeAt(at) === DOT) {
      let end = at + 1;
      while (end < text.length && text.charCodeAt(end) >= ZERO && text.charCodeAt(end) <= NINE) end++;
      micros = digits(at + 1, end - at - 1) * 10 ** (6 - (end - at - 1));
      at = end;
    }
  }
  let offset = 0;
  if (text.charCodeAt(at) !== Z) {
    const minutesAt = text.charCodeAt(at + 3) === COLON ? at + 4 : at + 3;
    offset = (digits(at + 1, 2) * 60 + digits(minutesAt, 2)) * (text.charCodeAt(at) === MINUS ? -1 : 1);
  }
  const days = daysFromCivil(digits(0, 4), digits(5, 2), digits(8, 2));
  const seconds = days * 86_400 + (digits(11, 2) * 60 + digits(14, 2) - offset) * 60 + second;
  return { seconds, micros };
}
const NINE = 0x39;
const COLON = 0x3a;
const Z = 0x5a;
const MINUS = 0x2d;

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function parseItems(value: unknown): number | undefined {
  if (typeof value === 'number')
    return Number.isInteger(value) && value >= 0 && value <= MAX_ITEMS ? value : undefined;
  // Digits only, as amounts (issue 18, finding 6): blanks around them are refused, not trimmed.
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return undefined;
  const items = Number(value);
  return items <= MAX_ITEMS ? items : undefined;
}

const storeText = boundedText(FIELD_BOUNDS.store);
const idText = boundedText(FIELD_BOUNDS.id);
// The status is kept exactly as sent (dimension `status`), only checked to be non-blank.
const statusText = boundedText(FIELD_BOUNDS.status);
const emailText = boundedText(FIELD_BOUNDS.customer_email);

// A file names a handful of stores on every line: each address is checked as a URL once (I3: a
// million lines, a million URL parses otherwise). Bounded, so memory stays flat whatever the file.
const checkedStores = new Map<string, StoreAddressCheck>(); // as written → as stored, or why not
const MAX_CHECKED_STORES = 1000;

function checkedStore(raw: string): StoreAddressCheck {
  let checked = checkedStores.get(raw);
  if (checked === undefined) {
    checked = checkStoreAddress(raw);
    if (checkedStores.size >= MAX_CHECKED_STORES) checkedStores.clear();
    checkedStores.set(raw, checked);
  }
  return checked;
}

// The same rule as `store add` (finding 13; issue 18, finding 5): an http(s) URL without user
// info, so `=HYPERLINK(…)` is no store and `https://user:pass@…` neither (the message leaves the
// credentials out).
function storeAddressOf(value: unknown, fail: Fail): string | undefined {
  const raw = storeText(value, fail);
  if (raw === undefined) return undefined;
  const checked = checkedStore(raw);
  return (
    checked.address ?? fail(`adresse de boutique invalide « ${shown(checked.shown)} » : ${checked.problem}`)
  );
}

// A JSON number id is accepted when it converts exactly (a safe integer) to its decimal text.
function externalIdOf(value: unknown, fail: Fail): string | undefined {
  if (typeof value !== 'number') return idText(value, fail);
  if (Number.isSafeInteger(value)) return String(value);
  return fail(`identifiant numérique inexact « ${shown(value)} » : envoyez-le en texte`);
}

function createdAtOf(value: unknown, fail: Fail): string | undefined {
  if (isMissing(value)) return fail('champ obligatoire manquant');
  const text = typeof value === 'string' ? value.trim() : '';
  const parts = instantParts(text);
  if (parts === undefined) {
    return fail(
      `date invalide « ${shown(value)} » : instant ISO 8601 avec Z ou décalage attendu (ex. 2026-03-01T23:30:00+01:00)`,
    );
  }
  if (outsideYears(parts)) {
    return fail(
      `date hors limites « ${shown(value)} » : en UTC, l’instant doit tomber entre le 1er janvier de l’an 1 et le 31 décembre 9999`,
    );
  }
  // PostgreSQL keeps microseconds and rounds further digits, which could carry 23:59:59.9999995Z
  // into the next day (T1): digits past the microsecond are dropped instead.
  const fraction = parts[7] ?? '';
  return fraction.length > MAX_FRACTION_DIGITS ? text.replace(/(\.\d{6})\d+/, '$1') : text;
}

function billingCountryOf(value: unknown, fail: Fail): string | null | undefined {
  if (isMissing(value)) return null;
  if (typeof value === 'string' && /^[A-Za-z]{2}$/.test(value.trim())) return value.trim().toUpperCase();
  return fail(`pays invalide « ${shown(value)} » : code ISO 3166-1 à deux lettres attendu`);
}

// Checked as text, then only its U1 hash is kept: the email goes no further than this function.
function customerOf(value: unknown, fail: Fail, customerKey: Buffer): string | null | undefined {
  if (isMissing(value)) return null;
  const email = emailText(value, fail);
  return email === undefined ? undefined : customerIdentity(email, customerKey);
}

function itemsOf(value: unknown, fail: Fail): number | undefined {
  if (isMissing(value)) return fail('champ obligatoire manquant');
  return (
    parseItems(value) ??
    fail(
      `quantité invalide « ${shown(value)} » : entier ≥ 0 attendu${hasBlankEdges(value) ? `, ${BLANK_EDGES}` : ''}`,
    )
  );
}

function requiredAmount(value: unknown, fail: Fail): string | undefined {
  if (isMissing(value)) return fail('champ obligatoire manquant');
  return parseAmount(value) ?? fail(amountProblem(value));
}

// Every amount but total defaults to 0 (SPEC section 12).
function optionalAmount(value: unknown, fail: Fail): string | undefined {
  return isMissing(value) ? '0.00' : requiredAmount(value, fail);
}

/**
 * One line's fields as they are read, and its faulty ones: `fail` reports the field last read.
 * One object a line rather than a closure a field (I3: this runs for every line of a file).
 */
class LineReader {
  readonly errors: FieldError[] = [];
  private field = '';

  constructor(private readonly record: Readonly<Record<string, unknown>>) {}

  /** A field's own value (absent and inherited are undefined); fail() now names this field. */
  value(field: string): unknown {
    this.field = field;
    return Object.hasOwn(this.record, field) ? this.record[field] : undefined;
  }

  readonly fail: Fail = (message) => {
    this.errors.push({ field: this.field, message });
    return undefined;
  };
}

/**
 * Validates one raw record; unknown fields are ignored, every faulty field is reported (I1).
 * customerKey (customerKeyOf(SECRET_KEY)) keys the customer hash (U1).
 */
export function validateOrder(
  record: Readonly<Record<string, unknown>>,
  customerKey: Buffer,
): OrderValidation {
  const line = new LineReader(record);
  const { fail, errors } = line;
  // Checked in the order of the format's table, so that errors read in that order.
  const order = {
    storeAddress: storeAddressOf(line.value('store'), fail),
    externalId: externalIdOf(line.value('id'), fail),
    createdAt: createdAtOf(line.value('created_at'), fail),
    status: statusText(line.value('status'), fail),
    billingCountry: billingCountryOf(line.value('billing_country'), fail),
    customer: customerOf(line.value('customer_email'), fail, customerKey),
    items: itemsOf(line.value('items'), fail),
    total: requiredAmount(line.value('total'), fail),
    taxTotal: optionalAmount(line.value('tax_total'), fail),
    shippingTotal: optionalAmount(line.value('shipping_total'), fail),
    feeTotal: optionalAmount(line.value('fee_total'), fail),
    refundTotal: optionalAmount(line.value('refund_total'), fail),
    refundTax: optionalAmount(line.value('refund_tax'), fail),
    refundShipping: optionalAmount(line.value('refund_shipping'), fail),
    lines: validateLines(line.value('lines'), errors),
  };
  // The refunded tax and shipping are parts of the refund: compared exactly, in integer cents.
  const { refundTotal, refundTax, refundShipping } = order;
  if (refundTotal !== undefined && refundTax !== undefined && refundShipping !== undefined) {
    if (cents(refundTax) + cents(refundShipping) > cents(refundTotal)) {
      const message = `refund_tax + refund_shipping (${refundTax} + ${refundShipping}) dépasse refund_total (${refundTotal})`;
      errors.push({ field: 'refund_total', message });
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, order: order as OrderRecord };
}
