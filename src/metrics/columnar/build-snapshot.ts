// Reads one organization's orders into a Snapshot with binary `COPY … TO STDOUT`: the database only
// filters and sends the stored columns, in whatever order it finds them (no ORDER BY, no join, no
// aggregate), and OrderColumns decodes the bytes as they arrive, one piece of the output per turn
// of the event loop. The orders' lines (section 15) come after them in a COPY of their own, each
// line finding its order by the order's key (order-keys.ts): joined to the orders in the database
// (an aggregate of each order's lines, LATERAL), they cost it three times the two read apart.
//
// On a PostgreSQL server that is one statement (the planner reads the organization's rows through
// its index or by a scan), streamed as fast as it is read while the server's other sessions go
// on. The embedded database runs one statement at a time for everyone and produces a statement's
// whole output at once: there, an organization of more than `chunkRows` orders is read in short
// statements over ranges of the table's pages (TID range scans: one sequential pass over the
// whole table, other organizations' rows skipped), others' queries running between them.
// Statements that see different moments are harmless: data_version and the database snapshot are
// read before the first row, so a change made meanwhile is read again by the first delta (issue
// 19), which retires whatever the build read of it (X1). So are the lines: a line read after its
// order changed belongs to an order the delta retires, and a line whose order was not read (written
// since) is left out, the delta reading that order with its lines.
import type { Database, Queryable } from '../../db/database.js';
import type { BuildProgress } from './build-progress.js';
import { BinaryCopyRows } from './copy-binary.js';
import { LINE_FIELD_COUNT, LINE_ROW_FIELDS } from './line-columns.js';
import { LiveSnapshot } from './live-snapshot.js';
import {
  AmountOutOfRange,
  FIELD_COUNT,
  nextTurn,
  ORDER_FIELDS,
  OrderColumns,
  OverBudget,
} from './order-columns.js';
import { OrderKeys } from './order-keys.js';
import { BYTES_PER_ORDER, type Part, type Snapshot } from './snapshot.js';
import { linesAtOnce, sizeForBuild, type RowsBeforeOrders, type SnapshotSize } from './snapshot-size.js';
import { byPages, DEFAULT_CHUNK_ROWS, tidRange, type Pages } from './page-statements.js';

/** What a snapshot is read from: the database's SQL and its COPY output. */
export type SnapshotSource = Pick<Database, 'engine' | 'query' | 'copyOut' | 'transaction'> &
  Partial<Pick<Database, 'giveBack'>>;

/** Why an organization is answered by SQL instead of a snapshot, at a given data version. */
export interface Unsupported {
  readonly version: string;
  readonly reason: 'over-budget' | 'amount-range';
}

export interface BuildOptions {
  /** Give up (over-budget) when the snapshot would need more than this. */
  readonly maxBytes: number;
  readonly chunkRows?: number;
  /** Orders whose customers are coded together, BATCH_ORDERS by default (a test's fewer). */
  readonly customerBatchOrders?: number;
  /** Customers coded a step at a time during a read by pages, STEP_KEYS by default (a test's fewer). */
  readonly customerStepKeys?: number;
  /**
   * The lines read as the orders are, the next statement asked for before the last one's output is
   * decoded (HELD_OUTPUTS): for a build no report waits beside (a command's), where
   * HELD_LINE_OUTPUTS would only leave PGlite idle. At a million orders with their lines, the
   * import's preparation took 10.5–10.7 s instead of 12.5–14.7 s.
   */
  readonly linesAhead?: boolean;
  /** Filled in as the build reads (issue 28: the Retry-After of a report that cannot wait). */
  readonly progress?: BuildProgress;
  /** The organization's rows counted just before (issue 29: counted once, sizeForBuild). */
  readonly counted?: SnapshotSize;
  /**
   * Issue 28, instead of `counted`: the orders counted and the lines looked for just
   * before, and the whole count, asked for once the orders are read and gathered (not beside them),
   * its budget check then, before the lines.
   */
  readonly counting?: { readonly before: RowsBeforeOrders; readonly whole: () => Promise<SnapshotSize> };
  /**
   * Issue 28: told, once the orders are read and before their lines are, the snapshot of the
   * orders alone at the build's version (every order with no line), for the reports that read no
   * line (order grain, no line metric or filter: ReportPlan.readsLines false). Not called when
   * the organization has no line to read (the whole snapshot comes as soon), nor when the orders
   * alone are already unsupported.
   */
  readonly onOrders?: (orders: Snapshot) => void;
}

