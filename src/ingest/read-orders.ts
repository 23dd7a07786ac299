// Streaming readers for the order import formats (SPEC section 12): newline-delimited JSON and
// CSV with a header line. They hold one line (or one CSV record) at a time, so a file of millions
// of orders reads in flat memory (I3). Line numbers are the file's physical lines, from 1, as
// an operator sees them in an editor: blank lines are skipped but counted (I1 reports them).
import path from 'node:path';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parse } from 'csv-parse';
import { NUL_REFUSED, printable } from './printable.js';
import { gatherOrderLines } from './csv-lines.js';
import { MAX_CSV_LINE_BYTES, MAX_NDJSON_LINE_BYTES } from './line-bounds.js';
import type { ReadEntry } from './read-entry.js';

export type OrderFormat = 'ndjson' | 'csv';

export type { ReadEntry, RowProblem } from './read-entry.js';

/** The field named by errors about a whole line rather than one of its fields. */
export const LINE_FIELD = '(ligne)';
/** The field named by errors that refuse the whole file (its encoding). */
export const FILE_FIELD = '(fichier)';

const BOM = '\uFEFF';

/** The format a file name announces, or undefined when its extension says nothing. */
export function formatOfFileName(file: string): OrderFormat | undefined {
  const extension = path.extname(file).toLowerCase();
  if (extension === '.ndjson' || extension === '.jsonl') return 'ndjson';
  if (extension === '.csv') return 'csv';
  return undefined;
}

/**
 * Standard input has no name: an NDJSON file starts with `{`, anything else is taken as CSV.
 * Returns the format and a stream that replays the bytes read to decide.
 */
export async function sniffFormat(input: Readable): Promise<{ format: OrderFormat; input: Readable }> {
  const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const head: (Buffer | string)[] = [];
  const decoder = new StringDecoder('utf8'); // a character may straddle two chunks
  let format: OrderFormat | undefined;
  while (format === undefined) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
    const text = typeof next.value === 'string' ? next.value : decoder.write(next.value);
    const first = /[^\s\uFEFF]/.exec(text)?.[0];
    if (first !== undefined) format = first === '{' ? 'ndjson' : 'csv';
  }
  async function* replay(): AsyncGenerator<Buffer | string> {
    yield* head;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { format: format ?? 'ndjson', input: Readable.from(replay(), { objectMode: false }) };
}

/**
 * Longest physical line (finding 1): past it, the line is an error, never held whole. An NDJSON
 * line holds a whole order with up to 1,000 lines (L1), a CSV line one order line (L8): each
 * bound is computed from the fields' bounds (src/ingest/line-bounds.ts).
 */
export const MAX_LINE_BYTES = MAX_CSV_LINE_BYTES;
export { MAX_NDJSON_LINE_BYTES };

/** The bound in a message: in Kio below a Mio, else in Mio. */
const boundText = (bytes: number): string =>
  bytes < 1024 * 1024 ? `${Math.round(bytes / 1024)} Kio` : `${Math.floor(bytes / (1024 * 1024))} Mio`;

/**
 * A line's text, and whether it ended with \r\n (kept for CSV: a quoted cell keeps its breaks);
 * or what is wrong with it, `fatal` when the file is not UTF-8 (then it is the last line).
 */
type PhysicalLine = { text: string; crlf: boolean } | { problem: string; fatal?: true };

const NEWLINE = 0x0a;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The most lines in one batch: a few milliseconds of parsing and validation. */
const MAX_BATCH_LINES = 2048;

const SAVE_AS_UTF8 = 'enregistrez-le en UTF-8 (import refusé en entier)';
const NOT_UTF8 = `le fichier n’est pas en UTF-8 (octets invalides sur cette ligne : Windows-1252 ou Latin-1 ?) : ${SAVE_AS_UTF8}`;

/**
 * The encoding the first bytes of a file announce when it is not UTF-8 (issue 18, finding 3): a
 * UTF-16 or UTF-32 byte order mark, or, without one, ASCII text in UTF-16 (every other byte 0).
 * Such a file decodes as valid UTF-8 full of NUL characters: it is refused at once, by name.
 */
export function foreignEncoding(head: Buffer): string | undefined {
  const [b0, b1, b2, b3] = head;
  let name: string | undefined;
  let mark = true;
  if (b0 === 0x00 && b1 === 0x00 && b2 === 0xfe && b3 === 0xff) name = 'UTF-32 BE';
  else if (b0 === 0xff && b1 === 0xfe && b2 === 0x00 && b3 === 0x00) name = 'UTF-32 LE';
  else if (b0 === 0xfe && b1 === 0xff) name = 'UTF-16 BE';
  else if (b0 === 0xff && b1 === 0xfe) name = 'UTF-16 LE';
  else if (head.length >= 4 && b0 !== 0 && b1 === 0 && b2 !== 0 && b3 === 0)
    [name, mark] = ['UTF-16 LE', false];
  else if (head.length >= 4 && b0 === 0 && b1 !== 0 && b2 === 0 && b3 !== 0)
    [name, mark] = ['UTF-16 BE', false];
  if (name === undefined) return undefined;
  const seen = mark ? 'sa marque d’ordre des octets le dit' : 'un octet sur deux est nul';
  return `le fichier est en ${name}, pas en UTF-8 (${seen}) : ${SAVE_AS_UTF8}`;
}

