// One SQL path for both engines: every query goes through a pg pool, either to a PostgreSQL
// server (DATABASE_URL) or to the embedded PGlite host's Unix socket (src/db/embedded.ts).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Config } from '../config.js';
import { AppError, appError, errorFields } from '../errors.js';
import { CopyOutQuery, type CopyReader } from './copy-out.js';
import { readInPages } from './cursor.js';
import {
  findHost,
  startHost,
  waitForSocket,
  SOCKET_PORT,
  type EmbeddedHost,
  type HostRole,
} from './embedded.js';

/**
 * The most bytes of COPY data sent as one CopyData message. An import's batch (a few megabytes) went
 * as one message: pglite-socket joins each piece the socket reads (64 KB) to the part of the message
 * it holds (Buffer.concat), copying a 3 MB message some 48 times over. Its thread spent 5.0 s of
 * 26.6 s doing so while 600 MB of rows were COPYed, and 3.4 s more collecting the copies' garbage
 * (a CPU profile). In pieces of 256 KB, each is copied about three times, and the sending thread
 * writes two pieces of memory to the socket a piece (a header, the piece): pieces of 64 KB cost the
 * embedded engine as little, but a command importing a million orders 0.6 s of socket writes, on
 * the thread that bounds its read (bench/copy-in.ts compares them).
 */
export const COPY_PIECE_BYTES = 256 * 1024;

/** COPY data in CopyData messages of at most COPY_PIECE_BYTES (views of its bytes, not copies); none when empty. */
export function copyPieces(data: string | Buffer, size = COPY_PIECE_BYTES): Buffer[] {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size)
    pieces.push(bytes.subarray(at, Math.min(at + size, bytes.length)));
  return pieces;
}

// DATE values stay 'YYYY-MM-DD' strings instead of local-midnight Date objects.
pg.types.setTypeParser(1082, (value: string) => value);

export type Row = Record<string, unknown>;

export interface QueryOptions {
  /** Aborting cancels the statement on the database (the client went away, finding 6). */
  readonly signal?: AbortSignal;
}

export interface Queryable {
  query<R extends Row = Row>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]>;
}

/** A source that reads a large result a page at a time (issue 26, item 6). */
export interface PagedQueryable extends Queryable {
  /**
   * Runs one SELECT and hands its rows to `onPage` in order, a page at a time; the next page waits
   * for `onPage`'s promise. On a PostgreSQL server the pages come through a cursor
   * (src/db/cursor.ts), so that the event loop turns between them; the embedded engine produces a
   * statement's whole output at once, handed over as one page.
   */
  queryPages<R extends Row = Row>(
    sql: string,
    params: readonly unknown[],
    onPage: (rows: R[]) => void | Promise<void>,
    options?: QueryOptions,
  ): Promise<void>;
}