/** What a build reads from one table: its rows of the organization, as binary COPY fields. */
interface Read {
  readonly table: 'orders' | 'order_lines';
  readonly alias: string;
  readonly fields: string;
  readonly fieldCount: number;
}
const ORDERS: Read = { table: 'orders', alias: 'o', fields: ORDER_FIELDS, fieldCount: FIELD_COUNT };
/** Each line with its order's key (OrderColumns.pushLine). */
const LINES: Read = {
  table: 'order_lines',
  alias: 'l',
  fields: `l.store_id, l.external_id, ${LINE_ROW_FIELDS}`,
  fieldCount: 2 + LINE_FIELD_COUNT,
};

/** What a snapshot is labelled with: the organization's data version, the database snapshot and the time. */
export type SnapshotLabel = Pick<LiveSnapshot, 'version' | 'databaseSnapshot' | 'readAt'>;

/**
 * The organization's label now (SnapshotLabel: the database snapshot is the next delta's start);
 * undefined when the organization does not exist. A build reads it before its rows: rows committed
 * after it carry a newer version, so the label can only be too old.
 */
export async function snapshotLabel(
  db: Pick<Queryable, 'query'>,
  organizationId: string,
): Promise<SnapshotLabel | undefined> {
  const [organization] = await db.query<{ data_version: string; snapshot: string; now: number }>(
    `SELECT data_version::text, pg_current_snapshot()::text AS snapshot,
       (extract(epoch FROM now()) * 1000)::float8 AS now
     FROM organizations WHERE id = $1`,
    [organizationId],
  );
  if (!organization) return undefined;
  return {
    version: String(organization.data_version),
    databaseSnapshot: organization.snapshot,
    readAt: Number(organization.now),
  };
}

/** Adds the organization's stores to the snapshot's codes; false when one changed address (codes.addStore). */
export async function addStores(db: Pick<Queryable, 'query'>, live: LiveSnapshot): Promise<boolean> {
  const stores = await db.query<{ id: string; address: string }>(
    'SELECT id::text, address FROM stores WHERE organization_id = $1',
    [live.organizationId],
  );
  let known = true;
  for (const store of stores) known = live.codes.addStore(Number(store.id), store.address) && known;
  return known;
}

/** COPY takes no parameters: its only values are integers formatted here. */
function copyRows(read: Read, organizationId: bigint, pages?: Pages): string {
  const a = read.alias;
  const range = pages ? ` AND ${tidRange(a, pages)}` : '';
  return `COPY (SELECT ${read.fields} FROM ${read.table} ${a} WHERE ${a}.organization_id = ${organizationId}${range}) TO STDOUT (FORMAT binary)`;
}

/**
 * The organization's snapshot at its current data version, an Unsupported answer when it cannot
 * have one, or undefined when the organization does not exist.
 */
