// Issue 27, item 6: a command that hosts the embedded database alone (the CLI, no server on its
// DATA_DIR) imports a file into an organization without any order straight into orders and
// order_lines. One transaction holds the whole import, from the first line to the last; each batch
// is COPYed into the tables themselves as soon as it is validated. No staging table, no
// INSERT … SELECT, no join: PGlite's thread stores a batch while the command's thread reads and
// validates the next (two cores, one each), where the staged import did the merge's inserts after
// the read, PGlite's thread alone (docs/benchmarks.md). Nothing is visible before the commit, and a
// refused, failed or killed import rolls back (I1).
// From 8 MiB of file, the indexes whose keys come in no useful order (the customers', and the
// lines' key, the largest) are dropped first and built after the read, as a staged first import
// does (src/ingest/indexes-after.ts); the orders' key and their indexes by period and by change,
// whose keys come in nearly increasing order, are kept current as the rows go in, in the time
// PGlite's thread has while the command reads. The lines' check of their orders (migration 020) is
// off: each line is written with its order. Each customer's first order (U2) is gathered as the
// orders are written, and so is the report snapshot when the command asks (WrittenOrders). A file
// that repeats an order fails the orders' key as its COPY goes in, the transaction rolls back, and
// the caller reads the file again the staged way, where the last line of each order wins (I2,
// src/ingest/merge.ts). Files rarely repeat orders.
// Never beside a server, nor on PostgreSQL (src/ingest/stream-merge.ts does this there): the
// transaction holds PGlite's one session for the whole import.
import type { Database, Transaction } from '../db/database.js';
import { errorFields } from '../errors.js';
import { BINARY_COPY_HEADER, EPOCH_2000 } from '../metrics/columnar/copy-binary.js';
import { buildIndexes, dropIndexes } from './indexes-after.js';
import { UNIQUE_VIOLATION, hasOrders, lockOrganization, type MergedCounts } from './merge.js';
import { LINE_FIELDS } from './order-line.js';
import { ORDER_COLUMNS, StagingBuffer, copyField, lineRows, orderFields, type Stager } from './staging.js';
import { instantOf, type OrderRecord } from './validate-order.js';

const COPY_ORDERS = `COPY orders (organization_id, store_id, ${ORDER_COLUMNS.slice(1).join(', ')}) FROM STDIN`;
const COPY_LINES = `COPY order_lines (organization_id, store_id, external_id, position, ${LINE_FIELDS.join(', ')}) FROM STDIN`;

// The stores of a batch's new addresses, connected on first sight as the staged merge does.
const CONNECT_STORES = `INSERT INTO stores (organization_id, address)
  SELECT $1::bigint, unnest($2::text[]) ON CONFLICT (organization_id, address) DO NOTHING`;
const STORES_OF =
  'SELECT id::text AS id, address FROM stores WHERE organization_id = $1 AND address = ANY ($2::text[])';

/**
 * Told of each order as it is written (its store connected first), then of the data version the
 * import committed, or that it was not: a command builds the organization's report snapshot from
 * them (src/metrics/columnar/import-snapshot.ts) instead of reading the rows back after the commit.
 */
export interface WrittenOrders {
  store(id: number, address: string): void;
  /**
   * `seconds`: floor of the order's instant since 1970 (instantOf); `customer`: its customer's
   * number (EarliestOrders: in order of first sight, from 0), -1 for an anonymous order.
   */
  order(o: OrderRecord, storeId: number, seconds: number, customer: number): void;
  committed(version: string): void;
  discard(): void;
}

/**
 * Valid orders written as rows of orders and order_lines, batch after batch, in the import's
 * transaction (StagingBuffer's pipelining: the next batch is validated while the last one is
 * stored). An order of a store not seen yet ends its batch: its store's id is looked up (the
 * store connected) before its rows are written.
 */
export class RowsIntoTables implements Stager {
  private readonly buffer: StagingBuffer;
  /** Each connected store's id, and what its rows start with (organization, store). */
  private readonly stores = new Map<string, { id: number; prefix: string }>();
  private waiting: OrderRecord[] = [];

  constructor(
    private readonly tx: Transaction,
    private readonly organizationId: string,
    /** True once the file is refused (I1): nothing more is written, it will be rolled back. */
    private readonly stopped: () => boolean,
    /** U2: each customer's earliest counted order, gathered as the orders are written. */
    private readonly firsts: EarliestOrders,
    private readonly written?: WrittenOrders,
  ) {
    const prefixOf = (o: OrderRecord): string => {
      const store = this.stores.get(o.storeAddress);
      if (store === undefined) throw new Error('store not connected'); // add() saw to it
      return store.prefix;
    };
    this.buffer = new StagingBuffer(tx, {
      copy: COPY_ORDERS,
      rowPrefix: '',
      linesCopy: COPY_LINES,
      rows: {
        order: (o) => prefixOf(o) + orderFields(o),
        lines: (o) => lineRows(`${prefixOf(o)}${copyField(o.externalId)}\t`, o.lines),
      },
    });
  }

