// Issue 18, finding 2, as a phase of `npm run bench:hostile`: slow readers of a very large answer.
// It imports 100,000 orders with long statuses (one report row each: 5 dimensions, about 47 MB of
// JSON), then opens 10 connections that read at 20 KB/s, first all for the same answer, then each
// for another `limit` (nothing cached), for 20 s each, while the caller probes /healthz. Each
// phase prints what the slow clients got and the server's RSS before, at its peak and after.
import { slowRead, type SlowRead } from '../test/helpers/slow-reader.js';

export interface SlowReadersBench {
  readonly baseUrl: string;
  /** A key of the organization the orders are imported into. */
  readonly key: string;
  /** Imports an NDJSON file into that organization (the browser's upload); a summary. */
  readonly upload: (name: string, content: Blob) => Promise<string>;
  /** Runs one phase while /healthz is probed, and prints its line. */
  readonly phase: (name: string, work: () => Promise<string>) => Promise<void>;
  /** The server's resident memory, in MB. */
  readonly rssMb: () => number;
}

const ROWS = 100_000;
const READERS = 10;
const BYTES_PER_S = 20 * 1024;
const READ_MS = 20_000;
const QUERY =
  'metrics=orders,net_revenue,unique_customers,new_customers&dimensions=date,store,country,customer_type,status&from=2020-01-01&to=2022-12-31';

/**
 * One order per report row: 1,000 days × 100 statuses of 200 characters, a store address of 370
 * characters. Built and encoded a thousand lines at a time, letting this process's event loop run
 * in between. Built in one go (lines, then one 37 MB string, then its Blob), the two files held
 * the loop for 5 to 10 s on the shared machine; meanwhile the client's kept-alive connections
 * passed the server's announced 5 s (`Keep-Alive: timeout=5`, closed at 6 s) without the client's
 * timers seeing it, and its next request went out on a connection the server had closed ("other
 * side closed"). The /healthz probes waited too, counting this process's pause as the server's.
 */
async function longStatusOrders(first: number, count: number): Promise<Blob> {
  const parts: Uint8Array<ArrayBuffer>[] = [];
  const utf8 = new TextEncoder();
  let lines: string[] = [];
  const store = `https://${'boutique-'.repeat(39)}longue.example`;
  for (let i = first; i < first + count; i++) {
    if (lines.length === 1000) {
      parts.push(utf8.encode(`${lines.join('\n')}\n`));
      lines = [];
      await new Promise((r) => setImmediate(r));
    }
    const day = new Date(Date.UTC(2020, 0, 1) + Math.floor(i / 100) * 86_400_000).toISOString().slice(0, 10);
    lines.push(
      JSON.stringify({
        store,
        id: `slow-${i}`,
        created_at: `${day}T12:00:00Z`,
        status: `statut-${String(i % 100).padStart(3, '0')}-${'é'.repeat(10)}${'x'.repeat(179)}`,
        billing_country: 'FR',
        customer_email: `c${i}@example.com`,
        items: 1,
        total: '10.50',
      }),
    );
  }
  parts.push(utf8.encode(`${lines.join('\n')}\n`));
  return new Blob(parts);
}

/** Samples the server's RSS every 200 ms while `work` runs: its largest value. */
async function peakRss<T>(rssMb: () => number, work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = rssMb();
  const timer = setInterval(() => (peak = Math.max(peak, rssMb())), 200);
  try {
    return { result: await work(), peak };
  } finally {
    clearInterval(timer);
  }
}

function summary(reads: readonly SlowRead[], before: number, peak: number): string {
  const count = new Map<number, number>();
  for (const r of reads) count.set(r.status, (count.get(r.status) ?? 0) + 1);
  const statuses = [...count].map(([s, n]) => `${n} × ${s || 'dropped'}`).join(', ');
  const size = Math.max(...reads.map((r) => r.contentLength));
  return `${statuses}, ${(size / 1e6).toFixed(1)} MB answer, RSS ${before} → peak ${peak} MB (+${peak - before})`;
}

/** Slow readers of `limits` (one each); with `first`, the later ones start once the first has its answer. */
async function readers(bench: SlowReadersBench, limits: readonly number[], first: boolean): Promise<string> {
  const before = bench.rssMb();
  const path = (limit: number) => `/api/reports/tabular?${QUERY}&limit=${limit}`;
  const { result, peak } = await peakRss(bench.rssMb, async () => {
    const reads: Promise<SlowRead>[] = [];
    for (const [i, limit] of limits.entries()) {
      const answered = new Promise<void>((ready) =>
        reads.push(
          slowRead(
            bench.baseUrl,
            path(limit),
            { authorization: `Bearer ${bench.key}` },
            { bytesPerS: BYTES_PER_S, ms: READ_MS, onHead: ready },
          ),
        ),
      );
      if (first && i === 0) await answered;
    }
    return Promise.all(reads);
  });
  await new Promise((r) => setTimeout(r, 3000)); // closed connections let go of their answers
  return `${summary(result, before, peak)}, ${bench.rssMb()} MB 3 s after`;
}

/** The phases of finding 2, for bench/hostile.ts. */
export async function slowReadersPhases(bench: SlowReadersBench): Promise<void> {
  // In two files: each under the bench's upload bound (64 MiB).
  await bench.phase('import 100,000 long-status orders', async () => {
    const answers: string[] = [];
    for (const i of [0, 1])
      answers.push(
        await bench.upload(`long-statuses-${i}.ndjson`, await longStatusOrders((i * ROWS) / 2, ROWS / 2)),
      );
    return answers.join('; ');
  });
  await bench.phase(`${READERS} slow readers (20 KB/s), one answer`, () =>
    readers(
      bench,
      Array.from({ length: READERS }, () => ROWS),
      true,
    ),
  );
  await bench.phase(`${READERS} slow readers, ${READERS} limits`, () =>
    readers(
      bench,
      Array.from({ length: READERS }, (_, i) => ROWS - 1 - i),
      false,
    ),
  );
}