/** Bytes checked at the start of a stream (foreignEncoding). */
const HEAD_BYTES = 4;

/**
 * The stream's chunks as bytes, its first ones held until HEAD_BYTES are known and checked; a
 * foreign encoding ends the stream and is noted in `refusal`.
 */
async function* checkedChunks(input: Readable, refusal: { message?: string }): AsyncGenerator<Buffer> {
  let head: Buffer | undefined = Buffer.alloc(0);
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (head === undefined) {
      yield bytes;
      continue;
    }
    head = Buffer.concat([head, bytes]);
    if (head.length < HEAD_BYTES) continue;
    refusal.message = foreignEncoding(head);
    if (refusal.message !== undefined) return;
    yield head;
    head = undefined;
  }
  if (head !== undefined && head.length > 0) {
    refusal.message = foreignEncoding(head);
    if (refusal.message === undefined) yield head;
  }
}

/**
 * The physical lines of a stream, without their line break (\n or \r\n), split on bytes: a line
 * longer than maxBytes is dropped as it streams in (memory stays at one chunk whatever the line),
 * and a line that is not valid UTF-8 is a problem of its own, never decoded with replacement
 * characters (finding 13). A newline byte never occurs inside a UTF-8 sequence. The lines come
 * in batches, those that end in one chunk of the stream: one await a chunk, not one a line.
 */
export async function* physicalLineBatches(
  input: Readable,
  maxBytes = MAX_LINE_BYTES,
): AsyncGenerator<PhysicalLine[]> {
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  const decoded = (line: Buffer): PhysicalLine => {
    const crlf = line.length > 0 && line[line.length - 1] === 0x0d;
    try {
      return { text: utf8.decode(crlf ? line.subarray(0, -1) : line), crlf };
    } catch {
      return { problem: NOT_UTF8, fatal: true };
    }
  };
  const finish = (): PhysicalLine => {
    const line = Buffer.concat(parts, size);
    parts = [];
    size = 0;
    if (tooLong) {
      tooLong = false;
      return { problem: `ligne trop longue : ${boundText(maxBytes)} au plus` };
    }
    return decoded(line);
  };
  const keep = (piece: Buffer) => {
    if (tooLong) return;
    if (size + piece.length > maxBytes + 1) {
      tooLong = true; // +1: room for the \r of a \r\n
      parts = [];
      size = 0;
      return;
    }
    parts.push(piece);
    size += piece.length;
  };
  const refusal: { message?: string } = {};
  for await (const bytes of checkedChunks(input, refusal)) {
    let batch: PhysicalLine[] = [];
    let start = 0;
    for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
      // Most lines lie whole in one chunk: decoded in place, without a copy.
      if (size === 0 && !tooLong && end - start <= maxBytes + 1)
        batch.push(decoded(bytes.subarray(start, end)));
      else {
        keep(bytes.subarray(start, end));
        batch.push(finish());
      }
      start = end + 1;
      // A large chunk is handed over in parts, so that its reader can give the event loop a turn.
      if (batch.length === MAX_BATCH_LINES) {
        yield batch;
        batch = [];
      }
    }
    if (start < bytes.length) keep(Buffer.from(bytes.subarray(start)));
    if (batch.length > 0) yield batch;
  }
  if (refusal.message !== undefined) yield [{ problem: refusal.message, fatal: true }];
  else if (size > 0 || tooLong) yield [finish()];
}