  get full(): boolean {
    return this.waiting.length > 0 || this.buffer.full;
  }

  add(line: number, order: OrderRecord): void {
    if (this.stopped()) return;
    const store = this.stores.get(order.storeAddress);
    if (store === undefined) this.waiting.push(order);
    else this.write(line, order, store.id);
  }

  private write(line: number, order: OrderRecord, storeId: number): void {
    this.buffer.add(line, order);
    const instant = instantOf(order.createdAt);
    const customer = this.firsts.add(order, instant);
    this.written?.order(order, storeId, instant.seconds, customer);
  }

  async flush(): Promise<void> {
    await this.connectWaiting();
    await this.buffer.flush();
  }

  async finish(): Promise<void> {
    await this.connectWaiting();
    await this.buffer.finish();
  }

  async settle(): Promise<void> {
    await this.buffer.settle();
  }

  /** Connects the stores of the waiting orders, then writes those orders as the others. */
  private async connectWaiting(): Promise<void> {
    if (this.waiting.length === 0) return;
    const addresses = [...new Set(this.waiting.map((o) => o.storeAddress))];
    await this.tx.query(CONNECT_STORES, [this.organizationId, addresses]);
    const stores = await this.tx.query<{ id: string; address: string }>(STORES_OF, [
      this.organizationId,
      addresses,
    ]);
    for (const store of stores) {
      const id = Number(store.id);
      this.stores.set(store.address, { id, prefix: `${copyField(this.organizationId)}\t${store.id}\t` });
      this.written?.store(id, store.address);
    }
    const waiting = this.waiting;
    this.waiting = [];
    // Their line numbers only told StagingBuffer's listener of what was stored: it has none here.
    for (const order of waiting) this.write(0, order, this.stores.get(order.storeAddress)!.id);
  }
}

/** Thrown to roll the import's transaction back once a refused file is read. */
class Refused extends Error {
  constructor() {
    super('import refusé');
  }
}

/**
 * The file's size from which indexes of orders and order_lines (the lines' key too) are dropped
 * for the import and built again after it, as a staged first import does from 10,000
 * orders (src/ingest/indexes-after.ts): about that many orders with their lines.
 */
export const INDEXES_AFTER_BYTES = 8 * 1024 * 1024;

/**
 * The orders' indexes kept current during the read: a store's order ids, the orders' instants and
 * the import's one transaction id come in nearly increasing order, so PGlite inserts their
 * entries in the pages it just wrote, while its thread would otherwise wait for the command's.
 * Built after the read, they held PGlite's thread alone about 2.8 s more at a million orders, and
 * the read took no longer (PGlite's thread 75% busy during it, the command's 95%). The customers'
 * index (keys in no order) and the lines' key are built after: with the lines' key kept too,
 * PGlite's thread became the one the read waited for (90% busy), and with the customers' index
 * kept too, the read took 1.7–11 s longer than the runs beside it (docs/benchmarks.md).
 */
const KEPT_DURING_READ: ReadonlySet<string> = new Set([
  'orders_pkey',
  'orders_by_period',
  'orders_by_change',
]);

// Also only while both tables hold no more than about what the file will add (half its size: a
// million orders with lines, 999 MB of NDJSON, take 676 MB of rows): the builds then sort at most
// about twice the rows written, which costs less than keeping the indexes current.
const SMALL_BESIDE = `SELECT $1::bigint >= $2::bigint
  AND pg_relation_size('orders') + pg_relation_size('order_lines') <= $1::bigint / 2 AS small`;

const LINES_CHECK = 'order_lines_insert_references_orders';
const LINES_CHECK_OFF = `ALTER TABLE order_lines DISABLE TRIGGER ${LINES_CHECK}`;
const LINES_CHECK_ON = `ALTER TABLE order_lines ENABLE TRIGGER ${LINES_CHECK}`;

/**
 * U2 for an organization that had no order: each customer's earliest counted order (S1: its status
 * not excluded by the organization's settings, read under its lock) among those written, gathered
 * as they are, then COPYed into customer_first_orders sorted by customer (its key dropped and built
 * after them with the orders' from 8 MiB of file, else written in order). The orders are written
 * once each (a repeat fails their key and rolls all of it back).
 * At a million orders, the statement that computed them from the orders once written took PGlite's
 * thread 3.9–5.7 s after the read, while the command's thread waited.
 */
