// V1: a report's rows as CSV (RFC 4180, CRLF line ends): a header line of the ids, dimensions then
// metrics in request order, then the rows in the JSON answer's order with the same values (numbers
// as JSON writes them: dot decimals, no thousands separators). A text cell that begins with `=`,
// `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (csv-stringify's escape_formulas),
// so that a spreadsheet never evaluates a store's status or address; numbers are not text cells.
import { stringify } from 'csv-stringify/sync';
import type { ReportRow, RowSequence } from '../metrics/engine.js';

// csv-stringify quotes a field holding the whole record delimiter (CRLF) but not a lone CR or LF,
// which RFC 4180 also allows only inside quotes.
const OPTIONS = { record_delimiter: 'windows', escape_formulas: true, quoted_match: /[\r\n]/ } as const;

/**
 * The CSV in pieces of at most `rowsPerPiece` records (issue 18, finding 2: no single string of
 * the whole answer). Every record ends with its CRLF, so the pieces joined are exactly the text
 * one call over all the records writes.
 */
export function* reportCsvPieces(
  columns: readonly string[],
  rows: RowSequence,
  rowsPerPiece: number,
): Generator<string> {
  yield stringify([[...columns]], OPTIONS);
  for (let start = 0; start < rows.length; start += rowsPerPiece) {
    const records = rows.slice(start, start + rowsPerPiece).map((row) => columns.map((id) => row[id] ?? ''));
    yield stringify(records, OPTIONS);
  }
}

/** The whole CSV in one string: small answers, and the reference the pieces are tested against. */
export function reportCsv(columns: readonly string[], rows: readonly ReportRow[]): string {
  const records: (string | number)[][] = [[...columns]];
  for (const row of rows) records.push(columns.map((id) => row[id] ?? ''));
  return stringify(records, OPTIONS);
}
