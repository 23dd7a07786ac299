// Where an import's valid lines wait until its merge (I1: nothing reaches orders before it).
// A file import stages into a table of its own, `import_lines_<import id>`: UNLOGGED, without an
// index, without the organization and import id on every row, and dropped at once when the import
// ends, whatever its size; a killed import's table is dropped by recoverInterruptedImports. Its
// orders' lines (L1) go into a second such table, `import_order_lines_<import id>`, one typed row
// a line, by a COPY of their own: the database reads them as it reads the orders' fields, where
// a JSON array an order cost it four times the COPY of the orders alone (issue 27, item 6). The
// store connector's pages, small and frequent, share import_staging instead (a table a page would
// churn the catalogue, which PGlite never vacuums), their lines as one JSON array an order.
import type { Database, Queryable } from '../db/database.js';
import { LINE_FIELDS, type OrderLineRecord } from './order-line.js';
import type { OrderRecord } from './validate-order.js';

/** Orders a COPY batch holds (a few megabytes of text). */
export const STAGING_BATCH = 10_000;

/** The staged columns after the line number, in the order a staged row writes them. */
export const ORDER_COLUMNS = [
  'store_address',
  'external_id',
  'created_at',
  'status',
  'billing_country',
  'customer',
  'items',
  'total',
  'tax_total',
  'shipping_total',
  'fee_total',
  'refund_total',
  'refund_tax',
  'refund_shipping',
] as const;

/** Every staged column after the line number: the order's, then its lines (L1) as one JSON array. */
export const STAGED_COLUMNS = [...ORDER_COLUMNS, 'lines'] as const;

const COPY_SPECIAL = /[\\\t\n\r]/g;
const HAS_COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const NULL = '\\N';

/**
 * A value as a field of COPY's text format: \N for NULL; a backslash, tab, newline or carriage
 * return escaped (any other character, Unicode included, stands for itself; NUL never passes
 * validation).
 */
export function copyField(value: unknown): string {
  if (value === null || value === undefined) return NULL;
  const text = String(value);
  // Most texts hold none: one test, no replacement's allocations (issue 27, item 6).
  return HAS_COPY_SPECIAL.test(text) ? text.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c] ?? c) : text;
}

/**
 * One order as a row of COPY's text format, in STAGED_COLUMNS' order after its line. Only the
 * free texts are escaped: validation leaves the others nothing COPY reads specially (digits,
 * ISO instants, two letters, a hex hash), which saves a scan of every field of every line (I3).
 * The lines (L1) go as one JSON array, keyed by order_lines' column names, NULL when there are
 * none: the merge expands it (src/ingest/merge.ts), one staged row an order whatever its lines.
 */
export function stagedRow(line: number, o: OrderRecord): string {
  const lines = o.lines.length > 0 ? copyField(JSON.stringify(o.lines)) : NULL;
  return `${line}\t${copyField(o.storeAddress)}\t${copyField(o.externalId)}\t${o.createdAt}\t${copyField(o.status)}\t${o.billingCountry ?? NULL}\t${o.customer ?? NULL}\t${o.items}\t${o.total}\t${o.taxTotal}\t${o.shippingTotal}\t${o.feeTotal}\t${o.refundTotal}\t${o.refundTax}\t${o.refundShipping}\t${lines}\n`;
}

/**
 * An order's lines as rows of COPY's text format, one a line: the order's line number, the line's
 * place from 0, then LINE_FIELDS (categories as an array literal).
 */
export function stagedLineRows(line: number, lines: readonly OrderLineRecord[]): string {
  return lineRows(`${line}\t`, lines);
}

/** An order's lines as rows of COPY's text format: `prefix`, the line's place from 0, LINE_FIELDS. */
export function lineRows(prefix: string, lines: readonly OrderLineRecord[]): string {
  let rows = '';
  for (const [position, l] of lines.entries()) {
    rows += `${prefix}${position}\t${copyField(l.line_id)}\t${copyField(l.product_id)}\t${copyField(l.variant_id)}\t${copyField(l.sku)}\t${copyField(l.product_name)}\t${copyField(l.variant_name)}\t${copyField(arrayLiteral(l.categories))}\t${l.quantity}\t${l.subtotal}\t${l.discount}\t${l.refunded_quantity}\t${l.refunded_amount}\n`;
  }
  return rows;
}