export async function buildSnapshot(
  db: SnapshotSource,
  organizationId: string,
  options: BuildOptions,
): Promise<LiveSnapshot | Unsupported | undefined> {
  const chunkRows = options.chunkRows ?? DEFAULT_CHUNK_ROWS;
  // Read first: rows committed after it carry a newer version, so this label can only be too old.
  const label = await snapshotLabel(db, organizationId);
  if (!label) return undefined;
  const live = Object.assign(new LiveSnapshot(organizationId), label);
  const { version } = live;
  // Orders and lines counted: the snapshot's bytes checked before reading (lines are more than
  // half of it at 2.5 an order), and the build's progress counted in rows of both. Issue 28:
  // given `counting`, the orders are read first, then counted with the rest (below).
  const sized = await sizeBeforeOrders(db, organizationId, chunkRows, options);
  const expected = sized.orders;
  const { progress } = options;
  if (progress) progress.expectedOrders = expected;
  const fits = (size: SnapshotSize): boolean => {
    if (progress) progress.expected = size.orders + size.lines;
    return size.bytes <= options.maxBytes;
  };
  const maxOrders = Math.floor(options.maxBytes / BYTES_PER_ORDER);
  if (!('whole' in sized) && !fits(sized)) return { version, reason: 'over-budget' };
  await addStores(db, live); // new codes: every store is new to them

  // A small organization's rows are read through the index in one statement (a few lines each).
  const whole = db.engine !== 'embedded' || expected <= chunkRows;
  // Section 15: the orders' keys are kept only when the organization has lines to read; read in one
  // statement, no order comes twice (read by pages, a row the table moved may).
  // Room for the orders expected, no more than the budget's: past a bound, `expected` is an estimate.
  const room = Math.min(expected, maxOrders) + 64;
  const keys = sized.lines > 0 ? new OrderKeys(room, whole) : undefined;
  let linesRead = 0;
  const columns = new OrderColumns(
    room,
    live.codes,
    maxOrders,
    keys,
    options.customerBatchOrders,
    options.customerStepKeys,
  );
  const id = BigInt(organizationId); // an integer, written out by BigInt
  const orderRows: RowReader = {
    fieldCount: ORDERS.fieldCount,
    onRow: (data, rows) => {
      columns.push(data, rows.starts, rows.lengths);
      if (options.progress) counted(options.progress, columns.length);
    },
    // Issue 28: the customers coded a batch at a time; read by pages, a step of it between two
    // pieces, while this thread would wait for PGlite (customer-batch.ts).
    afterPiece: () => columns.codeCustomersDue(!whole),
  };
  const lineRows: RowReader = {
    fieldCount: LINES.fieldCount,
    onRow: (data, rows) => {
      columns.pushLine(data, rows.starts, rows.lengths);
      if (options.progress) counted(options.progress, columns.length + ++linesRead);
    },
  };
  // One statement when `whole`, else the table's pages, each statement's output decoded while the
  // next runs, `held` outputs at most.
  const read = (what: Read, reader: RowReader, held: number): Promise<void> =>
    whole
      ? copy(db, copyRows(what, id), reader)
      : pipelined(db, what.table, chunkRows, (pages) => copyRows(what, id, pages), reader, held);
  try {
    await read(ORDERS, orderRows, HELD_OUTPUTS);
    if (columns.length > maxOrders) return { version, reason: 'over-budget' };
    if (columns.absoluteCents > Number.MAX_SAFE_INTEGER) return { version, reason: 'amount-range' };
    // The orders gathered into their runs now: their part answers order-grain reports while the
    // lines are read, then takes the lines (withLines) without being gathered again.
    const orders = await columns.ordersPart();
    if (keys && options.onOrders) options.onOrders(ordersAlone(live, orders));
    // Issue 28: the whole count only now, before the lines. Beside the orders' read, or their
    // gathering, it took a core from them (a parallel count is three processes): at a million
    // orders they came no sooner than after it.
    if ('whole' in sized && !fits(await sized.whole())) return { version, reason: 'over-budget' };
    if (keys) await read(LINES, lineRows, options.linesAhead ? HELD_OUTPUTS : HELD_LINE_OUTPUTS);
    if (columns.absoluteCents > Number.MAX_SAFE_INTEGER) return { version, reason: 'amount-range' };
    live.addPart(columns.withLines(orders));
  } catch (error) {
    if (error instanceof AmountOutOfRange) return { version, reason: 'amount-range' };
    if (error instanceof OverBudget) return { version, reason: 'over-budget' };
    throw error;
  }
  return live;
}

/**
 * What a build knows of the organization's rows before it reads the orders: its count (counted, or
 * counted now), or given `counting` its orders and whether it has lines, the whole
 * count to come. As sizeForBuild, a look that saw no line is made again after the version was read
 * (X1: lines written in between must not be missing from a snapshot labelled with their version).
 */
async function sizeBeforeOrders(
  db: SnapshotSource,
  organizationId: string,
  chunkRows: number,
  options: BuildOptions,
): Promise<SnapshotSize | { orders: number; lines: number; whole: () => Promise<SnapshotSize> }> {
  const { counting } = options;
  if (options.counted || !counting) return sizeForBuild(db, organizationId, chunkRows, options.counted);
  const lines =
    counting.before.linesUpTo > 0 ? counting.before.linesUpTo : await linesAtOnce(db, organizationId);
  return { orders: counting.before.orders, lines, whole: counting.whole };
}

/**
 * The snapshot a build's orders make before their lines are read: a view of its own (the live
 * snapshot itself gets the part with its lines), which no delta ever changes.
 */
function ordersAlone(live: LiveSnapshot, orders: Part): Snapshot {
  const alone = new LiveSnapshot(live.organizationId, live.codes);
  alone.version = live.version;
  alone.addPart(orders);
  return alone.view();
}

function counted(progress: BuildProgress, read: number): void {
  progress.firstReadAt ??= performance.now();
  progress.read = read;
}

/** What becomes of a COPY's rows: each to onRow, then afterPiece's work if any after each piece. */
interface RowReader {
  readonly fieldCount: number;
  readonly onRow: (data: Buffer, rows: BinaryCopyRows) => void;
  readonly afterPiece?: () => Promise<void> | undefined;
}

/**
 * Runs one binary COPY, each row to the reader as its bytes come (the next piece waits for
 * afterPiece's work). The database gives the event loop its turns (copyOut).
 */
function copy(db: SnapshotSource, sql: string, reader: RowReader): Promise<void> {
  const rows: BinaryCopyRows = new BinaryCopyRows(reader.fieldCount, (data) => reader.onRow(data, rows));
  const onData = (data: Buffer, from: number, to: number): Promise<void> | undefined => {
    rows.write(data, from, to);
    return reader.afterPiece?.();
  };
  return db.copyOut(sql, onData).then(() => rows.end());
}

