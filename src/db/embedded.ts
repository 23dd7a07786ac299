// The embedded database's host: one process at a time runs PGlite for a DATA_DIR, in a worker
// thread, and serves it on a Unix socket. Every other process (the CLI while the server runs,
// psql) connects to that socket as a client (X1).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import net from 'node:net';
import { Worker } from 'node:worker_threads';
import type { PGliteOptions } from '@electric-sql/pglite';
import type { CopyReader } from './copy-out.js';
import { DirectCopies } from './direct-copy.js';
import { keepPrivate, makePrivate } from './private-files.js';
import { errorFields } from '../errors.js';
import { isRunning, ownMark } from './process-identity.js';

export type HostRole = 'server' | 'cli';

export interface HostRecord {
  pid: number;
  /** The holder's start time (process-identity.ts): a reused pid is not the holder. */
  started?: string;
  role: HostRole;
  socketDir: string;
}

export interface EmbeddedHost {
  readonly socketDir: string;
  /**
   * Issue 28: a COPY … TO STDOUT run for this process beside the socket's connections, its output
   * posted by PGlite's thread as it comes (embedded-host.ts, directCopy). Each call is sent at
   * once: a statement asked for before the last one's output is read runs right after it.
   */
  copyOut(sql: string, onData: CopyReader): Promise<void>;
  /** Pieces of copyOut's output a reader held and is done with (DirectCopies.giveBack). */
  giveBack(pieces: readonly Uint8Array[]): void;
  close(): Promise<void>;
}

const LOCK_FILE = 'host.json';
// psql and pg look for <dir>/.s.PGSQL.<port>; a Unix socket path has at most 107 bytes.
export const SOCKET_PORT = 5432;
const SOCKET_NAME = `.s.PGSQL.${SOCKET_PORT}`;

function socketDirFor(dataDir: string): string {
  if (path.join(dataDir, SOCKET_NAME).length < 100) return dataDir;
  const hash = crypto.createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `sales-metrics-${hash}`);
}

/** A host.json as this module writes it, or undefined for anything else. */
function toHostRecord(value: unknown): HostRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (!('pid' in value) || typeof value.pid !== 'number') return undefined;
  if (!('role' in value) || (value.role !== 'server' && value.role !== 'cli')) return undefined;
  if (!('socketDir' in value) || typeof value.socketDir !== 'string') return undefined;
  const started = 'started' in value && typeof value.started === 'string' ? value.started : undefined;
  return { pid: value.pid, started, role: value.role, socketDir: value.socketDir };
}

// A lock file is written in one call right after it is created: one still unreadable after this
// long was cut short by a crash between the two.
const TORN_LOCK_MS = 5_000;

function isTorn(file: string): boolean {
  try {
    return Date.now() - fs.statSync(file).mtimeMs > TORN_LOCK_MS;
  } catch {
    return false;
  }
}

/**
 * The live host of dataDir, if any. A record left by a crashed process is removed (finding 8):
 * its pid gone, a zombie, exiting, or now another process's; so is a torn record.
 */
