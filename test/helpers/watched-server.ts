// A server process watched from outside as a load balancer would (issue 18): /healthz probed
// every 20 ms while work runs, the server's resident memory and CPU time read from /proc, and a
// self-sign-up account with orders set up over HTTP alone, so that it works on either engine.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Client, PASSWORD } from './web-client.js';

/** The process's resident memory, in MB. */
export const rssMb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** CPU time (user + system) the process has used, in ms (Linux counts it in 10 ms ticks). */
export function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime and stime, fields 14 and 15
}

export interface HealthWatch<T> {
  readonly result: T;
  /** Each answered probe's latency, in ms. */
  readonly latencies: readonly number[];
  /** Probes that got no answer within 5 s. */
  readonly failed: number;
  /**
   * Probes over the budget while the server was running: it spent over the budget in CPU time
   * meanwhile (a loop holding the event loop spends CPU all along). A probe slow while the
   * machine did not run the server at all (a shared host) measures the neighbours, not it.
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
      const cpu = cpuMs(pid);
      const started = performance.now();
      try {
        await (await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) })).arrayBuffer();
        const ms = performance.now() - started;
        const spent = cpuMs(pid) - cpu;
        latencies.push(ms);
        if (ms > budgetMs && spent > budgetMs) held.push(`${ms.toFixed(0)} ms (CPU ${spent} ms)`);
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
