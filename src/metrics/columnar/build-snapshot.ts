// Reads one organization's orders into a Snapshot with binary `COPY … TO STDOUT`: the database only
// filters and sends the stored columns, in whatever order it finds them (no ORDER BY, no
// expression per row), and OrderColumns decodes the bytes as they arrive, one piece of the output
// per turn of the event loop.
//
// On a PostgreSQL server that is one statement (the planner reads the organization's rows through
// its index or by a scan), streamed as fast as it is read while the server's other sessions go
// on. The embedded database runs one statement at a time for everyone and produces a statement's
// whole output at once: there, an organization of more than `chunkRows` orders is read in short
// statements over ranges of the table's pages (TID range scans: one sequential pass over the
// whole table, other organizations' rows skipped), others' queries running between them.
// Statements that see different moments are harmless: data_version and the database snapshot are
// read before the first row, so a change made meanwhile is read again by the first delta (issue
// 19), which retires whatever the build read of it (X1).
import type { Database } from '../../db/database.js';
import type { BuildProgress } from './build-progress.js';
import { BinaryCopyRows } from './copy-binary.js';
import { LINES_JOIN } from './line-columns.js';
import { LiveSnapshot } from './live-snapshot.js';
import {
  AmountOutOfRange,
  FIELD_COUNT,
  ORDER_FIELDS,
  OrderColumns,
  OverBudget,
  nextTurn,
} from './order-columns.js';
import { BYTES_PER_ORDER } from './snapshot.js';

/** Orders per statement on the embedded database, about (statements cover pages: PAGE_ROWS). */
export const DEFAULT_CHUNK_ROWS = 50_000;
/** Order rows in an 8 kB heap page, roughly (some 200 bytes each): turns chunkRows into pages. */
const PAGE_ROWS = 40;

/** What a snapshot is read from: the database's SQL and its COPY output. */
export type SnapshotSource = Pick<Database, 'engine' | 'query' | 'copyOut' | 'transaction'>;

/** Why an organization is answered by SQL instead of a snapshot, at a given data version. */
export interface Unsupported {
  readonly version: string;
  readonly reason: 'over-budget' | 'amount-range';
}

export interface BuildOptions {
  /** Give up (over-budget) when the snapshot would need more than this. */
  readonly maxBytes: number;
  readonly chunkRows?: number;
  /** Filled in as the build reads (issue 28: the Retry-After of a report that cannot wait). */
  readonly progress?: BuildProgress;
}

/** Heap pages [from, to); to undefined: to the end, pages added meanwhile included. */
type Pages = readonly [from: number, to: number | undefined];

/** COPY takes no parameters: its only values are integers formatted here. */
function copyOrders(organizationId: bigint, pages?: Pages): string {
  const tid = (page: number) => `'(${page},0)'::tid`;
  const range = !pages
    ? ''
    : ` AND o.ctid >= ${tid(pages[0])}${pages[1] === undefined ? '' : ` AND o.ctid < ${tid(pages[1])}`}`;
  return `COPY (SELECT ${ORDER_FIELDS} FROM orders o ${LINES_JOIN} WHERE o.organization_id = ${organizationId}${range}) TO STDOUT (FORMAT binary)`;
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
  const [organization] = await db.query<{ data_version: string; snapshot: string; now: number }>(
    `SELECT data_version::text, pg_current_snapshot()::text AS snapshot,
       (extract(epoch FROM now()) * 1000)::float8 AS now
     FROM organizations WHERE id = $1`,
    [organizationId],
  );
  if (!organization) return undefined;
  const version = String(organization.data_version);
  const live = new LiveSnapshot(organizationId);
  live.version = version;
  live.databaseSnapshot = organization.snapshot;
  live.readAt = Number(organization.now);
  const [counted] = await db.query<{ n: number }>(
    'SELECT count(*)::integer AS n FROM orders WHERE organization_id = $1',
    [organizationId],
  );
  const expected = counted?.n ?? 0;
  if (options.progress) options.progress.expected = expected;
  const maxOrders = Math.floor(options.maxBytes / BYTES_PER_ORDER);
  if (expected > maxOrders) return { version, reason: 'over-budget' };
  const storeRows = await db.query('SELECT id, address FROM stores WHERE organization_id = $1', [
    organizationId,
  ]);
  for (const row of storeRows) live.codes.addStore(Number(row.id), String(row.address));

  const columns = new OrderColumns(expected + 64, live.codes, maxOrders);
  const id = BigInt(organizationId); // an integer, written out by BigInt
  const read = (pages?: Pages): Promise<void> => {
    const rows = new BinaryCopyRows(FIELD_COUNT, (data) => {
      columns.push(data, rows.starts, rows.lengths);
      if (options.progress) options.progress.read = columns.length;
    });
    // A turn of the event loop after each piece: the socket may hold many.
    const onData = (data: Buffer) => (rows.write(data), nextTurn());
    return db.copyOut(copyOrders(id, pages), onData).then(() => rows.end());
  };
  try {
    if (db.engine !== 'embedded' || expected <= chunkRows) {
      await read();
    } else {
      const [table] = await db.query<{ pages: number }>(
        `SELECT (pg_relation_size('orders') / current_setting('block_size')::bigint)::integer AS pages`,
      );
      const step = Math.max(1, Math.ceil(chunkRows / PAGE_ROWS));
      for (let from = 0; ; from += step) {
        const last = from + step >= (table?.pages ?? 0);
        await read([from, last ? undefined : from + step]);
        if (last) break;
        await nextTurn();
      }
    }
  } catch (error) {
    if (error instanceof AmountOutOfRange) return { version, reason: 'amount-range' };
    if (error instanceof OverBudget) return { version, reason: 'over-budget' };
    throw error;
  }
  if (columns.length > maxOrders) return { version, reason: 'over-budget' };
  if (columns.absoluteCents > Number.MAX_SAFE_INTEGER) return { version, reason: 'amount-range' };
  live.addPart(await columns.part());
  return live;
}
