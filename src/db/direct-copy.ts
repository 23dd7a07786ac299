// Issue 28: the COPY … TO STDOUT of the process that hosts the embedded database, run by PGlite's
// thread beside the socket's connections (the same session queue, in turn with them) and its
// output posted back to this thread as it comes (embedded-host.ts, directCopy).
//
// Through the socket, a statement's output waits in PGlite's thread until the statement has ended
// and that thread's event loop runs again: the next page statement of a build could only be sent
// once the last one's output was read, and PGlite's thread idled between them (about 0.65 s of a
// million orders' read, traced), when it was not writing 29,000 pieces of 8 KB to the socket. A
// posted piece reaches this thread at once, and a statement asked for before the last one's
// output is read runs right after it.
//
// The output is the protocol's, as the socket carries it: CopyOutResponse, a CopyData message a
// row, CopyDone, CommandComplete, ReadyForQuery; or an ErrorResponse. Each CopyData message's
// bytes go to the reader (a message cut between two pieces in two calls), in order; a promise it
// returns holds the rest until it settles. Between two turns of the event loop, at most
// TURN_BYTES are read. An ErrorResponse fails the COPY with its message and SQLSTATE (`code`).
import type { Worker } from 'node:worker_threads';
import type { CopyReader } from './copy-out.js';
import { GATHERED_BYTES } from './session-queue.js';

const COPY_DATA = 0x64; // 'd'
const ERROR_RESPONSE = 0x45; // 'E'
const HEADER_BYTES = 5; // type, then int32 length (itself included)
/** Bytes read between two turns of the event loop, as copy-out.ts reads the socket's. */
const TURN_BYTES = 1 << 16;

/** What PGlite's thread posts (embedded-host.ts). */
interface Posted {
  readonly type: string;
  readonly id: number;
  readonly data?: Uint8Array;
  readonly error?: string;
}

/** The COPYs under way of one host's worker, by the id each message names. */
export class DirectCopies {
  private readonly running = new Map<number, DirectCopy>();
  private next = 1;
  private closed = false;
  /** The memory of the pieces PGlite's thread posted, that it may have back (giveBack). */
  private readonly posted = new WeakSet<ArrayBufferLike>();

  constructor(private readonly worker: Worker) {
    worker.on('message', (message: Posted) => {
      const copy = this.running.get(message.id);
      if (copy === undefined) return;
      if (message.type === 'copy-data' && message.data !== undefined) {
        const { buffer, byteOffset, byteLength } = message.data;
        if (buffer.byteLength === GATHERED_BYTES) this.posted.add(buffer);
        copy.piece(Buffer.from(buffer, byteOffset, byteLength));
      } else if (message.type === 'copy-end') {
        this.running.delete(message.id);
        copy.end(message.error);
      }
    });
    worker.once('exit', () => this.closing());
  }

  run(sql: string, onData: CopyReader): Promise<void> {
    if (this.closed) return Promise.reject(new Error('La base embarquée est fermée'));
    const id = this.next++;
    const copy = new DirectCopy(onData);
    this.running.set(id, copy);
    this.worker.postMessage({ type: 'copy', id, sql });
    return copy.done;
  }

  /**
   * Pieces a reader held (build-snapshot.ts) and is done with, given back to PGlite's thread to be
   * written again (embedded-host.ts, SparePieces). Their memory moves there: nothing here may read
   * them again. Pieces this class did not receive from that thread are left alone.
   */
  giveBack(pieces: readonly Uint8Array[]): void {
    if (this.closed) return;
    const buffers: ArrayBuffer[] = [];
    for (const piece of pieces) {
      const { buffer } = piece;
      if (!this.posted.delete(buffer)) continue;
      buffers.push(buffer as ArrayBuffer);
    }
    if (buffers.length > 0) this.worker.postMessage({ type: 'spare', buffers }, buffers);
  }