export class EarliestOrders {
  /**
   * Each customer's number, in order of first sight, and place in the columns below (no object a
   * customer: a million orders' heap). The snapshot codes its customers by it (WrittenOrders): one
   * lookup a customer's order, not one here and one in the snapshot's dictionary (1.2 s of the
   * command's thread at a million orders, a CPU profile).
   */
  private readonly places = new Map<string, number>();
  /** The earliest counted order's instant; Infinity while the customer has none (S1). */
  private seconds = new Float64Array(1024);
  private micros = new Int32Array(1024);
  private customers = 0;

  constructor(private readonly excluded: ReadonlySet<string>) {}

  /** Takes the order into account; returns its customer's number, -1 for an anonymous order. */
  add(o: OrderRecord, instant: { seconds: number; micros: number }): number {
    if (o.customer === null) return -1;
    let place = this.places.get(o.customer);
    if (place === undefined) {
      place = this.customers++;
      this.places.set(o.customer, place);
      if (place === this.seconds.length) this.grow();
      this.seconds[place] = Infinity;
    }
    if (this.excluded.has(o.status)) return place;
    if (
      instant.seconds < this.seconds[place]! ||
      (instant.seconds === this.seconds[place] && instant.micros < this.micros[place]!)
    ) {
      this.seconds[place] = instant.seconds;
      this.micros[place] = instant.micros;
    }
    return place;
  }

  private grow(): void {
    const seconds = new Float64Array(this.seconds.length * 2);
    seconds.set(this.seconds);
    this.seconds = seconds;
    const micros = new Int32Array(this.micros.length * 2);
    micros.set(this.micros);
    this.micros = micros;
  }

  /**
   * The first orders gathered, as the COPYs that write them (write): sorted by customer, some
   * FIRSTS_A_COPY rows a COPY. At a million orders, 1.6 s of this thread: made while PGlite
   * builds the lines' key (copyIntoEmpty).
   */
  rows(organizationId: string): Buffer[] {
    // A customer whose every order has an excluded status has none (S1).
    const customers = [...this.places].flatMap(([customer, place]) =>
      this.seconds[place] === Infinity ? [] : [customer],
    );
    customers.sort();
    const copies: Buffer[] = [];
    for (let from = 0; from < customers.length; from += FIRSTS_A_COPY)
      copies.push(this.binaryRows(organizationId, customers.slice(from, from + FIRSTS_A_COPY)));
    return copies;
  }

  /**
   * Replaces the organization's first orders with `copies` (rows()); `keyAfter`: the table's key
   * dropped meanwhile and built after them, as the orders' are.
   */
  static async write(
    tx: Transaction,
    organizationId: string,
    copies: readonly Buffer[],
    keyAfter: boolean,
  ): Promise<void> {
    await tx.query('DELETE FROM customer_first_orders WHERE organization_id = $1', [organizationId]);
    const dropped = keyAfter ? await dropIndexes(tx, 'customer_first_orders') : [];
    for (const copy of copies) await tx.copyIn(COPY_FIRSTS, copy);
    await buildIndexes(tx, 'customer_first_orders', dropped);
  }

  /**
   * The customers' rows in COPY's binary format: the instant as PostgreSQL keeps it (microseconds
   * since 2000-01-01 UTC). As text, parsing half a million instants took PGlite about 3.4 s.
   */
  private binaryRows(organizationId: string, customers: readonly string[]): Buffer {
    let bytes = BINARY_COPY_HEADER.length + 2;
    for (const customer of customers) bytes += ROW_BYTES + Buffer.byteLength(customer);
    const rows = Buffer.allocUnsafe(bytes);
    let at = BINARY_COPY_HEADER.copy(rows, 0);
    const organization = BigInt(organizationId);
    for (const customer of customers) {
      const place = this.places.get(customer)!;
      at = rows.writeInt16BE(3, at);
      at = rows.writeInt32BE(8, at);
      at = rows.writeBigInt64BE(organization, at);
      const length = rows.write(customer, at + 4);
      at = rows.writeInt32BE(length, at) + length;
      at = rows.writeInt32BE(8, at);
      const micros = BigInt(this.seconds[place]! - EPOCH_2000) * 1_000_000n + BigInt(this.micros[place]!);
      at = rows.writeBigInt64BE(micros, at);
    }
    rows.writeInt16BE(-1, at);
    return rows;
  }
}

const COPY_FIRSTS =
  'COPY customer_first_orders (organization_id, customer, first_order_at) FROM STDIN (FORMAT binary)';