/** physicalLineBatches, one line at a time. */
export async function* physicalLines(
  input: Readable,
  maxBytes = MAX_LINE_BYTES,
): AsyncGenerator<PhysicalLine> {
  for await (const batch of physicalLineBatches(input, maxBytes)) yield* batch;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether a JSON text holds a `\u0000` escape (a NUL character once parsed): a `\u0000` preceded
 * by an even number of backslashes, so not the text `\\u0000` (a backslash, then `u0000`).
 */
function hasNulEscape(text: string): boolean {
  for (let at = text.indexOf('\\u0000'); at !== -1; at = text.indexOf('\\u0000', at + 1)) {
    let before = 0;
    while (at - before - 1 >= 0 && text.charCodeAt(at - before - 1) === 0x5c) before++;
    if (before % 2 === 0) return true;
  }
  return false;
}

const holdsNul = (value: unknown): boolean =>
  (typeof value === 'string' && value.includes('\u0000')) ||
  (Array.isArray(value) && value.some((v) => typeof v === 'string' && v.includes('\u0000')));

/**
 * The field of a record holding a NUL character (its name, its text, a text of its list), an order
 * line's as `lines[k].field` (L1), or the whole line's.
 */
function nulField(record: Record<string, unknown>): string {
  for (const [name, value] of Object.entries(record))
    if (name.includes('\u0000') || holdsNul(value)) return printable(name);
  if (Array.isArray(record.lines)) {
    for (const [k, line] of record.lines.entries()) {
      if (!isRecord(line)) continue;
      const field = nulField(line);
      if (field !== LINE_FIELD) return `lines[${k}].${field}`;
    }
  }
  return LINE_FIELD; // inside a nested value
}

/**
 * One NDJSON line's entry. PostgreSQL text cannot hold a NUL character (finding 3): a raw one is
 * never valid JSON, so it is looked for only once JSON.parse has failed; a `\u0000` escape is, in
 * any field, one indexOf a line (I3). Errors never quote a NUL (their messages are stored).
 */
function ndjsonEntry(line: number, text: string): ReadEntry | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = text.includes('\u0000')
      ? NUL_REFUSED
      : `JSON invalide : ${printable(error instanceof Error ? error.message : String(error))}`;
    return { line, error: { field: LINE_FIELD, message } };
  }
  if (!isRecord(value))
    return { line, error: { field: LINE_FIELD, message: 'un objet JSON par ligne attendu' } };
  if (hasNulEscape(text)) return { line, error: { field: nulField(value), message: NUL_REFUSED } };
  return { line, record: value };
}

/** NDJSON: one JSON object a line, in batches (those of physicalLineBatches). */
export async function* readNdjsonBatches(input: Readable): AsyncGenerator<ReadEntry[]> {
  let line = 0;
  for await (const physicals of physicalLineBatches(input, MAX_NDJSON_LINE_BYTES)) {
    const entries: ReadEntry[] = [];
    for (const physical of physicals) {
      line++;
      if ('problem' in physical) {
        if (physical.fatal) {
          entries.push({ line, error: { field: FILE_FIELD, message: physical.problem }, fatal: true });
          yield entries;
          return; // not UTF-8: the file is refused, nothing more is read
        }
        entries.push({ line, error: { field: LINE_FIELD, message: physical.problem } });
        continue;
      }
      const raw = physical.text;
      const entry = ndjsonEntry(line, line === 1 && raw.startsWith(BOM) ? raw.slice(1) : raw);
      if (entry !== undefined) entries.push(entry);
    }
    if (entries.length > 0) yield entries;
  }
}

/** NDJSON: one JSON object a line. */
export async function* readNdjson(input: Readable): AsyncGenerator<ReadEntry> {
  for await (const batch of readNdjsonBatches(input)) yield* batch;
}

/** The physical lines a CSV record spans: line breaks only occur inside quoted fields. */
function linesSpanned(cells: readonly string[]): number {
  let breaks = 0;
  for (const cell of cells)
    for (let i = cell.indexOf('\n'); i !== -1; i = cell.indexOf('\n', i + 1)) breaks++;
  return 1 + breaks;
}

function recordOf(header: readonly string[], cells: readonly string[]): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  header.forEach((name, i) => {
    const cell = cells[i];
    if (name !== '' && cell !== undefined && cell !== '') record[name] = cell;
  });
  return record;
}

/** Longest CSV record, in characters, quoted line breaks included: an unclosed quote stops there. */
const MAX_RECORD_CHARS = 1024 * 1024;

interface Stop {
  line?: number;
  message?: string;
  /** The file is not UTF-8: refused whole. */
  fatal?: boolean;
  /** Some text handed to the parser holds a NUL character: records are then checked for one. */
  nul?: boolean;
}

/**
 * The stream's text for the CSV parser, line by line through physicalLines: the first line too
 * long or not UTF-8 ends the text and is noted in `stop` (after it, where records start is not
 * known). Lines go in batches of about 64 KiB, each searched once for a NUL character (finding 3):
 * records are searched only after one was seen (I3).
 */
async function* checkedText(input: Readable, stop: Stop): AsyncGenerator<string> {
  let line = 0;
  let batch = '';
  const handOver = (text: string): string => {
    if (text.includes('\u0000')) stop.nul = true;
    return text;
  };
  for await (const physical of physicalLines(input)) {
    line++;
    if ('problem' in physical) {
      stop.line = line;
      stop.message = physical.problem;
      stop.fatal = physical.fatal === true;
      break;
    }
    batch += physical.crlf ? `${physical.text}\r\n` : `${physical.text}\n`;
    if (batch.length >= 64 * 1024) {
      yield handOver(batch);
      batch = '';
    }
  }
  if (batch !== '') yield handOver(batch);
}