  /** The database closes: the COPYs under way fail, no other starts. */
  closing(): void {
    this.closed = true;
    for (const copy of this.running.values()) copy.end('La base embarquée est fermée');
    this.running.clear();
  }
}

/** One COPY's output, read in order as its pieces come. */
class DirectCopy {
  readonly done: Promise<void>;
  private resolve: () => void = () => undefined;
  private reject: (error: unknown) => void = () => undefined;
  private readonly pieces: Buffer[] = [];
  private reading = false;
  private ended = false;
  private failure: unknown;
  /** A message header cut by a piece's end, and how many of its bytes came. */
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerBytes = 0;
  /** The current message's type and the bytes of it still to come. */
  private type = 0;
  private left = 0;
  /** An ErrorResponse's bytes, gathered. */
  private errorBytes: Buffer[] = [];
  private bytesSinceTurn = 0;

  constructor(private readonly reader: CopyReader) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.done.catch(() => undefined); // seen by the caller; never an unhandled rejection here
  }

  piece(data: Buffer): void {
    if (this.failure !== undefined) return;
    this.pieces.push(data);
    void this.read();
  }

  /** The statement ended (`error`: PGlite's queue failed it, or the database closed). */
  end(error?: string): void {
    this.ended = true;
    if (error !== undefined) this.failure ??= new Error(error);
    void this.read();
  }

  private async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      while (this.failure === undefined && this.pieces.length > 0) {
        await this.readPiece(this.pieces.shift() as Buffer);
      }
    } catch (error) {
      this.failure ??= error;
    }
    this.reading = false;
    if (this.failure !== undefined) {
      this.pieces.length = 0;
      this.reject(this.failure);
    } else if (this.ended && this.pieces.length === 0) this.resolve();
  }

  private async readPiece(piece: Buffer): Promise<void> {
    const end = piece.length;
    let at = 0;
    while (at < end) {
      if (this.left > 0) {
        const to = Math.min(end, at + this.left);
        this.left -= to - at;
        const from = at;
        at = to;
        if (this.type === COPY_DATA) {
          const waiting = this.reader(piece, from, to);
          if (waiting) await waiting;
          this.bytesSinceTurn += to - from;
          if (this.bytesSinceTurn >= TURN_BYTES) {
            this.bytesSinceTurn = 0;
            await new Promise((resolve) => setImmediate(resolve));
          }
        } else if (this.type === ERROR_RESPONSE) {
          this.errorBytes.push(piece.subarray(from, to));
          if (this.left === 0) this.failure ??= serverError(Buffer.concat(this.errorBytes));
        }
        continue;
      }
      if (this.headerBytes === 0 && end - at >= HEADER_BYTES) {
        this.type = piece[at] as number;
        this.left = piece.readUInt32BE(at + 1) - 4;
        at += HEADER_BYTES;
      } else {
        const take = Math.min(HEADER_BYTES - this.headerBytes, end - at);
        piece.copy(this.header, this.headerBytes, at, at + take);
        this.headerBytes += take;
        at += take;
        if (this.headerBytes < HEADER_BYTES) return;
        this.headerBytes = 0;
        this.type = this.header[0] as number;
        this.left = this.header.readUInt32BE(1) - 4;
      }
      if (this.type === ERROR_RESPONSE) this.errorBytes = [];
    }
  }
}

/** An ErrorResponse's fields (a type byte, a text, a zero; a zero at the end) as an Error. */
function serverError(body: Buffer): Error {
  const fields = new Map<string, string>();
  for (let at = 0; at < body.length && body[at] !== 0;) {
    const type = String.fromCharCode(body[at] as number);
    const stop = body.indexOf(0, at + 1);
    const to = stop < 0 ? body.length : stop;
    fields.set(type, body.toString('utf8', at + 1, to));
    at = to + 1;
  }
  return Object.assign(new Error(fields.get('M') ?? 'COPY failed'), {
    code: fields.get('C'),
    severity: fields.get('S'),
  });
}
