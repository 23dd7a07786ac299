// Stoplight Prism as a validation proxy in front of one or more upstreams (issue 10, contract
// fuzzing). With --errors, Prism answers 422 itself to a request that breaks the OpenAPI document,
// and turns an upstream answer that breaks it into a 500 application/problem+json carrying an
// `sl-violations` header. One Prism serves several upstreams: it forwards to a small switch that
// picks the upstream named by the request's UPSTREAM_HEADER (Prism forwards request headers).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './processes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PRISM = fs.realpathSync(path.join(ROOT, 'node_modules/.bin/prism'));
/** Prism's output kept for failure messages: the last characters only. */
const OUTPUT_KEPT = 64 * 1024;

/** The request header that names the upstream; without it, the first upstream answers. */
export const UPSTREAM_HEADER = 'x-contract-upstream';

export interface ValidationProxy {
  readonly url: string;
  /** The last lines Prism printed. */
  output(): string;
  stop(): Promise<void>;
}

/** A server forwarding each request, unchanged, to the upstream its UPSTREAM_HEADER names. */
async function startSwitch(upstreams: Readonly<Record<string, string>>): Promise<http.Server> {
  const fallback = Object.values(upstreams)[0];
  const server = http.createServer((request, response) => {
    const name = request.headers[UPSTREAM_HEADER];
    const target = typeof name === 'string' ? upstreams[name] : fallback;
    if (target === undefined) {
      response.writeHead(502, { 'content-type': 'text/plain' }).end(`no upstream named ${String(name)}`);
      return;
    }
    const forwarded = http.request(
      target,
      { method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(response);
      },
    );
    forwarded.on('error', (error) => response.destroy(error));
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

export async function startValidationProxy(
  documentFile: string,
  upstreams: Readonly<Record<string, string>>,
  timeoutMs = 30_000,
): Promise<ValidationProxy> {
  const upstreamSwitch = await startSwitch(upstreams);
  const address = upstreamSwitch.address();
  const switchUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [PRISM, 'proxy', '--errors', documentFile, switchUrl, '--port', String(port), '--host', '127.0.0.1'],
    {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_KEPT));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const stubborn = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(stubborn);
    }
    await new Promise<void>((resolve) => upstreamSwitch.close(() => resolve()));
  };

  const deadline = Date.now() + timeoutMs;
  while (!/Prism is listening/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`Prism did not start (exit ${child.exitCode}):\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `http://127.0.0.1:${port}`, output: () => output, stop };
}
