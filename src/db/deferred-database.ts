// A database still opening, usable at once: each call waits until it is open, then runs. The
// server builds its routes (module loading, schema compilation: the main thread) while PGlite
// starts in its worker thread and the schema is checked, instead of one after the other (issue 28,
// the time from `serve` to the port listening).
import type { CopyReader } from './copy-out.js';
import type { Database, QueryOptions, Row, Transaction } from './database.js';

export function deferredDatabase(
  opening: Promise<Database>,
  known: Pick<Database, 'engine' | 'secretKey'>,
): Database {
  // A failed opening is reported by whoever awaits `opening` (the server's start), not as an
  // unhandled rejection while nothing has asked the database anything yet.
  opening.catch(() => undefined);
  return {
    engine: known.engine,
    secretKey: known.secretKey,
    query: async <R extends Row = Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) =>
      (await opening).query<R>(sql, params, options),
    queryPages: async <R extends Row = Row>(
      sql: string,
      params: readonly unknown[],
      onPage: (rows: R[]) => void | Promise<void>,
      options?: QueryOptions,
    ) => (await opening).queryPages<R>(sql, params, onPage, options),
    copyIn: async (sql: string, data: string | Buffer) => (await opening).copyIn(sql, data),
    copyOut: async (sql: string, onData: CopyReader) => (await opening).copyOut(sql, onData),
    giveBack: (pieces: readonly Uint8Array[]) => void opening.then((db) => db.giveBack(pieces)),
    // Only a server defers its opening: never a command that hosts the database.
    hostedByCommand: false,
    transaction: async <T>(work: (tx: Transaction) => Promise<T>) => (await opening).transaction(work),
    close: async () => (await opening).close(),
  };
}
