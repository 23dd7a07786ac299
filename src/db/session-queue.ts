// Serializes the wire-protocol messages of several socket connections onto PGlite's single session.
//
// pglite-socket's own QueryQueueManager keeps a connection's messages together only while a
// transaction is open, so two pooled clients' Parse/Bind/Execute/Sync batches interleave and one
// overwrites the other's unnamed statement; one thrown error also leaves it stuck for good
// (electric-sql/pglite#1046). This queue gives the session to one connection from its first
// extended-protocol message until its Sync, and for the whole of any transaction it opens.
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

  constructor(private readonly db: PGlite) {}

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
    if (this.owner !== handlerId) return;
    await this.db.runExclusive(async () => {
      if (this.ownerMidBatch) await this.db.execProtocolRaw(SYNC);
      if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    });
    this.owner = null;
    this.ownerMidBatch = false;
    void this.drain();
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
        const type = current.message[0] ?? 0;
        this.ownerMidBatch = !isStartup(current.message) && MID_BATCH.has(type);
        this.owner = this.ownerMidBatch || this.db.isInTransaction() ? current.handlerId : null;
      }
    } finally {
      this.running = false;
    }
  }
}
