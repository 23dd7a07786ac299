// Checks shared by an order's fields and its lines' (SPEC sections 12 and 15): missing values,
// texts, exact amounts, and how a refused value is quoted in a French message (I1).
import { NUL_REFUSED, SURROGATE_REFUSED, printable } from './printable.js';

export interface FieldError {
  field: string;
  message: string;
}

export const MAX_AMOUNT_DIGITS = 13; // numeric(16, 2) leaves room for 13 digits before the point
/**
 * A value quoted in a message: strings as they are, other JSON values as JSON, cut when long; a
 * NUL or a lone surrogate (a cut may leave one) shown harmlessly, since the message is stored.
 */
export function shown(value: unknown): string {
  // JSON.stringify writes 1e309 (Infinity once parsed) as « null »: a number is shown as a number.
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number'
        ? String(value)
        : (JSON.stringify(value) ?? String(value));
  return printable(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/** A string with blanks before or after it (only asked of a value already refused). */
export const hasBlankEdges = (value: unknown): boolean => typeof value === 'string' && value !== value.trim();

// Absent, null and blank are all "missing": a CSV empty cell and an NDJSON "" mean the same.
// A string whose first character is visible ASCII is not blank: most are, answered without trim's copy.
export const isMissing = (value: unknown): boolean =>
  value === undefined ||
  value === null ||
  (typeof value === 'string' && !startsVisible(value) && value.trim() === '');
const startsVisible = (text: string): boolean => {
  const first = text.charCodeAt(0);
  return first > 0x20 && first < 0x7f;
};

// An amount already written as stored (no leading zero, two decimals): most files write them so.
const STORED_AMOUNT = /^(?:0|[1-9]\d{0,12})\.\d\d$/;

/**
 * The exact two-decimal text of an amount, or undefined when it is not a decimal ≥ 0 with ≤ 2
 * decimals. Written exactly, in NDJSON strings and CSV cells alike (issue 18, finding 6): no sign,
 * no leading or trailing point, no blanks around it (` 5` is refused as `+5` and `.5` are).
 */
export function parseAmount(value: unknown): string | undefined {
  if (typeof value === 'string' && STORED_AMOUNT.test(value)) return value;
  // A JSON number of at most 15 significant digits prints back to the digits that were written.
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!m) return undefined;
  const whole = m[1]!.replace(/^0+(?=\d)/, '');
  if (whole.length > MAX_AMOUNT_DIGITS) return undefined;
  return `${whole}.${(m[2] ?? '').padEnd(2, '0')}`;
}

export const BLANK_EDGES = 'pas d’espace avant ou après le nombre';

export function amountProblem(raw: unknown): string {
  if (hasBlankEdges(raw)) return `montant invalide « ${shown(raw)} » : ${BLANK_EDGES}`;
  const tooLong = /^\d+(\.\d{1,2})?$/.test(String(raw));
  return tooLong
    ? `montant trop grand « ${shown(raw)} » : au plus ${MAX_AMOUNT_DIGITS} chiffres avant la virgule`
    : `montant invalide « ${shown(raw)} » : nombre décimal ≥ 0 avec au plus 2 décimales attendu`;
}

/**
 * The cents of an amount as parseAmount writes it (digits, a point, two digits). At most 13 + 2
 * digits: exact as a double (below 2^53), and so is the sum of two of them. Read digit by digit:
 * no string is made (issue 27, item 6: four amounts a line were checked this way).
 */
export function cents(amount: string): number {
  let value = 0;
  for (let i = 0; i < amount.length; i++) {
    const c = amount.charCodeAt(i);
    if (c !== DOT) value = value * 10 + (c - ZERO);
  }
  return value;
}
export const DOT = 0x2e;
export const ZERO = 0x30;

/** Records a problem with the field being checked; returns undefined for the missing value. */
export type Fail = (message: string) => undefined;

// Required text: present, a string, not blank; PostgreSQL text cannot hold a NUL character, and a
// lone surrogate is no Unicode text (it would be stored as U+FFFD without a word: finding 6).
// isWellFormed is native and answers at once for Latin-1 strings, most lines' (I3).
export function requiredText(value: unknown, fail: Fail): string | undefined {
  if (isMissing(value)) return fail('champ obligatoire manquant');
  if (typeof value !== 'string') return fail(`texte attendu, reçu « ${shown(value)} »`);
  if (value.includes('\u0000')) return fail(NUL_REFUSED);
  if (!value.isWellFormed()) return fail(SURROGATE_REFUSED);
  return value;
}

/** Required text of at most `max` characters. */
export const boundedText =
  (max: number) =>
  (value: unknown, fail: Fail): string | undefined => {
    const text = requiredText(value, fail);
    if (text === undefined || text.length <= max) return text;
    return fail(`texte trop long : ${text.length} caractères, ${max} au plus`);
  };
