// The real `sales-metrics` command and server as child processes.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BIN = path.join(ROOT, 'bin/sales-metrics.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  env: Record<string, string>,
  stdin?: string | Buffer,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

/** The `sales-metrics` command with --json on env's database: its parsed answer, or a thrown error. */
export function cliJson(env: Record<string, string>) {
  return async (...args: string[]): Promise<Record<string, unknown>> => {
    const result = await runCli([...args, '--json'], env);
    if (result.code !== 0) throw new Error(`sales-metrics ${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface ServerProcess {
  baseUrl: string;
  /** Its process id (for /proc figures). */
  pid: number;
  output(): string;
  /** Standard output alone: the JSON log lines (the demo banner goes to stderr). */
  stdout(): string;
  stop(): Promise<number | null>;
  /** SIGKILL, as a crash or an OOM kill: no shutdown hook runs. Resolves once the process has exited. */
  kill(): Promise<number | null>;
}

/** Starts `sales-metrics serve` (after `nodeArgs`, e.g. --cpu-prof) and waits until it answers HTTP. */
export async function startServer(
  env: Record<string, string>,
  timeoutMs = 120_000,
  nodeArgs: readonly string[] = [],
): Promise<ServerProcess> {
  // The free port is free when asked for, not always when the server binds it: a test file
  // running beside this one may take it in between. The server then exits at once; try another.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOnPort(await freePort(), env, timeoutMs, nodeArgs);
    } catch (error) {
      if (attempt === 3 || !(error instanceof PortTaken)) throw error;
    }
  }
}

class PortTaken extends Error {}

async function startServerOnPort(
  port: number,
  env: Record<string, string>,
  timeoutMs: number,
  nodeArgs: readonly string[],
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeArgs, BIN, 'serve'], {
    env: { ...process.env, DEMO: '0', LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    cwd: ROOT,
  });
  let output = '';
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => ((output += d.toString()), (stdout += d.toString())));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) {
      if (output.includes('EADDRINUSE')) throw new PortTaken(`port ${port} taken: ${output}`);
      throw new Error(`server exited: ${output}`);
    }
    try {
      await fetch(`${baseUrl}/api/reports/catalog`);
      break;
    } catch {
      if (Date.now() - started > timeoutMs) throw new Error(`server did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    baseUrl,
    pid: child.pid ?? 0,
    output: () => output,
    stdout: () => stdout,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

export interface FreshServer {
  /** The environment that points the CLI at the server's database. */
  env: Record<string, string>;
  server: ServerProcess;
  /** Stops the server (returning its exit code) and removes the database. */
  stop(): Promise<number | null>;
}

/**
 * `sales-metrics serve` on a fresh database of the run's engine (embedded or PostgreSQL), holding
 * no data; already migrated when the run has a template (test/helpers/database.ts), which the
 * server's own migrate() then finds complete.
 */
export async function startServerOnFreshDatabase(
  serverEnv: Record<string, string> = {},
): Promise<FreshServer> {
  const { migratedConfig } = await import('./database.js');
  const fresh = await migratedConfig();
  const env: Record<string, string> = fresh.config.databaseUrl
    ? { DATABASE_URL: fresh.config.databaseUrl, SECRET_KEY: fresh.config.secretKey.toString('hex') }
    : { DATA_DIR: fresh.config.dataDir };
  const server = await startServer({ ...env, ...serverEnv });
  return {
    env,
    server,
    async stop() {
      const code = await server.stop();
      await fresh.drop();
      return code;
    },
  };
}
