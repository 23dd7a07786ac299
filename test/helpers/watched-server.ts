// A server process watched from outside as a load balancer would (issue 18): /healthz probed
// every 20 ms while work runs, the server's resident memory and CPU time read from /proc, and a
// self-sign-up account with orders set up over HTTP alone, so that it works on either engine.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Client, PASSWORD } from './web-client.js';

/** The process's resident memory, in MB. */
export const rssMb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/**
 * A thread's time on a CPU, and its time runnable but waiting for one, in ms (Linux's schedstat):
 * of a process's main thread (its event loop; the embedded database runs in a worker) by default.
 */
export function schedMs(pid: number, tid = pid): { run: number; wait: number } {
  const [run, wait] = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
  return { run: (run ?? 0) / 1e6, wait: (wait ?? 0) / 1e6 };
}

export interface HealthWatch<T> {
  readonly result: T;
  /** Each answered probe's latency, in ms. */
  readonly latencies: readonly number[];
  /** Probes that got no answer within 5 s. */
  readonly failed: number;
  /**
   * Probes over the budget once the time the machine kept the server's event loop or this
   * process waiting for a CPU is taken off (a shared host's neighbours are not the server's
   * doing; a loop holding the event loop is: it runs, or waits to run, all along).
   */
  readonly held: readonly string[];
  readonly peakRssMb: number;
}

/** Runs `work` while probing GET /healthz every 20 ms. */
export async function watchingHealth<T>(
  baseUrl: string,
  pid: number,
  work: () => Promise<T>,
  budgetMs = 100,
): Promise<HealthWatch<T>> {
  const latencies: number[] = [];
  const held: string[] = [];
  let failed = 0;
  let peakRssMb = rssMb(pid);
  let running = true;
  const probes = (async () => {
    while (running) {
      const server = schedMs(pid);
      const self = schedMs(process.pid);
      const started = performance.now();
      try {
        await (await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) })).arrayBuffer();
        const ms = performance.now() - started;
        const [serverAfter, selfAfter] = [schedMs(pid), schedMs(process.pid)];
        const waited = serverAfter.wait - server.wait + (selfAfter.wait - self.wait);
        latencies.push(ms);
        if (ms - waited > budgetMs) {
          held.push(
            `${ms.toFixed(0)} ms, ${waited.toFixed(0)} ms of it waiting for a CPU, the server's loop running ${(serverAfter.run - server.run).toFixed(0)} ms`,
          );
        }
        peakRssMb = Math.max(peakRssMb, rssMb(pid));
      } catch {
        failed++;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    return { result: await work(), latencies, failed, held, peakRssMb };
  } finally {
    running = false;
    await probes;
  }
}

export const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/**
 * A self-sign-up account (as anyone may make one), signed in, with `orders` (NDJSON lines)
 * imported through the page.
 */
export async function signUpWithOrders(
  baseUrl: string,
  email: string,
  orders: readonly string[],
): Promise<Client> {
  const client = new Client(baseUrl);
  const signup = await client.post('/signup', {
    _csrf: await client.token('/signup'),
    organization: `Compte ${email}`,
    email,
    password: PASSWORD,
  });
  assert.equal(signup.status, 303);
  assert.equal((await client.login(email)).status, 303);
  const upload = await client.upload(
    '/settings/stores/import',
    { _csrf: await client.token('/settings/stores') },
    { name: 'orders.ndjson', content: new Blob([`${orders.join('\n')}\n`]) },
  );
  const job = upload.headers.get('location') ?? '';
  assert.match(job, /^\/settings\/stores\/imports\//);
  for (let i = 0; (await (await client.get(job)).text()).includes('http-equiv="refresh"'); i++) {
    assert.ok(i < 600, 'the import ends');
    await new Promise((r) => setTimeout(r, 100));
  }
  return client;
}

/** A new API key of the signed-in client's organization, created through the page. */
export async function createKey(client: Client): Promise<string> {
  const page = await (
    await client.post('/settings/api-keys', { _csrf: await client.token('/settings/api-keys'), name: 'k' })
  ).text();
  const key = /id="new-key-value">(smk_[0-9A-Za-z]+)</.exec(page)?.[1];
  assert.ok(key, 'a key on the page');
  return key;
}