export interface Database extends PagedQueryable {
  readonly engine: 'embedded' | 'postgres';
  /** SECRET_KEY, which keys the customer hashes stored in this database (U1). */
  readonly secretKey: Buffer;
  /**
   * Runs `COPY … FROM STDIN` (text format) with `data` as its rows (UTF-8 when a buffer), on a
   * connection of its own: the import's bulk path. On the embedded engine the session queue passes
   * it to PGlite whole.
   */
  copyIn(sql: string, data: string | Buffer): Promise<void>;
  /**
   * Runs `COPY … TO STDOUT` on a connection of its own and hands its output to `onData` piece by
   * piece as it arrives, each piece data[from, to) (a CopyData message or a part of one, valid
   * only until onData returns; pieces need not follow row boundaries): the snapshot's bulk path.
   * When `onData` returns a promise, the next piece waits for it; the event loop gets a turn every
   * 64 KiB or so (copy-out.ts). A server waits for its reader (backpressure), and its
   * `statement_timeout` is lifted for the COPY, whose length follows the data's size; the
   * embedded engine produces a statement's whole output at once, so keep each COPY small there.
   */
  copyOut(sql: string, onData: CopyReader): Promise<void>;
  /**
   * Pieces of copyOut's output that the reader kept and is done with. On the embedded database
   * this process hosts, they go back to PGlite's thread, to be written again (issue 28): nothing
   * may read them afterwards. Elsewhere they are left to the garbage collector.
   */
  giveBack(pieces: readonly Uint8Array[]): void;
  /**
   * True when this process is a command (the CLI) that hosts the embedded database itself: no
   * server runs on its DATA_DIR, and a transaction it holds keeps no report waiting (issue 27,
   * src/ingest/copy-into-empty.ts). False for a server, a command joined to a server's host, and
   * PostgreSQL.
   */
  readonly hostedByCommand: boolean;
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A transaction's statements, and COPY … FROM STDIN in it (as Database.copyIn). */
export interface Transaction extends Queryable {
  copyIn(sql: string, data: string | Buffer): Promise<void>;
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOENT',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/** True when the database could not be reached, as opposed to a faulty statement. */
/** Resolves when the database answers a statement at all (/readyz); rejects as the query would. */
export async function databaseAnswers(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}

export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code } = errorFields(error);
  if (code !== undefined && CONNECTION_ERROR_CODES.has(code)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection closed/i.test(
    error.message,
  );
}

const BUSY_RETRY_AFTER_S = 2;

/**
 * A database error as the service reports it: waiting too long for a pool connection while every
 * connection is in use is busy, not down (finding 6); a statement cut by statement_timeout is a
 * report too heavy for now; an unreachable database is unavailable (E2).
 */
function classify(error: unknown, pool?: pg.Pool): unknown {
  const poolFull = pool !== undefined && pool.totalCount >= (pool.options.max ?? 10);
  if (error instanceof Error && /timeout exceeded when trying to connect/i.test(error.message) && poolFull) {
    return Object.assign(
      new AppError(
        'SERVICE_BUSY',
        'Service occupé : toutes les connexions à la base sont prises, réessayez dans quelques secondes.',
        {},
        { retryAfterS: BUSY_RETRY_AFTER_S },
      ),
      { cause: error },
    );
  }
  if (errorFields(error).code === '57014' && /statement timeout/i.test(String(error))) {
    return Object.assign(
      new AppError(
        'SERVICE_BUSY',
        'Calcul trop long pour la charge actuelle (STATEMENT_TIMEOUT_MS) : réessayez plus tard ou réduisez la période.',
        {},
        { retryAfterS: BUSY_RETRY_AFTER_S },
      ),
      { cause: error },
    );
  }
  return unavailable(error);
}

function unavailable(error: unknown): unknown {
  if (!isConnectionError(error)) return error;
  const wrapped = appError('DATABASE_UNAVAILABLE');
  wrapped.cause = error;
  return wrapped;
}

class PoolDatabase implements Database {
  constructor(
    readonly engine: 'embedded' | 'postgres',
    private readonly pool: pg.Pool,
    private readonly host: EmbeddedHost | undefined,
    readonly secretKey: Buffer,
    readonly hostedByCommand = false,
  ) {}

  async query<R extends Row = Row>(
    sql: string,
    params: readonly unknown[] = [],
    options: QueryOptions = {},
  ): Promise<R[]> {
    if (options.signal) return this.cancellable<R>(sql, params, options.signal);
    try {
      const result = await this.pool.query<R>(sql, params as unknown[]);
      return result.rows;
    } catch (error) {
      throw classify(error, this.pool);
    }
  }

  /**
   * A statement that stops when `signal` aborts: node-postgres cannot cancel a pooled query, so
   * pg_cancel_backend is sent, from another connection, to the backend running it.
   */
  private async cancellable<R extends Row>(sql: string, params: readonly unknown[], signal: AbortSignal) {
    return this.withCancel(signal, async (client) => (await client.query<R>(sql, params as unknown[])).rows);
  }

  async queryPages<R extends Row = Row>(
    sql: string,
    params: readonly unknown[],
    onPage: (rows: R[]) => void | Promise<void>,
    options: QueryOptions = {},
  ): Promise<void> {
    if (this.engine === 'embedded') {
      await onPage(await this.query<R>(sql, params, options));
      return;
    }
    const signal = options.signal ?? new AbortController().signal;
    await this.withCancel(signal, async (client, broken) => {
      try {
        await readInPages(client, sql, params, onPage, () => signal.aborted);
      } catch (error) {
        await client.query('ROLLBACK').catch(broken);
        throw error;
      }
      signal.throwIfAborted();
    });
  }

  /**
   * Runs `work` on a client of its own, whose statement is cancelled when `signal` aborts; a client
   * `work` calls broken (a ROLLBACK that failed), whose connection failed or whose statement was
   * cancelled is not reused.
   */
  private async withCancel<T>(
    signal: AbortSignal,
    work: (client: pg.PoolClient, broken: () => void) => Promise<T>,
  ): Promise<T> {
    signal.throwIfAborted();
    const client = await this.checkout();
    const backend = (client as unknown as { processID?: number }).processID;
    const cancel = () => {
      if (backend !== undefined)
        void this.pool.query('SELECT pg_cancel_backend($1)', [backend]).catch(() => undefined);
    };
    let broken = false;
    signal.addEventListener('abort', cancel, { once: true });
    try {
      signal.throwIfAborted();
      return await work(client, () => (broken = true));
    } catch (error) {
      broken ||= isConnectionError(error);
      if (signal.aborted) throw signal.reason;
      throw classify(error, this.pool);
    } finally {
      signal.removeEventListener('abort', cancel);
      // After an abort, the cancel may reach the backend late, during another statement: the
      // connection is not reused.
      client.release(broken || signal.aborted);
    }
  }

