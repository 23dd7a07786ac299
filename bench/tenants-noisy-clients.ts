// The noisy organization's clients of bench/tenants-fairness.ts, in a thread of their own: its
// own event loop and heap, as another organization's clients are elsewhere than the quiet one's
// (in one loop, receiving its 10 MB answers and their garbage collection delayed the quiet
// client's own timings). Runs its clients back to back until told to stop, then posts the
// answers' statuses and how many it asked.
import { parentPort, workerData } from 'node:worker_threads';

interface NoisyClients {
  readonly baseUrl: string;
  readonly key: string;
  readonly queries: readonly string[];
  readonly clients: number;
  /** Requests asked before this phase: every request gets a limit of its own (uncached, C1). */
  readonly askedBefore: number;
}

const { baseUrl, key, queries, clients, askedBefore } = workerData as NoisyClients;
const statuses: Record<string, number> = {};
let asked = askedBefore;
let running = true;
parentPort?.once('message', () => (running = false));

await Promise.all(
  Array.from({ length: clients }, async (_, client) => {
    for (let n = 0; running; n++) {
      // Odd limits here, even ones in the main thread: never the same request twice.
      const limit = 100_000 - 2 * ++asked - 1;
      const query = queries[(client + n) % queries.length] as string;
      const response = await fetch(`${baseUrl}/api/reports/tabular?${query}&limit=${limit}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  }),
);
parentPort?.postMessage({ statuses, asked });
