// Serializes the wire-protocol messages of several socket connections onto PGlite's single session.
//
// pglite-socket's own QueryQueueManager keeps a connection's messages together only while a
// transaction is open, so two pooled clients' Parse/Bind/Execute/Sync batches interleave and one
// overwrites the other's unnamed statement; one thrown error also leaves it stuck for good
// (electric-sql/pglite#1046). This queue gives the session to one connection from its first
// extended-protocol message until its Sync, and for the whole of any transaction it opens.
// A connection that closes gives the session back clean (Sync, ROLLBACK), even when it closes
// while one of its statements runs; one that holds the session idle while others wait is evicted.
//
// COPY … FROM STDIN (the import's bulk path) is a sub-protocol PGlite cannot resume across calls:
// the query, its CopyData and its CopyDone must reach PGlite in one call, or the backend exits
// (electric-sql/pglite#1028). The queue answers the query at once with the CopyInResponse the
// client waits for, keeps its CopyData aside (up to MAX_COPY_BYTES: the import sends batches of a
// few megabytes), and submits the whole as one message when CopyDone or CopyFail arrives, minus
// the CopyInResponse PGlite then sends again. Only simple-protocol COPY is recognised.
import type { PGlite } from '@electric-sql/pglite';

interface Pending {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  /** A piece of GATHERED_BYTES to gather the output into (the host's own, written again). */
  newPiece?: () => Buffer;
  resolve: (bytes: number) => void;
  reject: (error: unknown) => void;
}