const ARRAY_SPECIAL = /["\\]/g;
const HAS_ARRAY_SPECIAL = /["\\]/;

/** A text[] literal: every element quoted, its quotes and backslashes escaped ({} when empty). */
export function arrayLiteral(values: readonly string[]): string {
  let literal = '{';
  for (const [i, v] of values.entries()) {
    const element = HAS_ARRAY_SPECIAL.test(v) ? v.replace(ARRAY_SPECIAL, (c) => `\\${c}`) : v;
    literal += i === 0 ? `"${element}"` : `,"${element}"`;
  }
  return `${literal}}`;
}

/** One order as a row of COPY's text format, its order columns only (its lines staged apart). */
export function stagedOrderRow(line: number, o: OrderRecord): string {
  return `${line}\t${copyField(o.storeAddress)}\t${orderFields(o)}`;
}

/** An order's columns from external_id to the last (ORDER_COLUMNS after the store), as COPY text, its row's end included. */
export function orderFields(o: OrderRecord): string {
  return `${copyField(o.externalId)}\t${o.createdAt}\t${copyField(o.status)}\t${o.billingCountry ?? NULL}\t${o.customer ?? NULL}\t${o.items}\t${o.total}\t${o.taxTotal}\t${o.shippingTotal}\t${o.feeTotal}\t${o.refundTotal}\t${o.refundTax}\t${o.refundShipping}\n`;
}

/**
 * Where staged rows go: a COPY statement, and what each row starts with before its line; with
 * `linesCopy`, the orders' lines go by that second COPY, one row a line (stagedLineRows), and
 * the orders' rows hold no JSON array.
 */
export interface StagingTarget {
  readonly copy: string;
  readonly rowPrefix: string;
  readonly linesCopy?: string;
  /** Rows of other tables than the staging ones (src/ingest/copy-into-empty.ts): each order's, and its lines' for linesCopy. */
  readonly rows?: {
    order(o: OrderRecord): string;
    lines(o: OrderRecord): string;
  };
}

/** import_staging, shared by the connector's pages: rows carry their organization and import. */
export function sharedStaging(organizationId: string, importId: string): StagingTarget {
  return {
    copy: `COPY import_staging (organization_id, import_id, line, ${STAGED_COLUMNS.join(', ')}) FROM STDIN`,
    rowPrefix: `${copyField(organizationId)}\t${copyField(importId)}\t`,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LINES_TABLE = /^import_lines_([0-9a-f]{32})$/;

/**
 * The name of an import's own table. The import id is a UUID this service generated; it is checked
 * anyway, since it becomes an identifier (never text from a request).
 */
export function importLinesTable(importId: string): string {
  if (!UUID.test(importId)) throw new Error(`identifiant d'import inattendu : ${importId.slice(0, 40)}`);
  return `import_lines_${importId.replaceAll('-', '')}`;
}

/** The name of the table of an import's order lines (L1), beside importLinesTable's. */
export function importOrderLinesTable(importId: string): string {
  return importLinesTable(importId).replace('import_lines_', 'import_order_lines_');
}

/** The import id a table name stands for, or undefined for any other table. */
export function importIdOfTable(table: string): string | undefined {
  const hex = LINES_TABLE.exec(table)?.[1];
  if (hex === undefined) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Creates an import's own table (see the file's header) and returns where to COPY its rows.
 * `byLine`: with an index on the line number, for a merge that reads the lines batch by batch
 * (src/ingest/stream-merge.ts); line numbers only grow, so it costs little.
 */
export async function createImportLines(
  db: Queryable,
  importId: string,
  options: { byLine: boolean },
): Promise<StagingTarget> {
  const table = importLinesTable(importId);
  const lines = importOrderLinesTable(importId);
  // Scratch rows, read once: no autovacuum pass over them while the import runs. Both tables in
  // one statement: a killed import leaves both or neither (dropImportLines drops both).
  await db.query(
    `CREATE UNLOGGED TABLE ${table} (line integer NOT NULL,
       ${ORDER_COLUMNS.map((column) => `${column} ${COLUMN_TYPES[column]}`).join(', ')})
     WITH (autovacuum_enabled = false);
     CREATE UNLOGGED TABLE ${lines} (line integer NOT NULL, position integer NOT NULL,
       ${LINE_FIELDS.map((field) => `${field} ${LINE_COLUMN_TYPES[field]}`).join(', ')})
     WITH (autovacuum_enabled = false)`,
  );
  if (options.byLine)
    await db.query(`CREATE INDEX ON ${table} (line); CREATE INDEX ${lines}_by_line ON ${lines} (line)`);
  return {
    copy: `COPY ${table} (line, ${ORDER_COLUMNS.join(', ')}) FROM STDIN`,
    rowPrefix: '',
    linesCopy: `COPY ${lines} (line, position, ${LINE_FIELDS.join(', ')}) FROM STDIN`,
  };
}

// Those of order_lines (migration 017): the database checks each value once more.
export const LINE_COLUMN_TYPES: Record<(typeof LINE_FIELDS)[number], string> = {
  line_id: 'text NOT NULL',
  product_id: 'text',
  variant_id: 'text',
  sku: 'text',
  product_name: 'text NOT NULL',
  variant_name: 'text',
  categories: 'text[] NOT NULL',
  quantity: 'integer NOT NULL',
  subtotal: 'numeric(16, 2) NOT NULL',
  discount: 'numeric(16, 2) NOT NULL',
  refunded_quantity: 'integer NOT NULL',
  refunded_amount: 'numeric(16, 2) NOT NULL',
};

const AMOUNT = 'numeric(16, 2) NOT NULL';
// As in import_staging (migration 001, 004): the database checks the types once more.
const COLUMN_TYPES: Record<(typeof STAGED_COLUMNS)[number], string> = {
  store_address: 'text NOT NULL',
  external_id: 'text NOT NULL',
  created_at: 'timestamptz NOT NULL',
  status: 'text NOT NULL',
  billing_country: 'text',
  customer: 'text',
  items: 'integer NOT NULL',
  total: AMOUNT,
  tax_total: AMOUNT,
  shipping_total: AMOUNT,
  fee_total: AMOUNT,
  refund_total: AMOUNT,
  refund_tax: AMOUNT,
  refund_shipping: AMOUNT,
  lines: 'jsonb',
};

export async function dropImportLines(db: Queryable, importId: string): Promise<void> {
  await db.query(`DROP TABLE IF EXISTS ${importLinesTable(importId)}, ${importOrderLinesTable(importId)}`);
}

/** Every import's own table there is, by import id (recoverInterruptedImports drops the dead ones'). */
export async function importLinesTables(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ tablename: string }>(
    `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'import\\_lines\\_%'`,
  );
  return rows.flatMap((row) => importIdOfTable(row.tablename) ?? []);
}

/** Told, in file order, that the lines from `first` to `last` are stored (committed). */
export type StoredListener = (first: number, last: number) => void;

/** The first buffer: a connector's page of a few orders needs no more; a file's batches grow it. */
const FIRST_BUFFER_BYTES = 64 * 1024;
/**
 * A batch is sent once it holds this much, whatever its rows: under the embedded engine's 64 MiB
 * a COPY (10,000 rows of the longest fields validation lets through would take 75 MB), even when
 * the row that fills it is the longest one order can be: 1,000 lines of L1's longest fields,
 * escaped in JSON then in COPY, about 37 MB (src/ingest/line-bounds.ts).
 */
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;

/** COPY text written into a buffer as UTF-8 as it comes, grown as needed. */
class CopyText {
  private buffer: Buffer;
  bytes = 0;

  constructor(size = FIRST_BUFFER_BYTES) {
    this.buffer = Buffer.allocUnsafe(size);
  }

  write(text: string): void {
    // A UTF-16 code unit takes 3 bytes of UTF-8 at most.
    if (this.bytes + 3 * text.length > this.buffer.length) this.grow(3 * text.length);
    this.bytes += this.buffer.write(text, this.bytes);
  }

  private grow(needed: number): void {
    const larger = Buffer.allocUnsafe(Math.max(2 * this.buffer.length, this.bytes + needed));
    this.buffer.copy(larger, 0, 0, this.bytes);
    this.buffer = larger;
  }

  /** The text written, handed over; a new buffer as large as this one had to be takes its place. */
  take(): Buffer {
    const data = this.buffer.subarray(0, this.bytes);
    this.buffer = Buffer.allocUnsafe(this.buffer.length);
    this.bytes = 0;
    return data;
  }
}

/**
 * Valid orders as COPY text, at most STAGING_BATCH of them, and the previous batch's COPY still
 * running: reading and validating the next batch overlaps with the database storing the last one.
 * Rows are written into a buffer as UTF-8 as they come: no batch-sized string is ever built, then
 * encoded (I3: a million lines are a few hundred megabytes of text). With the target's linesCopy,
 * the orders' lines go into a second buffer, sent after the orders' by that COPY.
 */
export class StagingBuffer {
  private readonly orders = new CopyText();
  private readonly lines: CopyText | undefined;
  private rows = 0;
  private firstLine = 0;
  private lastLine = 0;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly db: Pick<Database, 'copyIn'>,
    private readonly target: StagingTarget,
    private readonly onStored?: StoredListener,
  ) {
    if (target.linesCopy !== undefined) this.lines = new CopyText();
  }

  get full(): boolean {
    return (
      this.rows >= STAGING_BATCH ||
      this.orders.bytes >= MAX_BATCH_BYTES ||
      (this.lines?.bytes ?? 0) >= MAX_BATCH_BYTES
    );
  }

  add(line: number, order: OrderRecord): void {
    if (this.rows === 0) this.firstLine = line;
    this.lastLine = line;
    const rows = this.target.rows;
    if (rows !== undefined) {
      this.orders.write(rows.order(order));
      if (order.lines.length > 0) this.lines?.write(rows.lines(order));
    } else if (this.lines === undefined) this.orders.write(this.target.rowPrefix + stagedRow(line, order));
    else {
      this.orders.write(this.target.rowPrefix + stagedOrderRow(line, order));
      if (order.lines.length > 0) this.lines.write(stagedLineRows(line, order.lines));
    }
    this.rows++;
  }

  /** Starts this batch's COPY once the previous one has ended (its failure is thrown here). */
  async flush(): Promise<void> {
    await this.inFlight;
    if (this.rows === 0) return;
    const [first, last] = [this.firstLine, this.lastLine];
    const orders = this.orders.take();
    const lines = this.lines !== undefined && this.lines.bytes > 0 ? this.lines.take() : undefined;
    const { copy: copyOrders, linesCopy } = this.target;
    const copy = this.db
      .copyIn(copyOrders, orders)
      .then(() =>
        lines !== undefined && linesCopy !== undefined ? this.db.copyIn(linesCopy, lines) : undefined,
      )
      .then(() => this.onStored?.(first, last));
    copy.catch(() => undefined); // awaited by the next flush or by finish()
    this.inFlight = copy;
    this.rows = 0;
  }

  /** Every batch stored. */
  async finish(): Promise<void> {
    await this.flush();
    await this.inFlight;
    this.inFlight = undefined;
  }

  /** Waits for the running COPY, if any, whatever its outcome (before its rows are discarded). */
  async settle(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
  }
}

/** What an import stages its valid orders through. */
export type Stager = Pick<StagingBuffer, 'full' | 'add' | 'flush' | 'finish' | 'settle'>;

/**
 * Holds the first rows (at most `limit`) before choosing where they go: `choose(true)` when the
 * input ended with fewer, `choose(false)` otherwise; then stages as StagingBuffer does. Lines are
 * read, validated and counted as they come (I3), whatever the choice.
 */
export class DeferredStaging implements Stager {
  private held: [number, OrderRecord][] = [];
  private buffer: StagingBuffer | undefined;

  constructor(
    private readonly db: Database,
    private readonly limit: number,
    private readonly choose: (small: boolean) => Promise<StagingTarget>,
  ) {}

  get full(): boolean {
    return this.buffer?.full ?? this.held.length >= this.limit;
  }

  add(line: number, order: OrderRecord): void {
    if (this.buffer) this.buffer.add(line, order);
    else this.held.push([line, order]);
  }

  async flush(): Promise<void> {
    await (this.buffer ?? (await this.open(false))).flush();
  }

  async finish(): Promise<void> {
    await (this.buffer ?? (await this.open(this.held.length < this.limit))).finish();
  }

  async settle(): Promise<void> {
    await this.buffer?.settle();
  }

  private async open(small: boolean): Promise<StagingBuffer> {
    const buffer = new StagingBuffer(this.db, await this.choose(small));
    for (const [line, order] of this.held) buffer.add(line, order);
    this.held = [];
    this.buffer = buffer;
    return buffer;
  }
}
