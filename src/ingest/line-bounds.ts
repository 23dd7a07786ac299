// The longest NDJSON line a legitimate order can take (issue 27, SPEC L1): the reader refuses a
// longer one as it streams in, never holding it whole (finding 1), and must accept an order of
// 1,000 lines of L1's longest fields. Computed from the bounds, not guessed: each text character
// counted at its longest JSON writing, `\uXXXX` (6 bytes: what Python's json.dumps writes for
// every non-ASCII character by default).
import { LINE_BOUNDS, LINE_FIELDS } from './order-line.js';

/** The longest JSON writing of one character of text. */
const JSON_BYTES_PER_CHARACTER = 6;
/** A field's name, quotes, colon and comma around its value. */
const FIELD_OVERHEAD = 32;
/** An amount: 13 digits, a point, 2 decimals, quoted. */
const AMOUNT_BYTES = 18;
/** A count up to 1,000,000, quoted. */
const COUNT_BYTES = 9;

const textBytes = (characters: number): number => characters * JSON_BYTES_PER_CHARACTER + 2;

/** L1's longest line as JSON: its texts, its 20 longest categories, its counts and amounts. */
export const MAX_LINE_JSON_BYTES =
  LINE_FIELDS.length * FIELD_OVERHEAD +
  textBytes(LINE_BOUNDS.line_id) +
  textBytes(LINE_BOUNDS.product_id) +
  textBytes(LINE_BOUNDS.variant_id) +
  textBytes(LINE_BOUNDS.sku) +
  textBytes(LINE_BOUNDS.product_name) +
  textBytes(LINE_BOUNDS.variant_name) +
  LINE_BOUNDS.categories * (textBytes(LINE_BOUNDS.category) + 1) +
  2 * COUNT_BYTES +
  3 * AMOUNT_BYTES;

/**
 * The order's own fields (SPEC section 12) fit in the 64 KiB that bounded a whole line before
 * lines existed (finding 1); lines add L1's longest a thousand times: about 31 MiB in all.
 */
export const ORDER_FIELDS_BYTES = 64 * 1024;
export const MAX_NDJSON_LINE_BYTES = ORDER_FIELDS_BYTES + LINE_BOUNDS.lines * (MAX_LINE_JSON_BYTES + 1);

/**
 * A CSV row holds one order line (L8): the order's columns and one line's, each character at
 * most 3 bytes of UTF-8 (a doubled quote takes 2), well within the 64 KiB of before.
 */
export const MAX_CSV_LINE_BYTES = 64 * 1024;
