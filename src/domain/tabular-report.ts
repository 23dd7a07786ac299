// GET /api/reports/tabular as a use case (sections 6–7, C1): the answer of a parsed query for an
// organization, from the response cache when it holds one, else computed by the report engine
// and shaped into the body the API sends. The route only parses, calls this and maps the result.
import type { ReportEngine, RowSequence } from '../metrics/engine.js';
import { comparedColumns } from '../query/compare.js';
import { NO_EXTENSIONS, type Format, type TabularQuery } from '../query/parse.js';
import { planReport } from '../query/plan.js';
import type { Organization } from './organizations.js';
import { reportCsvPieces } from './report-csv.js';
import { TimeSlices } from '../limits/time-slice.js';
import { asOrganization } from '../limits/organization-turns.js';

/**
 * A finished answer: its body (JSON, or CSV under V1) as the bytes sent, and whether rows were
 * left out (T6, O1). Bytes, not a string, so that the cache and every response sending it share
 * one copy (issue 18, finding 2: each response used to encode its own).
 */
export interface TabularAnswer {
  readonly body: Buffer;
  readonly truncated: boolean;
}

/** Where answers are kept for a minute (C1): in the instance, or shared through Redis. */
export interface AnswerCache {
  get(key: string): Promise<TabularAnswer | undefined>;
  set(key: string, answer: TabularAnswer): Promise<void>;
}

/**
 * C1's key, plus the Report settings, so that a settings change is never hidden by a cached answer,
 * and section 14's parameters (F1, G2, O1, V1) when a request uses them.
 */
function tabularCacheKey(organization: Organization, q: TabularQuery, format: Format): string {
  const { excludedStatuses, deductions } = organization.settings;
  const key: unknown[] = [
    organization.id,
    q.dimensions,
    q.metrics,
    q.from,
    q.to,
    q.timezone,
    q.limit,
    excludedStatuses,
    deductions,
  ];
  if (format !== 'json' || !usesNoExtension(q)) key.push(format, q.filters, q.granularity, q.offset);
  // PC1: the comparison actually used (mode and resolved period).
  if (q.comparison) key.push(['compare', q.comparison.mode, q.comparison.from, q.comparison.to]);
  if (q.sort) key.push(['sort', q.sort]); // L7, L10
  return JSON.stringify(key);
}

const usesNoExtension = (q: TabularQuery): boolean =>
  Object.keys(q.filters).length === 0 &&
  q.granularity === NO_EXTENSIONS.granularity &&
  q.offset === NO_EXTENSIONS.offset;

/** PC1: the comparison period actually used, in the echo's field order. */
const echo = ({ mode, from, to }: NonNullable<TabularQuery['comparison']>) => ({ mode, from, to });

/** V1: the CSV's columns, the JSON row's keys in order (PC1's added fields included). */
const csvColumns = (q: TabularQuery): string[] =>
  q.comparison ? comparedColumns(q.dimensions, q.metrics) : [...q.dimensions, ...q.metrics];

/**
 * Rows serialized per piece: no string of the whole answer is ever built (finding 2), and the
 * event loop gets a turn between pieces once a slice is over (issue 26, item 6: a piece of 250
 * compared rows, 36 fields each, takes a few milliseconds).
 */
const ROWS_PER_PIECE = 250;

/** The comma between two pieces of JSON rows. */
const COMMA = Buffer.from(',');

/**
 * The JSON body in pieces: T2's fields, and section 14's parameters only where they differ from
 * their defaults (after `timezone`), so that a request without them gets exactly the reference's
 * answer. JSON.stringify writes an object as its fields in order without spaces, so the pieces
 * joined are byte for byte what one call over the whole answer wrote.
 */
function* jsonPieces(query: TabularQuery, rows: RowSequence): Generator<string | Buffer> {
  const head = JSON.stringify({
    dimensions: query.dimensions,
    metrics: query.metrics,
    from: query.from,
    to: query.to,
    timezone: query.timezone,
    ...(query.granularity === NO_EXTENSIONS.granularity ? {} : { granularity: query.granularity }),
    ...(Object.keys(query.filters).length === 0 ? {} : { filters: query.filters }),
    ...(query.offset === NO_EXTENSIONS.offset ? {} : { offset: query.offset }),
    ...(query.comparison ? { compare: echo(query.comparison) } : {}),
  });
  yield `${head.slice(0, -1)},"rows":[`;
  for (let start = 0; start < rows.length; start += ROWS_PER_PIECE) {
    // One call per piece, its brackets dropped (`[a,b]` is `a`, `,`, `b`): a string per row then
    // joined made the collector three copies of the answer's text instead of one (the demo's
    // widest compared answer: about 15 % less CPU, docs/benchmarks.md).
    // The brackets are dropped from the piece's bytes (one byte each in UTF-8), not from its
    // text: a slice of the text with a comma before it was a second string the length of the
    // piece, flattened to be encoded (issue 29, item 2: the young generation's garbage of a
    // 100,000-row answer, collected while other organizations' requests wait).
    const piece = Buffer.from(JSON.stringify(rows.slice(start, start + ROWS_PER_PIECE)), 'utf8');
    if (start > 0) yield COMMA;
    yield piece.subarray(1, -1);
  }
  yield `],"rowCount":${rows.length}}`;
}

