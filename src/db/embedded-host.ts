// Worker-thread entry: runs PGlite off the server's event loop and serves it on a Unix socket,
// so the server, the `sales-metrics` command and psql all reach it through the same pg client.
import net from 'node:net';
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { SessionQueue } from './session-queue.js';

interface HostOptions {
  dataDir: string;
  socketPath: string;
  /** PGlite compiled by the parent (src/db/embedded.ts), shared rather than compiled again. */
  pgliteModule?: PGliteOptions['pgliteWasmModule'];
}

async function main(): Promise<void> {
  const { dataDir, socketPath, pgliteModule } = workerData as HostOptions;
  const port = parentPort;
  if (!port) throw new Error('embedded-host must run in a worker thread');
  const db = await PGlite.create({ dataDir, ...(pgliteModule ? { pgliteWasmModule: pgliteModule } : {}) });
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
  port.on('message', (message: { type: string }) => {
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

main().catch((error: unknown) => {
  parentPort?.postMessage({
    type: 'failed',
    message: error instanceof Error ? error.message : String(error),
  });
});
