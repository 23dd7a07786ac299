// The French spreadsheet's CSV (issue 30, item 5), shared by the pages that offer « CSV pour Excel
// (français) » (Revenus, Produits): `;` between cells (the list separator of a French Windows), a
// UTF-8 byte order mark (without it Excel reads « Unités vendues » as Latin-1), CRLF line ends, and
// V1's formula guard on text cells. Numbers come written already (format.ts: decimal comma).
import { stringify } from 'csv-stringify/sync';

const OPTIONS = { delimiter: ';', record_delimiter: 'windows', quoted_match: /[\r\n]/ } as const;
/** About a millisecond of writing per piece. */
const RECORDS_PER_PIECE = 32;

/**
 * V1's guard, as the API's CSV applies it (csv-stringify's escape_formulas): a text cell beginning
 * with = + - @, a tab, a CR, or the full-width ＝ ＋ － ＠ (which Apple Numbers reads as = + - @)
 * is prefixed with '.
 */
export const guarded = (text: string): string =>
  /^[=+\-@\t\r\uff1d\uff0b\uff0d\uff20]/.test(text) ? `'${text}` : text;

/**
 * Records written a few at a time (issue 26, item 6: the page joins the pieces in time slices),
 * the byte order mark once, before the first: the same text as one `stringify` of them all.
 */
export function* frenchCsvPieces(records: Iterable<string[]>): Generator<string> {
  let chunk: string[][] = [];
  let first = true;
  for (const record of records) {
    chunk.push(record);
    if (chunk.length === RECORDS_PER_PIECE) {
      yield stringify(chunk, { ...OPTIONS, bom: first });
      [chunk, first] = [[], false];
    }
  }
  if (chunk.length > 0) yield stringify(chunk, { ...OPTIONS, bom: first });
}