/**
 * The answer's bytes: each piece encoded as it comes, `room` told the size so far, the event loop
 * given a turn between pieces in time slices (issue 26, item 6), then joined once.
 */
async function encoded(pieces: Iterable<string | Buffer>, room: (bytes: number) => void): Promise<Buffer> {
  const slices = new TimeSlices();
  const parts: Buffer[] = [];
  let bytes = 0;
  for (const piece of pieces) {
    const part = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
    bytes += part.length;
    room(bytes);
    parts.push(part);
    await slices.pause();
  }
  return concatenated(parts, bytes, slices);
}

/** Buffer.concat in slices: copying 70 MB at once holds the event loop for tens of milliseconds. */
async function concatenated(parts: readonly Buffer[], bytes: number, slices: TimeSlices): Promise<Buffer> {
  const body = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const part of parts) {
    at += part.copy(body, at);
    await slices.pause();
  }
  return body;
}

/**
 * The body of `rows`. `room` may throw to stop before the answer outgrows what can be sent
 * (the answer budget, issue 18 finding 2).
 */
export function tabularBody(
  query: TabularQuery,
  format: Format,
  rows: RowSequence,
  room: (bytes: number) => void = () => undefined,
): Promise<Buffer> {
  return encoded(
    format === 'csv' ? reportCsvPieces(csvColumns(query), rows, ROWS_PER_PIECE) : jsonPieces(query, rows),
    room,
  );
}

/** Room for answers being serialized and sent (src/limits/answer-budget.ts): SERVICE_BUSY when full. */
export interface AnswerRoom {
  reserve(organizationId: string): { grow(bytes: number): void; release(): void };
}

/**
 * Called only when an answer must be computed (a cached one needs none): the signal that cancels
 * the computation and the serialization, and what to call once both have ended.
 */
export type Cancellation = () => { readonly signal: AbortSignal; readonly done: () => void };

type TabularDeps = { readonly engine: ReportEngine; readonly cache: AnswerCache; readonly room?: AnswerRoom };

/**
 * The answer, computed and serialized in the organization's turns (issue 29, item 2);
 * `dataVersion`: the organization's, read after the request arrived (ReportPlan.dataVersion).
 */
export function runTabularReport(
  deps: TabularDeps,
  organization: Organization,
  query: TabularQuery,
  format: Format,
  cancellation?: Cancellation,
  dataVersion?: string,
): Promise<TabularAnswer> {
  return asOrganization(organization.id, () =>
    tabularAnswer(deps, organization, query, format, cancellation, dataVersion),
  );
}

async function tabularAnswer(
  deps: TabularDeps,
  organization: Organization,
  query: TabularQuery,
  format: Format,
  cancellation?: Cancellation,
  dataVersion?: string,
): Promise<TabularAnswer> {
  const key = tabularCacheKey(organization, query, format);
  const cached = await deps.cache.get(key);
  if (cached) return cached;
  // No computation, nor serialization past the room left, for an answer that could not be sent;
  // the bytes serialized count until the response holds the answer (finding 2).
  const reservation = deps.room?.reserve(organization.id);
  const cancel = cancellation?.();
  try {
    // Issue 29, item 2: rows built as they are serialized where the engine can, a piece at a time.
    const plan = planReport(query, organization, dataVersion);
    const { engine } = deps;
    const { rows, truncated } = await (engine.runInPieces
      ? engine.runInPieces(plan, cancel?.signal)
      : engine.run(plan, cancel?.signal));
    // A client gone while its answer is serialized stops it too: with rows built as they are
    // serialized, that is most of the work, which went on to the end of a 100,000-row answer
    // (cached, sent to no one) in the turns other organizations' requests waited for.
    const grow = (bytes: number) => {
      cancel?.signal.throwIfAborted();
      reservation?.grow(bytes);
    };
    const answer = { body: await tabularBody(query, format, rows, grow), truncated };
    await deps.cache.set(key, answer);
    return answer;
  } finally {
    cancel?.done();
    reservation?.release();
  }
}
