// Streaming readers for the order import formats (SPEC section 12): newline-delimited JSON and
// CSV with a header line. They hold one line (or one CSV record) at a time, so a file of millions
// of orders reads in flat memory (I3). Line numbers are the file's physical lines, from 1, as
// an operator sees them in an editor: blank lines are skipped but counted (I1 reports them).
import path from 'node:path';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parse } from 'csv-parse';
import type { FieldError } from './validate-order.js';

export type OrderFormat = 'ndjson' | 'csv';

export type ReadEntry =
  { line: number; record: Record<string, unknown> } | { line: number; error: FieldError };

/** The field named by errors about a whole line rather than one of its fields. */
export const LINE_FIELD = '(ligne)';

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

/** The physical lines of a stream, without their line break (\n or \r\n). */
async function* physicalLines(input: Readable): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let start = 0;
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
      yield pending.slice(start, end > start && pending[end - 1] === '\r' ? end - 1 : end);
      start = end + 1;
    }
    pending = pending.slice(start);
  }
  pending += decoder.end();
  if (pending !== '') yield pending.endsWith('\r') ? pending.slice(0, -1) : pending;
}

/** NDJSON: one JSON object a line. */
export async function* readNdjson(input: Readable): AsyncGenerator<ReadEntry> {
  let line = 0;
  for await (const raw of physicalLines(input)) {
    line++;
    const text = line === 1 && raw.startsWith(BOM) ? raw.slice(1) : raw;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      yield { line, error: { field: LINE_FIELD, message: `JSON invalide : ${(error as Error).message}` } };
      continue;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      yield { line, record: value as Record<string, unknown> };
    } else {
      yield { line, error: { field: LINE_FIELD, message: 'un objet JSON par ligne attendu' } };
    }
  }
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

/** CSV with a header line; an empty cell is an absent field. */
export async function* readCsv(input: Readable): AsyncGenerator<ReadEntry> {
  // Records come back as arrays, blank lines included, so that line numbers can be counted here:
  // csv-parse's own info.lines miscounts \r\n inside quoted fields. A quote inside an unquoted
  // field is taken literally (relax_quotes), as spreadsheets write it.
  let broken: { afterRecords: number; message: string } | undefined;
  const parser = parse({
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    record_delimiter: ['\r\n', '\n'],
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
      const stop = unreadable();
      if (stop) {
        yield stop;
        return;
      }
      records++;
      const start = line;
      line += linesSpanned(cells);
      if (cells.every((cell) => cell.trim() === '')) continue;
      if (header === undefined) {
        header = cells.map((name) => name.trim());
        continue;
      }
      if (cells.length !== header.length) {
        const message = `${cells.length} colonnes au lieu des ${header.length} de l'en-tête`;
        yield { line: start, error: { field: LINE_FIELD, message } };
        continue;
      }
      yield { line: start, record: recordOf(header, cells) };
    }
    const stop = unreadable();
    if (stop) yield stop;
  } finally {
    input.unpipe(parser);
  }
}

export function readOrders(input: Readable, format: OrderFormat): AsyncGenerator<ReadEntry> {
  return format === 'ndjson' ? readNdjson(input) : readCsv(input);
}