// Frontend messages that leave the session mid-batch: Parse, Bind, Describe, Execute, Close, Flush,
// CopyData. Only Sync ('S'), a simple Query ('Q') or Terminate ('X') ends a batch.
const MID_BATCH = new Set(['P', 'B', 'D', 'E', 'C', 'H', 'd'].map((c) => c.charCodeAt(0)));
const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);
const QUERY = 0x51; // 'Q'
const COPY_DATA = 0x64; // 'd'
const COPY_DONE = 0x63; // 'c'
const COPY_FAIL = 0x66; // 'f'
const COPY_IN_RESPONSE = 0x47; // 'G'
/** Text format, columns unannounced: node-postgres and psql only wait for the message itself. */
const COPY_IN_RESPONSE_MESSAGE = new Uint8Array([COPY_IN_RESPONSE, 0, 0, 0, 7, 0, 0, 0]);
/** The CopyData one COPY may hold in memory; past it the COPY fails (CopyFail) as a whole. */
export const MAX_COPY_BYTES = 64 * 1024 * 1024;
// One statement: semicolons only inside quoted literals (a CSV delimiter ';').
const COPY_FROM_STDIN =
  /^\s*COPY\b(?:[^;']|'(?:[^']|'')*')*?\bFROM\s+STDIN\b(?:[^;']|'(?:[^']|'')*')*;?\s*$/i;

/** A CopyFail message carrying `reason`. */
function copyFailMessage(reason: string): Uint8Array {
  const text = Buffer.from(`${reason}\0`, 'utf8');
  const message = Buffer.alloc(5 + text.length);
  message[0] = COPY_FAIL;
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}

/** True for a simple-protocol Query message whose text is one COPY … FROM STDIN. */
function isCopyFromStdin(message: Uint8Array): boolean {
  if (message[0] !== QUERY || message.length < 10) return false;
  const head = Buffer.from(message.buffer, message.byteOffset + 5, Math.min(message.length - 5, 8));
  if (!/^\s*copy\b/i.test(head.toString('latin1'))) return false;
  const text = Buffer.from(message.buffer, message.byteOffset + 5, message.length - 6).toString('utf8');
  return COPY_FROM_STDIN.test(text);
}

/** A COPY FROM STDIN being gathered for one connection. */
interface GatheredCopy {
  parts: Uint8Array[];
  bytes: number;
  overflowed: boolean;
}

/** Drops the first message of a response stream when it is a CopyInResponse (already sent). */
function withoutCopyInResponse(onData: (data: Uint8Array) => void): (data: Uint8Array) => void {
  let head: Buffer | undefined = Buffer.alloc(0);
  return (data) => {
    if (head === undefined) return onData(data);
    head = Buffer.concat([head, data]);
    if (head.length < 5) return;
    const skip = head[0] === COPY_IN_RESPONSE ? 1 + head.readInt32BE(1) : 0;
    if (head.length < skip) return;
    const rest = head.subarray(skip);
    head = undefined;
    if (rest.length > 0) onData(rest);
  };
}

/**
 * Bytes of PGlite's output gathered before they go to the connection. PGlite hands a statement's
 * output over 8 KB at a time, and pglite-socket writes each piece to the socket: a million orders'
 * read for a snapshot (230 MB) was 29,000 socket writes in PGlite's thread, and as many reads in
 * the server's, each with its own allocation and callback (issue 28, profiled). Gathered, a few
 * hundred. A statement's output is sent whole when it ends, however small.
 */
export const GATHERED_BYTES = 1 << 18;

/** A copy of `data` in memory of its own (never a slice of Node's shared pool: it may be moved). */
function ownCopy(data: Uint8Array): Buffer {
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return Buffer.from(copy.buffer, 0, copy.length);
}

/**
 * A statement's output to `onData` in pieces of up to GATHERED_BYTES, each a Buffer that owns its
 * whole memory and that nothing here touches again (the host may transfer it to another thread).
 * A statement's first bytes are copied as they are: most statements send no more, and a piece of
 * GATHERED_BYTES is made only once more come.
 */
class GatheredOutput {
  private piece: Buffer | undefined;
  private used = 0;
  private started = false;
  /** The statement's first bytes, until more come. */
  private first: Buffer | undefined;

  constructor(
    private readonly onData: (data: Uint8Array) => void,
    /** Memory for a piece: new by default, the host's own pieces given back (embedded-host.ts). */
    private readonly newPiece: () => Buffer = () => Buffer.allocUnsafe(GATHERED_BYTES),
  ) {}

  add(data: Uint8Array): void {
    if (!this.started) {
      this.started = true;
      this.first = ownCopy(data); // PGlite's memory, written again by its next piece
      return;
    }
    const first = this.first;
    if (first !== undefined) {
      this.first = undefined;
      this.gather(first);
    }
    this.gather(data);
  }

  /** What was gathered, to the connection now. */
  flush(): void {
    const { first, piece, used } = this;
    if (first !== undefined) {
      this.first = undefined;
      this.onData(first);
    }
    if (piece === undefined || used === 0) return;
    this.piece = undefined;
    this.used = 0;
    this.onData(piece.subarray(0, used));
  }

  private gather(data: Uint8Array): void {
    if (this.piece !== undefined && this.used + data.length > GATHERED_BYTES) this.flush();
    if (data.length >= GATHERED_BYTES) {
      this.onData(ownCopy(data));
      return;
    }
    this.piece ??= this.newPiece();
    this.piece.set(data, this.used);
    this.used += data.length;
  }
}

/** A simple-protocol Query message. db.exec() would take PGlite's query mutex again: deadlock. */
export function queryMessage(sql: string): Uint8Array {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const message = Buffer.alloc(5 + text.length);
  message.write('Q', 0, 'ascii');
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}
const ROLLBACK = queryMessage('ROLLBACK');
/** Like PostgreSQL's idle_in_transaction_session_timeout, but only while others are waiting. */
export const IDLE_OWNER_MS = 30_000;

/** True for the startup packet, which has no type byte. */
function isStartup(message: Uint8Array): boolean {
  return message.length >= 8 && message[4] === 0 && message[5] === 3 && message[6] === 0 && message[7] === 0;
}

export class SessionQueue {
  private queue: Pending[] = [];
  private running = false;
  /** The connection that holds the session (mid-batch or in a transaction), if any. */
  private owner: number | null = null;
  private ownerMidBatch = false;
  /** The connection whose message is executing now. */
  private executing: number | null = null;
  private readonly closed = new Set<number>();
  private readonly copies = new Map<number, GatheredCopy>();
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: PGlite,
    /** Closes a connection that holds the session idle while others wait. */
    private readonly evict: (handlerId: number) => void = () => undefined,
    private readonly idleOwnerMs = IDLE_OWNER_MS,
  ) {}

  enqueue(
    handlerId: number,
    message: Uint8Array,
    onData: (data: Uint8Array) => void,
    newPiece?: () => Buffer,
  ): Promise<number> {
    const gathered = this.gatherCopy(handlerId, message, onData);
    if (gathered !== undefined) return gathered;
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject, ...(newPiece ? { newPiece } : {}) });
      void this.drain();
    });
  }

  /**
   * A COPY FROM STDIN's messages, kept until the whole can run as one call; undefined for any
   * other message (queued as usual). Nothing reaches PGlite before CopyDone or CopyFail.
   */
  private gatherCopy(
    handlerId: number,
    message: Uint8Array,
    onData: (data: Uint8Array) => void,
  ): Promise<number> | undefined {
    const copy = this.copies.get(handlerId);
    if (copy === undefined) {
      if (!isCopyFromStdin(message)) return undefined;
      this.copies.set(handlerId, { parts: [message], bytes: message.length, overflowed: false });
      onData(COPY_IN_RESPONSE_MESSAGE);
      return Promise.resolve(COPY_IN_RESPONSE_MESSAGE.length);
    }
    const type = message[0];
    if (type === COPY_DATA) {
      if (!copy.overflowed && copy.bytes + message.length > MAX_COPY_BYTES) {
        copy.overflowed = true;
        copy.parts = copy.parts.slice(0, 1);
      }
      if (!copy.overflowed) {
        copy.parts.push(message);
        copy.bytes += message.length;
      }
      return Promise.resolve(0);
    }
    if (type !== COPY_DONE && type !== COPY_FAIL) return undefined; // a protocol error: PGlite says so
    this.copies.delete(handlerId);
    const end = copy.overflowed
      ? copyFailMessage(
          `COPY FROM STDIN trop volumineux pour la base embarquée (${MAX_COPY_BYTES} octets au plus)`,
        )
      : message;
    const whole = Buffer.concat([...copy.parts, end]);
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message: whole, onData: withoutCopyInResponse(onData), resolve, reject });
      void this.drain();
    });
  }

  getQueueLength(): number {
    return this.queue.length;
  }

  clearQueueForHandler(handlerId: number): void {
    this.copies.delete(handlerId);
    const kept: Pending[] = [];
    for (const item of this.queue) {
      if (item.handlerId === handlerId) item.reject(new Error('connection closed'));
      else kept.push(item);
    }
    this.queue = kept;
  }

  /** Called when a connection goes away: give the session back in a clean state. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    // A message of this connection still executing: drain() cleans up right after it.
    if (this.executing === handlerId) {
      this.closed.add(handlerId);
      return;
    }
    if (this.owner === handlerId) await this.release();
  }

  private async release(): Promise<void> {
    await this.cleanSession();
    void this.drain();
  }

  /** Ends the owner's batch and transaction, and frees the session. */
  private async cleanSession(): Promise<void> {
    await this.db.runExclusive(async () => {
      if (this.ownerMidBatch) await this.db.execProtocolRaw(SYNC);
      if (this.db.isInTransaction()) await this.db.execProtocolRaw(ROLLBACK);
    });
    this.owner = null;
    this.ownerMidBatch = false;
  }

  /** While the owner sends nothing and others wait, count down to its eviction. */
  private watchIdleOwner(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const owner = this.owner;
    if (owner === null || this.queue.length === 0) return;
    this.idleTimer = setTimeout(() => {
      if (this.owner === owner && !this.running && !this.queue.some((p) => p.handlerId === owner))
        this.evict(owner);
    }, this.idleOwnerMs);
    this.idleTimer.unref();
  }

  private next(): Pending | undefined {
    if (this.owner === null) return this.queue.shift();
    const index = this.queue.findIndex((p) => p.handlerId === this.owner);
    return index === -1 ? undefined : this.queue.splice(index, 1)[0];
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let item = this.next(); item; item = this.next()) {
        const current = item;
        let bytes = 0;
        this.executing = current.handlerId;
        const output = new GatheredOutput(current.onData, current.newPiece);
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(current.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length;
                output.add(data);
              },
            }),
          );
          output.flush();
          current.resolve(bytes);
        } catch (error) {
          output.flush();
          current.reject(error);
        }
        this.executing = null;
        const type = current.message[0] ?? 0;
        this.ownerMidBatch = !isStartup(current.message) && MID_BATCH.has(type);
        this.owner = this.ownerMidBatch || this.db.isInTransaction() ? current.handlerId : null;
        // The connection closed while its statement ran.
        if (this.closed.delete(current.handlerId) && this.owner !== null) await this.cleanSession();
      }
    } finally {
      this.executing = null;
      this.running = false;
      this.watchIdleOwner();
    }
  }
}
