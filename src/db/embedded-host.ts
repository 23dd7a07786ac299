// Worker-thread entry: runs PGlite off the server's event loop and serves it on a Unix socket,
// so the server, the `sales-metrics` command and psql all reach it through the same pg client.
import net from 'node:net';
import fs from 'node:fs';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { GATHERED_BYTES, queryMessage, SessionQueue } from './session-queue.js';

interface HostOptions {
  dataDir: string;
  socketPath: string;
  /** PGlite compiled by the parent (src/db/embedded.ts), shared rather than compiled again. */
  pgliteModule?: PGliteOptions['pgliteWasmModule'];
}

/**
 * PGlite's buffer pool (PostgreSQL's 128 MB by default). Issue 28: making its 128 MB was half of
 * PGlite's start, about 0.35 s of every server's and command's (32 MB: 0.58–0.63 s to open a
 * database of a million orders, against 0.92–0.98 s), and first imports of a million orders with
 * their lines took as long with 32 MB (92.6 and 93.2 s against 93.7 s): the operating system's page
 * cache holds the files either way (docs/decisions.md).
 */
const SHARED_BUFFERS = '32MB';

async function main(): Promise<void> {
  const { dataDir, socketPath, pgliteModule } = workerData as HostOptions;
  const port = parentPort;
  if (!port) throw new Error('embedded-host must run in a worker thread');
  const db = await PGlite.create({
    dataDir,
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
    ...(pgliteModule ? { pgliteWasmModule: pgliteModule } : {}),
  });
  const handlers = new Set<PGLiteSocketHandler>();
  const queue = new SessionQueue(db, (handlerId) => {
    for (const handler of handlers) if (handler.handlerId === handlerId) void handler.detach(true);
  });
  fs.rmSync(socketPath, { force: true });
  const server = net.createServer((socket) => {
    const handler = new PGLiteSocketHandler({
      // SessionQueue implements the three methods the handler calls.
      queryQueue: queue as unknown as ConstructorParameters<typeof PGLiteSocketHandler>[0]['queryQueue'],
      closeOnDetach: true,
    });
    handlers.add(handler);
    handler.addEventListener('close', () => handlers.delete(handler));
    handler.addEventListener('error', () => handlers.delete(handler));
    handler.attach(socket).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  fs.chmodSync(socketPath, 0o600);
  const spare = new SparePieces();
  port.on('message', (message: { type: string; id?: number; sql?: string; buffers?: ArrayBuffer[] }) => {
    if (message.type === 'copy') {
      directCopy(queue, port, spare, message.id as number, message.sql as string);
      return;
    }
    if (message.type === 'spare') {
      spare.take(message.buffers ?? []);
      return;
    }
    if (message.type !== 'close') return;
    server.close();
    void Promise.allSettled([...handlers].map((h) => h.detach(true)))
      .then(() => db.close())
      .finally(() => {
        fs.rmSync(socketPath, { force: true });
        port.postMessage({ type: 'closed' });
      });
  });
  port.postMessage({ type: 'ready' });
}

/** The session queue's name for the hosting process's own statements (pglite-socket's are positive). */
const DIRECT = -1;

/**
 * Issue 28: a COPY … TO STDOUT of the process hosting the database, its output posted to it as it
 * comes (DirectCopy in embedded.ts) rather than written to the socket. This thread's event loop
 * does not run while PGlite executes a statement, so what a statement writes to the socket waits
 * there until the next statement has run: a posted message reaches the other thread at once, and
 * the next statement, sent before this one's output was read, runs right after it.
 */
function directCopy(
  queue: SessionQueue,
  port: MessagePort,
  spare: SparePieces,
  id: number,
  sql: string,
): void {
  spare.copyStarts();
  queue
    .enqueue(
      DIRECT,
      queryMessage(sql),
      (data) => {
        // A piece of the queue's own (GatheredOutput): its memory moves to the other thread.
        const piece = data as Buffer;
        port.postMessage({ type: 'copy-data', id, data: piece }, [piece.buffer as ArrayBuffer]);
      },
      () => spare.piece(),
    )
    .then(
      () => port.postMessage({ type: 'copy-end', id }),
      (error: unknown) =>
        port.postMessage({
          type: 'copy-end',
          id,
          error: error instanceof Error ? error.message : String(error),
        }),
    )
    .finally(() => spare.copyEnds());
}

/** Pieces kept for the COPYs' output at most (16 MB). */
const MOST_SPARE_PIECES = 64;
/** The spare pieces are let go once no COPY has run for this long. */
const SPARE_KEPT_MS = 2_000;

/**
 * Issue 28: the pieces of a COPY's output the hosting process has read, given back to be written
 * again. Each new piece is memory the system must map page by page as it is first written: about
 * 0.3 s of this thread's 2.3 s while a million orders were read (profiled), against a few
 * hundredths written again. Kept only while COPYs run, and bounded.
 */
class SparePieces {
  private readonly pieces: Buffer[] = [];
  private running = 0;
  private timer: NodeJS.Timeout | undefined;

  piece(): Buffer {
    return this.pieces.pop() ?? Buffer.allocUnsafe(GATHERED_BYTES);
  }

  take(buffers: readonly ArrayBuffer[]): void {
    for (const buffer of buffers)
      if (buffer.byteLength === GATHERED_BYTES && this.pieces.length < MOST_SPARE_PIECES)
        this.pieces.push(Buffer.from(buffer));
    if (this.running === 0) this.letGoLater();
  }

  copyStarts(): void {
    this.running += 1;
    clearTimeout(this.timer);
  }

  copyEnds(): void {
    this.running -= 1;
    if (this.running === 0) this.letGoLater();
  }

  private letGoLater(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => (this.pieces.length = 0), SPARE_KEPT_MS).unref();
  }
}

main().catch((error: unknown) => {
  parentPort?.postMessage({
    type: 'failed',
    message: error instanceof Error ? error.message : String(error),
  });
});
