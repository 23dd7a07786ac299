// On a PostgreSQL server, a file imported into an organization without any order (a first import:
// the largest ones) goes into orders while the rest of it is read. One transaction, opened before
// the first line and committed after the last, inserts each batch of lines as soon as its COPY
// has stored it, so that the server's work overlaps with the reading and validation (two cores:
// one each) instead of following them. Nothing is visible before the commit, and a refused, failed
// or killed import rolls back (I1). The lines stay in their table meanwhile: should an insert find
// an order twice (the file repeats it), the transaction is rolled back and the import is merged
// once read, the last line of each order winning (I2, src/ingest/merge.ts).
// Not on the embedded engine: the transaction would hold PGlite's single session, which the server
// shares, for the whole import.
import type { Database, Queryable } from '../db/database.js';
import { errorFields } from '../errors.js';
import { firstOrdersFromLines } from '../metrics/first-orders.js';
import {
  UNIQUE_VIOLATION,
  connectStoresOf,
  hasOrders,
  insertOrdersOf,
  lockOrganization,
  type MergedCounts,
} from './merge.js';
import { insertLinesOf, tableLinesOf } from './merge-lines.js';
import { dropImportLines, importLinesTable, importOrderLinesTable } from './staging.js';

// One batch of lines, read through the index on their numbers (createImportLines' byLine).
const batchOf = (table: string): string => `(SELECT * FROM ${table} WHERE line BETWEEN $2 AND $3)`;

/** Inserts the stored lines into orders, batch after batch, in the import's open transaction. */
export class LinesIntoOrders {
  private done: Promise<void> = Promise.resolve();
  private state: 'inserting' | 'stopped' | 'repeated' = 'inserting';
  // Each batch's stores connected, then its orders inserted: a plain INSERT, since the organization
  // had no order and the transaction holds its row lock (lockOrganization); then their lines (L1).
  private readonly statements: string[];

  constructor(
    private readonly tx: Queryable,
    private readonly organizationId: string,
    importId: string,
  ) {
    const batch = batchOf(importLinesTable(importId));
    // The batch's lines, read through their own index (the range said again: the planner would
    // not carry it over from the orders' to theirs).
    const lines = tableLinesOf(importOrderLinesTable(importId), 'li.line BETWEEN $2 AND $3');
    this.statements = [connectStoresOf(batch), insertOrdersOf(batch), insertLinesOf(batch, lines)];
  }

  /** The lines from `first` to `last` are stored: they go in after those before them. */
  stored(first: number, last: number): void {
    this.done = this.done.then(() => this.insert(first, last));
    this.done.catch(() => undefined); // thrown by finish()
  }

  /** Nothing more goes in: the file is refused, or the import failed. */
  stop(): void {
    if (this.state === 'inserting') this.state = 'stopped';
  }

  /** Waits for the inserts under way; true when every batch went in. */
  async finish(): Promise<boolean> {
    await this.done;
    return this.state === 'inserting';
  }

  private async insert(first: number, last: number): Promise<void> {
    // Checked before each statement: once stopped, the transaction may be ending (never a
    // statement after its ROLLBACK, which would run on its own and commit).
    for (const statement of this.statements) {
      if (this.state !== 'inserting') return;
      try {
        await this.tx.query(statement, [this.organizationId, first, last]);
      } catch (error) {
        if (errorFields(error).code !== UNIQUE_VIOLATION) throw error;
        this.state = 'repeated'; // the transaction is aborted: merged once read instead
      }
    }
  }
}

/** Thrown to roll the import's transaction back once the file is read. */
class Undo extends Error {
  constructor() {
    super('import annulé');
  }
}

/**
 * On a PostgreSQL server: when the organization has no order, opens the transaction that holds the
 * whole import and runs `readAll`, which reads the file and tells `lines` of each stored batch.
 * Returns the counts when the import is merged and committed; 'read' when the file was read but
 * not merged (refused, or an order repeated: the caller merges it, src/ingest/merge.ts); undefined
 * when the organization has orders (nothing was read).
 */
export async function streamIntoEmpty(
  db: Database,
  organizationId: string,
  importId: string,
  readAll: (lines: LinesIntoOrders) => Promise<{ staged: number; refused: boolean }>,
  /** Records the import's result in the transaction, before it commits (its job row). */
  onCommit: (tx: Queryable, counts: MergedCounts) => Promise<void>,
): Promise<MergedCounts | 'read' | undefined> {
  try {
    return await db.transaction(async (tx) => {
      // The import's length follows the file's size (STATEMENT_TIMEOUT_MS cancels runaway reports).
      // Between two batches the transaction is idle for a fraction of a second: a minute of
      // silence means its process is gone or stuck, and the server ends it (I1: rolled back),
      // rather than leave the organization's row locked until TCP notices.
      await tx.query('SET LOCAL statement_timeout = 0');
      await tx.query(`SET LOCAL idle_in_transaction_session_timeout = '1min'`);
      await lockOrganization(tx, organizationId);
      if (await hasOrders(tx, organizationId)) return undefined;
      const lines = new LinesIntoOrders(tx, organizationId, importId);
      const read = await readAll(lines).catch(async (error: unknown) => {
        lines.stop(); // no statement may follow the ROLLBACK to come
        await lines.finish().catch(() => undefined);
        throw error;
      });
      if (read.refused) lines.stop();
      if (!(await lines.finish()) || read.refused) throw new Undo();
      const counts = await commitFirstOrders(tx, organizationId, importId, read.staged);
      await onCommit(tx, counts);
      return counts;
    });
  } catch (error) {
    if (error instanceof Undo) return 'read';
    throw error;
  }
}

/**
 * Every line is in: first orders from the lines (U2: no order existed before, and all lines are
 * distinct orders, or an insert would have failed), and the lines go with the commit.
 */
async function commitFirstOrders(
  tx: Queryable,
  organizationId: string,
  importId: string,
  staged: number,
): Promise<MergedCounts> {
  await firstOrdersFromLines(tx, organizationId, importLinesTable(importId), [organizationId]);
  await dropImportLines(tx, importId);
  return { imported: staged, updated: 0 };
}