  /** A client of the pool, or the classified reason why none could be had. */
  private async checkout(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw classify(error, this.pool);
    }
  }

  async copyIn(sql: string, data: string | Buffer): Promise<void> {
    const client = await this.checkout();
    let broken = false;
    try {
      await pipeline(Readable.from(copyPieces(data)), client.query(copyFrom(sql)));
    } catch (error) {
      broken = isConnectionError(error);
      throw unavailable(error);
    } finally {
      client.release(broken);
    }
  }

  giveBack(pieces: readonly Uint8Array[]): void {
    this.host?.giveBack(pieces);
  }

  async copyOut(sql: string, onData: CopyReader): Promise<void> {
    // Issue 28: the database hosted here runs it beside the socket, its output posted back as it
    // comes (direct-copy.ts); through the socket, PGlite's thread held it until the statement ended.
    if (this.host !== undefined) {
      await this.host.copyOut(sql, onData);
      return;
    }
    const client = await this.checkout();
    let finished = false;
    try {
      const server = this.engine === 'postgres';
      if (server) await client.query('BEGIN; SET LOCAL statement_timeout = 0');
      await client.query(new CopyOutQuery(sql, onData)).done;
      if (server) await client.query('COMMIT');
      finished = true;
    } catch (error) {
      throw classify(error, this.pool);
    } finally {
      client.release(!finished); // a COPY left midway (onData threw, an error) leaves the connection unusable
    }
  }

  async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    const client = await this.checkout();
    const tx: Transaction = {
      query: async <R extends Row = Row>(sql: string, params: readonly unknown[] = []) =>
        (await client.query<R>(sql, params as unknown[])).rows,
      copyIn: (sql, data) => pipeline(Readable.from(copyPieces(data)), client.query(copyFrom(sql))),
    };
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await work(tx);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      broken = isConnectionError(error);
      if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
      throw unavailable(error);
    } finally {
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
    await this.host?.close();
  }
}

export interface OpenOptions {
  /** 'server' insists on hosting the embedded database; 'cli' joins a running host. */
  role: HostRole;
  poolSize?: number;
  /**
   * Issue 28: called once this process has started PGlite's worker thread (embedded, hosting it),
   * before PGlite itself has started: the server loads its modules after it (serve.ts).
   */
  onHostStarting?: () => void;
}

function newPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, ...config });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

async function openEmbedded(config: Config, options: OpenOptions): Promise<Database> {
  let host: EmbeddedHost | undefined;
  for (let waited = 0; ; waited += 250) {
    host = await startHost(config.dataDir, options.role, options.onHostStarting);
    if (host) break;
    const other = findHost(config.dataDir);
    if (other && options.role === 'cli') {
      // The host may still be starting PGlite; if it dies instead, try to host it ourselves.
      if (!(await waitForSocket(config.dataDir, other))) continue;
      // A command waits its turn at PGlite's one session for as long as a report or a snapshot
      // build holds it: an import refused after 5 s only because the server was busy is lost work
      // (issue 19: every small import failed so while reports fell back to SQL).
      return new PoolDatabase(
        'embedded',
        embeddedPool(other.socketDir, options.poolSize ?? 2, CLI_CONNECT_TIMEOUT_MS),
        undefined,
        config.secretKey,
      );
    }
    if (other?.role === 'server') {
      throw new Error(`Le dossier ${config.dataDir} est déjà servi par le processus ${other.pid}`);
    }
    // Another command holds the embedded database for a moment: wait for it.
    if (waited > 120_000)
      throw new Error(`Le dossier ${config.dataDir} reste occupé par le processus ${other?.pid}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return new PoolDatabase(
    'embedded',
    embeddedPool(host.socketDir, options.poolSize ?? 4),
    host,
    config.secretKey,
    options.role === 'cli',
  );
}

const CLI_CONNECT_TIMEOUT_MS = 60_000;

function embeddedPool(socketDir: string, max: number, connectionTimeoutMillis = 5_000): pg.Pool {
  return newPool({
    host: socketDir,
    port: SOCKET_PORT,
    user: 'postgres',
    database: 'postgres',
    max,
    connectionTimeoutMillis,
  });
}

export async function openDatabase(config: Config, options: OpenOptions): Promise<Database> {
  if (config.databaseUrl === undefined) return openEmbedded(config, options);
  const pool = newPool({
    connectionString: config.databaseUrl,
    max: options.poolSize ?? 10,
    statement_timeout: config.statementTimeoutMs,
  });
  return new PoolDatabase('postgres', pool, undefined, config.secretKey);
}
