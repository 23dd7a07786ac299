// Serializes the wire-protocol messages of several socket connections onto PGlite's single session.
//
// pglite-socket's own QueryQueueManager keeps a connection's messages together only while a
// transaction is open, so two pooled clients' Parse/Bind/Execute/Sync batches interleave and one
// overwrites the other's unnamed statement; one thrown error also leaves it stuck for good
// (electric-sql/pglite#1046). This queue gives the session to one connection from its first
// extended-protocol message until its Sync, and for the whole of any transaction it opens.
// A connection that closes gives the session back clean (Sync, ROLLBACK), even when it closes
// while one of its statements runs; one that holds the session idle while others wait is evicted.
import type { PGlite } from '@electric-sql/pglite';

interface Pending {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: unknown) => void;
}

// Frontend messages that leave the session mid-batch: Parse, Bind, Describe, Execute, Close, Flush,
// CopyData. Only Sync ('S'), a simple Query ('Q') or Terminate ('X') ends a batch.
const MID_BATCH = new Set(['P', 'B', 'D', 'E', 'C', 'H', 'd'].map((c) => c.charCodeAt(0)));
const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);

/** A simple-protocol Query message. db.exec() would take PGlite's query mutex again: deadlock. */
function queryMessage(sql: string): Uint8Array {
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
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: PGlite,
    /** Closes a connection that holds the session idle while others wait. */
    private readonly evict: (handlerId: number) => void = () => undefined,
    private readonly idleOwnerMs = IDLE_OWNER_MS,
  ) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject });
      void this.drain();
    });
  }

  getQueueLength(): number {
    return this.queue.length;
  }

  clearQueueForHandler(handlerId: number): void {
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
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(current.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length;
                current.onData(data);
              },
            }),
          );
          current.resolve(bytes);
        } catch (error) {
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