/** The field of the first cell holding a NUL character, or undefined when none does. */
function nulCell(header: readonly string[] | undefined, cells: readonly string[]): string | undefined {
  const at = cells.findIndex((cell) => cell.includes('\u0000'));
  if (at === -1) return undefined;
  const name = header?.[at];
  return name ? printable(name) : LINE_FIELD;
}

/**
 * CSV with a header line; an empty cell is an absent field. `seen.header` is the header once read
 * (a header with `line_id` holds one order line a row: readCsvOrders gathers them, L8).
 */
export async function* readCsv(
  rawInput: Readable,
  seen: { header?: readonly string[] } = {},
): AsyncGenerator<ReadEntry> {
  const stop: Stop = {};
  const input = Readable.from(checkedText(rawInput, stop), { objectMode: false });
  // Records come back as arrays, blank lines included, so that line numbers can be counted here:
  // csv-parse's own info.lines miscounts \r\n inside quoted fields. A quote inside an unquoted
  // field is taken literally (relax_quotes), as spreadsheets write it.
  let broken: { afterRecords: number; message: string } | undefined;
  const parser = parse({
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    record_delimiter: ['\r\n', '\n'],
    max_record_size: MAX_RECORD_CHARS,
    // A malformed quote is reported as a skip, keeping the records read before it, which a
    // stream error would drop.
    skip_records_with_error: true,
    on_skip: (error) => {
      broken ??= { afterRecords: parser.info.records, message: error?.message ?? 'guillemet mal fermé' };
    },
  });
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);
  let header: string[] | undefined;
  let records = 0;
  let line = 1; // where the next record starts
  // After a malformed quote, where the next records start is unknown: the rest is not read.
  const unreadable = (): ReadEntry | undefined =>
    broken !== undefined && records >= broken.afterRecords
      ? { line, error: { field: LINE_FIELD, message: `CSV illisible à partir d'ici : ${broken.message}` } }
      : undefined;
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      const unread = unreadable();
      if (unread) {
        yield unread;
        return;
      }
      records++;
      const start = line;
      line += linesSpanned(cells);
      if (cells.every((cell) => cell.trim() === '')) continue;
      const nul = stop.nul === true ? nulCell(header, cells) : undefined;
      if (nul !== undefined) {
        const error = { field: nul, message: NUL_REFUSED };
        if (header !== undefined) {
          yield { line: start, error };
          continue;
        }
        // A NUL in the header names no column one could import: the file is refused.
        yield { line: start, error, fatal: true };
        return;
      }
      if (header === undefined) {
        header = cells.map((name) => name.trim());
        // A column twice would keep one of its values silently (finding 13).
        const twice = header.find((name, i) => name !== '' && header?.indexOf(name) !== i);
        if (twice !== undefined) {
          const message = `colonne « ${twice.slice(0, 60)} » en double dans l'en-tête : fichier refusé`;
          yield { line: start, error: { field: LINE_FIELD, message }, fatal: true };
          return;
        }
        seen.header = header;
        continue;
      }
      if (cells.length !== header.length) {
        const message = `${cells.length} colonnes au lieu des ${header.length} de l'en-tête`;
        yield { line: start, error: { field: LINE_FIELD, message } };
        continue;
      }
      yield { line: start, record: recordOf(header, cells) };
    }
    const unread = unreadable();
    if (unread) yield unread;
    else if (stop.fatal === true)
      yield { line: stop.line ?? 1, error: { field: FILE_FIELD, message: stop.message ?? '' }, fatal: true };
    else if (stop.line !== undefined)
      yield {
        line: stop.line,
        error: { field: LINE_FIELD, message: `${stop.message ?? ''} ; la suite du fichier n'est pas lue` },
      };
  } finally {
    input.unpipe(parser);
    input.destroy();
  }
}

/** Entries of any source in batches of at most `size`. */
export async function* inBatches(
  entries: AsyncIterable<ReadEntry>,
  size = 1000,
): AsyncGenerator<ReadEntry[]> {
  let batch: ReadEntry[] = [];
  for await (const entry of entries) {
    batch.push(entry);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** CSV orders: one a row, or one a group of rows when the header has line columns (L8). */
export function readCsvOrders(input: Readable): AsyncGenerator<ReadEntry> {
  const seen: { header?: readonly string[] } = {};
  return gatherOrderLines(readCsv(input, seen), () => seen.header);
}

/** The entries of a file in batches: NDJSON a stream chunk at a time, CSV a thousand records. */
export function readOrders(input: Readable, format: OrderFormat): AsyncGenerator<ReadEntry[]> {
  return format === 'ndjson' ? readNdjsonBatches(input) : inBatches(readCsvOrders(input));
}