/**
 * A COPY's whole output as it came, none of it decoded yet: the socket's own pieces, kept rather
 * than copied (copyOut hands over pieces nothing writes again until they are given back), and
 * where each message's bytes lie in them, a (piece, from, to) triple a row or a part of one.
 */
class HeldOutput {
  readonly pieces: Buffer[] = [];
  ranges = new Int32Array(3 * 8192);
  used = 0;

  add(data: Buffer, from: number, to: number): void {
    const last = this.pieces.length - 1;
    const piece = this.pieces[last] === data ? last : this.pieces.push(data) - 1;
    if (this.used + 3 > this.ranges.length) {
      const grown = new Int32Array(this.ranges.length * 2);
      grown.set(this.ranges);
      this.ranges = grown;
    }
    this.ranges[this.used] = piece;
    this.ranges[this.used + 1] = from;
    this.ranges[this.used + 2] = to;
    this.used += 3;
  }
}

/** A COPY's whole output, held as it comes, none of it decoded (HeldOutput). */
async function received(db: SnapshotSource, sql: string): Promise<HeldOutput> {
  const output = new HeldOutput();
  await db.copyOut(sql, (data, from, to) => output.add(data, from, to));
  return output;
}

/** Bytes decoded between two turns of the event loop. */
const TURN_BYTES = 1 << 16;

/** A held COPY output's rows to the reader, some TURN_BYTES of them a turn of the event loop. */
async function decoded(output: HeldOutput, reader: RowReader): Promise<void> {
  const rows: BinaryCopyRows = new BinaryCopyRows(reader.fieldCount, (data) => reader.onRow(data, rows));
  const { pieces, ranges, used } = output;
  let bytes = 0;
  for (let at = 0; at < used; at += 3) {
    const from = ranges[at + 1] as number;
    const to = ranges[at + 2] as number;
    rows.write(pieces[ranges[at] as number] as Buffer, from, to);
    bytes += to - from;
    if (bytes >= TURN_BYTES) {
      bytes = 0;
      await reader.afterPiece?.();
      await nextTurn();
    }
  }
  await reader.afterPiece?.();
  rows.end();
}

/**
 * Statements' outputs held at once while the orders are read: the one being decoded and the next
 * one, asked for meanwhile (on the database this process hosts, it runs as soon as the one before
 * has). A third made the read no faster: this thread decodes slower than PGlite reads.
 */
const HELD_OUTPUTS = 2;
/**
 * While the lines are read, one: the order-grain reports are answered from the orders meanwhile,
 * on this thread. Asked for ahead, the lines kept this thread decoding without a pause, and those
 * reports took 0.9–2.4 s at the median instead of 0.1 s, some refused SERVICE_BUSY
 * (docs/benchmarks.md); the next statement now runs while the reports get their turns.
 */
const HELD_LINE_OUTPUTS = 1;

/**
 * The embedded database's read of a table by ranges of pages (byPages), each statement's output
 * decoded while the next statement runs (issue 28). PGlite makes a statement's whole output at
 * once, then waits for the next statement: decoded as it came, each statement waited for the
 * decoding of the one before, and each thread idled about half of a million orders' read (a
 * trace of the statements: 80–130 ms each in PGlite, about as long between two). A statement is
 * sent once fewer than `held` outputs are held (some 11 MB each of orders), and the rows
 * reach the reader in the table's order, as before.
 */
async function pipelined(
  db: SnapshotSource,
  table: 'orders' | 'order_lines',
  chunkRows: number,
  sql: (pages: Pages) => string,
  reader: RowReader,
  held: number,
): Promise<void> {
  const decodes: Promise<void>[] = []; // each statement's decoding, after the one before it
  let decoding: Promise<void> = Promise.resolve();
  try {
    await byPages(db, table, chunkRows, async (pages) => {
      const due = decodes.length - held;
      if (due >= 0) await decodes[due];
      // Sent now: on the database this process hosts, it runs as soon as the last one has.
      const output = received(db, sql(pages));
      output.catch(() => undefined); // seen by its decoding
      decoding = decoding.then(async () => {
        const kept = await output;
        await decoded(kept, reader);
        // Issue 28: read, its memory goes back to PGlite's thread (direct-copy.ts, giveBack).
        db.giveBack?.(kept.pieces);
      });
      decoding.catch(() => undefined); // seen by a next statement's wait, or below
      decodes.push(decoding);
    });
  } catch (error) {
    await decoding.catch(() => undefined); // no row decoded once the build has given up
    throw error;
  }
  await decoding;
}