const FIRSTS_A_COPY = 50_000;
/** A row's bytes but its customer's: its field count, three lengths, two int8 values. */
const ROW_BYTES = 2 + 3 * 4 + 2 * 8;

/** S1: the statuses the organization does not count, as its settings say now. */
async function excludedStatuses(tx: Transaction, organizationId: string): Promise<Set<string>> {
  const [row] = await tx.query<{ excluded: string[] }>(
    'SELECT excluded_statuses AS excluded FROM organizations WHERE id = $1',
    [organizationId],
  );
  return new Set(row?.excluded ?? []);
}

/** The organization's data version as this transaction leaves it (bumped by its writes: migration 009). */
async function dataVersion(tx: Transaction, organizationId: string): Promise<string | undefined> {
  const [row] = await tx.query<{ version: string }>(
    'SELECT data_version::text AS version FROM organizations WHERE id = $1',
    [organizationId],
  );
  return row?.version;
}

/**
 * When the organization has no order: opens the transaction that holds the whole import, runs
 * `readAll`, which reads and validates the file and writes its valid orders through `rows` (none
 * once `refused()`), then computes the first orders (U2) and records the job's result (`onCommit`)
 * before the commit. Returns the counts once committed; 'refused' when the file was read and
 * refused (nothing written); 'repeated' when it repeats an order (nothing written: read it again
 * the staged way); undefined when the organization has orders (nothing was read).
 */
export async function copyIntoEmpty(
  db: Database,
  organizationId: string,
  file: { bytes: number; refused: () => boolean },
  readAll: (rows: RowsIntoTables) => Promise<{ staged: number }>,
  onCommit: (tx: Transaction, counts: MergedCounts) => Promise<void>,
  written?: WrittenOrders,
): Promise<MergedCounts | 'refused' | 'repeated' | undefined> {
  let version: string | undefined;
  try {
    const counts = await db.transaction(async (tx) => {
      // The import's length follows the file's size (STATEMENT_TIMEOUT_MS cancels runaway reports).
      await tx.query('SET LOCAL statement_timeout = 0');
      await lockOrganization(tx, organizationId);
      if (await hasOrders(tx, organizationId)) return undefined;
      const [tables] = await tx.query<{ small: boolean }>(SMALL_BESIDE, [file.bytes, INDEXES_AFTER_BYTES]);
      const dropped =
        tables?.small === true
          ? {
              orders: await dropIndexes(tx, 'orders', KEPT_DURING_READ),
              lines: await dropIndexes(tx, 'order_lines'),
            }
          : undefined;
      // The lines' check of their orders (migration 020) is off for this transaction: each line is
      // written from its order's record, with the order's store and id, in the same batch as the
      // order (RowsIntoTables), and a batch whose COPY fails fails the whole import. Checking each
      // batch's lines took PGlite's thread as long as the command's read; an anti-join of every
      // line against the orders at the end, 3.7–3.9 s of PGlite's thread at a million orders, for
      // nothing more.
      if (dropped !== undefined) await tx.query(LINES_CHECK_OFF);
      const firsts = new EarliestOrders(await excludedStatuses(tx, organizationId));
      const rows = new RowsIntoTables(tx, organizationId, file.refused, firsts, written);
      const read = await readAll(rows).catch(async (error: unknown) => {
        await rows.settle(); // no COPY may follow the ROLLBACK to come
        throw error;
      });
      if (file.refused()) throw new Refused();
      let firstRows: Buffer[];
      if (dropped !== undefined) {
        await buildIndexes(tx, 'orders', dropped.orders);
        // The longest build (4.8 s at a million orders): sent, then the first orders made meanwhile.
        const lines = buildIndexes(tx, 'order_lines', dropped.lines).then(() => tx.query(LINES_CHECK_ON));
        lines.catch(() => undefined); // awaited below, also when rows() throws
        firstRows = firsts.rows(organizationId);
        await lines;
      } else firstRows = firsts.rows(organizationId);
      // U2: no order existed, and every order is written once (or the key would have failed).
      await EarliestOrders.write(tx, organizationId, firstRows, dropped !== undefined);
      const counts = { imported: read.staged, updated: 0 };
      await onCommit(tx, counts);
      if (written) version = await dataVersion(tx, organizationId);
      return counts;
    });
    if (counts !== undefined && version !== undefined) written?.committed(version);
    else written?.discard();
    return counts;
  } catch (error) {
    written?.discard();
    if (error instanceof Refused) return 'refused';
    if (errorFields(error).code === UNIQUE_VIOLATION) return 'repeated';
    throw error;
  }
}
