// `COPY … TO STDOUT` read straight off the connection's socket (issue 28, item 2). The snapshot's
// builds read millions of rows this way, one CopyData message a row. Through pg-copy-streams,
// each message was cut out of a buffer list, gathered again into a stream's chunk and passed
// through a Readable; through node-postgres' own parser, each became a Buffer view, a message
// object and an event. At a million orders that was 0.9–1.1 s and 0.5–0.8 s of the thread's
// time for the stream alone, against 0.4–0.5 s here, where the socket's pieces are read in
// place and each message's bytes handed on as a range of them (docs/benchmarks.md).
//
// A Submittable, as pg-copy-streams is, and attached as it is: from the query's submission, the
// socket's pieces come here instead of to node-postgres' parser, up to the first message that is
// not the COPY's data (CopyDone, or an ErrorResponse); from that message on, everything goes back
// to the parser, which reads the statement's end (CommandComplete, ReadyForQuery) or its error
// and tells this query (handleReadyForQuery, handleError). Notices and parameter changes sent
// during the COPY are skipped.
//
// The reader gets each message's bytes (a row or a part of one: BinaryCopyRows reads the binary
// format across them), valid until it returns; a promise it returns holds the rest of the piece
// and pauses the socket until it settles. Every COPY_TURN_BYTES, the event loop gets a turn
// before the rest is read, for the requests being served; a paused socket is backpressure on the
// database, which waits for its reader.
import type pg from 'pg';

/** Bytes read between two turns of the event loop (a few hundred rows, a millisecond or so). */
const COPY_TURN_BYTES = 1 << 16;

/** Message types (the frontend/backend protocol's first byte of a message). */
const COPY_DATA = 0x64; // 'd'
const COPY_OUT_RESPONSE = 0x48; // 'H'
const NOTICE = 0x4e; // 'N'
const PARAMETER_STATUS = 0x53; // 'S'
const NOTIFICATION = 0x41; // 'A'
const HEADER_BYTES = 5; // type, then int32 length (itself included)

/** Bytes data[from, to) of the COPY's output, a message or a part of one. */
export type CopyReader = (data: Buffer, from: number, to: number) => void | Promise<void>;

type DataListener = (piece: Buffer) => void;

export class CopyOutQuery implements pg.Submittable {
  /** Settles when the statement ended, failed, or its reader threw or rejected. */
  readonly done: Promise<void>;
  private resolve: () => void = () => undefined;
  private reject: (error: unknown) => void = () => undefined;
  private stream: pg.Connection['stream'] | undefined;
  /** node-postgres' own listener of the socket, given the pieces back once the data ends. */
  private parserListener: DataListener | undefined;
  private readonly listener: DataListener = (piece) => void this.read(piece, 0);
  private failed = false;
  /** A message header cut by a piece's end, and how many of its bytes came. */
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerBytes = 0;
  /** The current message's type and the bytes of it still to come. */
  private type = 0;
  private left = 0;
  private bytesSinceTurn = 0;

  constructor(
    readonly text: string,
    private readonly reader: CopyReader,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** An error returned, not thrown: node-postgres then reports it through handleError. */
  submit(connection: pg.Connection): Error | undefined {
    const stream = connection.stream;
    const listeners = stream.listeners('data') as DataListener[];
    if (listeners.length !== 1) return new Error('COPY: the connection is not read by one parser');
    this.stream = stream;
    this.parserListener = listeners[0];
    stream.removeListener('data', this.parserListener as DataListener);
    stream.on('data', this.listener);
    // node-postgres' Connection sends a simple query this way (the typings omit it).
    (connection as unknown as { query(text: string): void }).query(this.text);
    return undefined;
  }

  /**
   * Data the parser read itself: only after a message the protocol does not send during a COPY
   * (handed over with the rest). The COPY fails rather than be read out of order.
   */
  handleCopyData(): void {
    this.fail(new Error('COPY: data after an unexpected message'));
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {
    if (!this.failed) this.resolve();
  }

  /** An ErrorResponse (ReadyForQuery follows) or the connection's failure (nothing follows). */
  handleError(error: unknown): void {
    this.fail(error);
  }

  /**
   * The piece's bytes from `at` on, messages read until one is not the COPY's data. True when
   * the reading stopped before the piece's end: it goes on later (resumeAfter) or the socket was
   * handed back (handOver), or it failed.
   */
  private read(piece: Buffer, at: number): boolean {
    const end = piece.length;
    while (at < end && !this.failed) {
      if (this.left > 0) {
        const to = Math.min(end, at + this.left);
        this.left -= to - at;
        const from = at;
        at = to;
        if (this.type !== COPY_DATA) continue; // a notice's or a status's bytes
        this.bytesSinceTurn += to - from;
        let waiting: void | Promise<void>;
        try {
          waiting = this.reader(piece, from, to);
        } catch (error) {
          this.fail(error);
          return true;
        }
        if (waiting) return this.resumeAfter(waiting, piece, at);
        if (this.bytesSinceTurn >= COPY_TURN_BYTES) {
          this.bytesSinceTurn = 0;
          return this.resumeAfter(new Promise((resolve) => setImmediate(resolve)), piece, at);
        }
        continue;
      }
      // A message's header, whole in this piece or completed from the last one's end.
      let type: number;
      let length: number;
      if (this.headerBytes === 0 && end - at >= HEADER_BYTES) {
        type = piece[at] as number;
        length = piece.readUInt32BE(at + 1);
      } else {
        const take = Math.min(HEADER_BYTES - this.headerBytes, end - at);
        piece.copy(this.header, this.headerBytes, at, at + take);
        this.headerBytes += take;
        if (this.headerBytes < HEADER_BYTES) return false;
        this.headerBytes = 0;
        type = this.header[0] as number;
        length = this.header.readUInt32BE(1);
        // The header's bytes of this piece are taken; a handover gives the parser the whole header.
        if (!copyMessage(type)) return this.handOver(Buffer.concat([this.header, piece.subarray(at + take)]));
        at += take - HEADER_BYTES;
      }
      if (!copyMessage(type)) return this.handOver(piece.subarray(at));
      this.type = type;
      this.left = length - 4;
      at += HEADER_BYTES;
    }
    return this.failed;
  }

  /** The rest of the piece, read once `waiting` settles; the socket paused meanwhile. */
  private resumeAfter(waiting: Promise<void>, piece: Buffer, at: number): true {
    const stream = this.stream as pg.Connection['stream'];
    stream.pause();
    waiting.then(
      () => {
        // Failed: the caller discards the connection as it is.
        if (!this.failed && !this.read(piece, at)) stream.resume();
      },
      (error: unknown) => this.fail(error),
    );
    return true;
  }

  /** The COPY's data ended (CopyDone) or failed: the socket and these bytes back to the parser. */
  private handOver(rest: Buffer): true {
    const stream = this.stream as pg.Connection['stream'];
    const parse = this.parserListener as DataListener;
    stream.removeListener('data', this.listener);
    stream.on('data', parse);
    if (rest.length > 0) parse(rest);
    stream.resume();
    return true;
  }

  private fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.reject(error);
  }
}

/** Messages read here: the COPY's data and what may come between its messages. */
function copyMessage(type: number): boolean {
  return (
    type === COPY_DATA ||
    type === COPY_OUT_RESPONSE ||
    type === NOTICE ||
    type === PARAMETER_STATUS ||
    type === NOTIFICATION
  );
}