export function findHost(dataDir: string): HostRecord | undefined {
  const file = path.join(dataDir, LOCK_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  let record: HostRecord | undefined;
  try {
    record = toHostRecord(JSON.parse(text));
  } catch {
    record = undefined;
  }
  if (record && isRunning(record)) return record;
  if (record || isTorn(file)) removeIfUnchanged(file, text);
  return undefined;
}

/** Removes a stale lock unless another process has just replaced it with its own. */
function removeIfUnchanged(file: string, text: string): void {
  try {
    if (fs.readFileSync(file, 'utf8') === text) fs.rmSync(file, { force: true });
  } catch {
    // already gone
  }
}

/** Waits until a live host's socket accepts connections (the host locks before PGlite is ready). */
export async function waitForSocket(
  dataDir: string,
  host: HostRecord,
  timeoutMs = 120_000,
): Promise<boolean> {
  const socketPath = path.join(host.socketDir, SOCKET_NAME);
  for (const started = Date.now(); Date.now() - started < timeoutMs;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(socketPath, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return true;
    if (findHost(dataDir)?.pid !== host.pid) return false; // the host went away
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** Takes the host lock atomically; false when another live process holds it. */
function tryLock(dataDir: string, record: HostRecord): boolean {
  fs.mkdirSync(dataDir, { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(path.join(dataDir, LOCK_FILE), JSON.stringify(record), { flag: 'wx' });
      return true;
    } catch (error) {
      if (errorFields(error).code !== 'EEXIST') throw error;
      if (findHost(dataDir)) return false;
    }
  }
  return false;
}

/**
 * PGlite's WebAssembly, compiled once per process and shared with every host worker it starts: a
 * worker compiling it again cost about 0.8 s of CPU per database opened (the tests open dozens
 * per process; a server or a command opens one and pays the same once). Undefined if the file is
 * not where PGlite keeps it: the worker then loads it itself, as before.
 */
type CompiledPglite = NonNullable<PGliteOptions['pgliteWasmModule']>;
// Node's global; the project's libraries leave out the DOM types that declare it.
const { WebAssembly: wasm } = globalThis as unknown as {
  WebAssembly: { compile(bytes: Uint8Array): Promise<CompiledPglite> };
};
let compiledPglite: Promise<CompiledPglite | undefined> | undefined;
function pgliteModule(): Promise<CompiledPglite | undefined> {
  compiledPglite ??= Promise.resolve()
    .then(() => fs.promises.readFile(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite'))))
    .then((bytes) => wasm.compile(bytes))
    .catch(() => undefined);
  return compiledPglite;
}

/** PGlite's package version: its bundled files (the time zones among them) go with it. */
export function pgliteVersion(): string {
  try {
    const main = new URL(import.meta.resolve('@electric-sql/pglite'));
    const manifest = JSON.parse(fs.readFileSync(new URL('../package.json', main), 'utf8')) as {
      version?: unknown;
    };
    return String(manifest.version);
  } catch {
    return 'unknown';
  }
}

async function startWorker(dataDir: string, socketPath: string, onStarting?: () => void): Promise<Worker> {
  const worker = new Worker(new URL('./embedded-host.js', import.meta.url), {
    workerData: { dataDir: path.join(dataDir, 'pgdata'), socketPath, pgliteModule: await pgliteModule() },
  });
  onStarting?.();
  return new Promise((resolve, reject) => {
    worker.once('message', (message: { type: string; message?: string }) => {
      if (message.type === 'ready') resolve(worker);
      else reject(new Error(`La base embarquée n'a pas démarré : ${message.message ?? message.type}`));
    });
    worker.once('error', reject);
  });
}

/**
 * Starts hosting dataDir in this process. Returns undefined when another live process hosts it
 * (the caller then connects to that host's socket). onStarting: called once PGlite's worker thread
 * has been started, before PGlite is ready.
 */
export async function startHost(
  dataDir: string,
  role: HostRole,
  onStarting?: () => void,
): Promise<EmbeddedHost | undefined> {
  const socketDir = socketDirFor(dataDir);
  makePrivate(dataDir); // finding 12: before the lock file and PGlite's files are written
  if (!tryLock(dataDir, { ...ownMark, role, socketDir })) return undefined;
  const release = (): void => fs.rmSync(path.join(dataDir, LOCK_FILE), { force: true });
  let worker: Worker;
  try {
    fs.mkdirSync(socketDir, { recursive: true, mode: 0o700 });
    worker = await startWorker(dataDir, path.join(socketDir, SOCKET_NAME), onStarting);
  } catch (error) {
    release();
    throw error;
  }
  process.once('exit', release);
  const stopKeepingPrivate = keepPrivate(dataDir);
  let closing: Promise<void> | undefined;
  // Without its database worker the process can only answer 503: stop, so that a supervisor
  // restarts it (the data is on disk).
  worker.on('exit', (code) => {
    if (closing) return;
    process.stderr.write(
      `sales-metrics : la base embarquée s’est arrêtée (code ${code}) ; arrêt du processus\n`,
    );
    release();
    process.exit(1);
  });
  const copies = new DirectCopies(worker);
  return {
    socketDir,
    copyOut: (sql, onData) => copies.run(sql, onData),
    giveBack: (pieces) => copies.giveBack(pieces),
    close() {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => void worker.terminate().then(() => resolve()), 10_000);
        const closed = (message: { type?: string }): void => {
          if (message.type !== 'closed') return;
          worker.off('message', closed);
          clearTimeout(timer);
          void worker.terminate().then(() => resolve());
        };
        worker.on('message', closed);
        copies.closing();
        worker.postMessage({ type: 'close' });
      }).finally(() => {
        stopKeepingPrivate();
        release();
        process.removeListener('exit', release);
      });
      return closing;
    },
  };
}
