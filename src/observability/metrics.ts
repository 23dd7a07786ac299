// Issue 29, item 4: what the service does, counted where it happens and exported in Prometheus'
// text format by prom-client (STYLE: "Operators can see inside"). One registry for the process:
// the api, metrics, ingest and limits layers count into it; only the metrics listener
// (src/api/metrics-listener.ts) reads it. Prometheus' conventions: `_total` counters, `_seconds`
// histograms, bytes in bytes, and labels of bounded cardinality only — a route pattern, a status,
// an engine, a platform; never an organization, a key, a store or an order id.
import client from 'prom-client';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

const PREFIX = 'sales_metrics_';

export const httpRequestDuration = new client.Histogram({
  name: `${PREFIX}http_request_duration_seconds`,
  help: 'Time from a request received to its response sent, by route pattern, method and status.',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** snapshot: from memory as it was; delta: from memory after catching up; sql: the SQL engine. */
export type AnswerEngine = 'snapshot' | 'delta' | 'sql';

export const reportAnswers = new client.Counter({
  name: `${PREFIX}report_computations_total`,
  help: 'Report computations by the engine that answered: snapshot, delta (caught up first) or sql.',
  labelNames: ['engine'] as const,
  registers: [registry],
});

export const snapshotBuilds = new client.Counter({
  name: `${PREFIX}snapshot_builds_total`,
  help: 'Snapshot builds by outcome: built (from the database), loaded (from its file), unsupported, failed.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const snapshotBuildDuration = new client.Histogram({
  name: `${PREFIX}snapshot_build_duration_seconds`,
  help: 'Time to build a snapshot (from the database) or load it (from its file).',
  labelNames: ['source'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  registers: [registry],
});

export const snapshotDeltas = new client.Counter({
  name: `${PREFIX}snapshot_deltas_total`,
  help: 'Deltas applied to snapshots (changes read since the snapshot instead of a rebuild).',
  registers: [registry],
});

export const snapshotEvictions = new client.Counter({
  name: `${PREFIX}snapshot_evictions_total`,
  help: 'Snapshots evicted to keep REPORT_MEMORY_MB (least recently used first).',
  registers: [registry],
});

export const snapshotEvictedBytes = new client.Counter({
  name: `${PREFIX}snapshot_evicted_bytes_total`,
  help: 'Bytes of the snapshots evicted.',
  registers: [registry],
});

/**
 * Issue 29, item 3: the eviction order, visible without a label per organization (a gauge of
 * each held snapshot's age would grow with a thousand of them): how long the evicted snapshot had
 * gone unused. Least recently used first means these are the longest idle ages held; short ones
 * mean the budget is smaller than the working set.
 */
export const snapshotEvictedIdle = new client.Histogram({
  name: `${PREFIX}snapshot_evicted_idle_seconds`,
  help: 'Seconds since a report last used each snapshot evicted (least recently used first).',
  buckets: [1, 10, 60, 300, 900, 3600, 4 * 3600, 24 * 3600],
  registers: [registry],
});

/** A snapshot used this recently and evicted will most likely be built again soon: thrash. */
export const THRASH_IDLE_S = 60;

export const snapshotThrashEvictions = new client.Counter({
  name: `${PREFIX}snapshot_thrash_evictions_total`,
  help: `Snapshots evicted though a report had used them within the last ${THRASH_IDLE_S} s: REPORT_MEMORY_MB is smaller than the working set.`,
  registers: [registry],
});

/** Counts an eviction: its bytes, its idle age, and whether it is thrash. */
export function countEviction(bytes: number, idleSeconds: number): void {
  snapshotEvictions.inc();
  snapshotEvictedBytes.inc(bytes);
  snapshotEvictedIdle.observe(idleSeconds);
  if (idleSeconds < THRASH_IDLE_S) snapshotThrashEvictions.inc();
}

export type OrderSource = 'import' | 'connector';

export const ordersWritten = new client.Counter({
  name: `${PREFIX}orders_written_total`,
  help: 'Orders written (new or changed) by source: import (files) or connector (stores).',
  labelNames: ['source'] as const,
  registers: [registry],
});

export type Refusal = 'rate_limit' | 'auth_failures' | 'busy';

export const refusals = new client.Counter({
  name: `${PREFIX}refusals_total`,
  help: 'Requests refused: rate_limit (R1, per key), auth_failures (R2, per address), busy (503, slots or answer memory).',
  labelNames: ['reason'] as const,
  registers: [registry],
});

/**
 * Gauges read when scraped, from whatever registered a reading (an engine, the answer budget, the
 * report slots). Several apps in one process (tests) add theirs up; a closed app removes its own.
 */
type Reading = () => number | Promise<number>;
type LabelledReading = () => Promise<ReadonlyMap<string, number>>;

function summedGauge(
  name: string,
  help: string,
  combine: (a: number, b: number) => number = (a, b) => a + b,
): (reading: Reading) => () => void {
  const readings = new Set<Reading>();
  new client.Gauge({
    name: `${PREFIX}${name}`,
    help,
    registers: [registry],
    async collect() {
      let combined = 0;
      for (const read of readings) combined = combine(combined, await read());
      this.set(combined);
    },
  });
  return (reading) => {
    readings.add(reading);
    return () => void readings.delete(reading);
  };
}

export const observeSnapshotsHeld = summedGauge('snapshots', 'Snapshots held in memory.');
export const observeSnapshotBytes = summedGauge(
  'snapshot_bytes',
  'Bytes of the snapshots held in memory (counted against REPORT_MEMORY_MB).',
);
/** Issue 29, item 3: one figure however many snapshots are held (the next to leave, its idle age). */
export const observeOldestSnapshotIdle = summedGauge(
  'snapshot_oldest_idle_seconds',
  'Seconds since a report last used the least recently used snapshot held: the next to be evicted.',
  Math.max,
);
export const observeAnswerBytes = summedGauge(
  'answer_memory_bytes',
  'Bytes of answers held by responses being sent (counted against ANSWER_MEMORY_MB).',
);
export const observeReportsRunning = summedGauge('report_slots_in_use', 'Report computations running.');
export const observeReportsQueued = summedGauge(
  'report_slots_queued',
  'Report computations waiting for a slot.',
);

/** The label's value for each platform, max over the readings (one per app). */
function labelledGauge(name: string, help: string, label: string): (reading: LabelledReading) => () => void {
  const readings = new Set<LabelledReading>();
  new client.Gauge({
    name: `${PREFIX}${name}`,
    help,
    labelNames: [label],
    registers: [registry],
    async collect() {
      this.reset();
      for (const read of readings) {
        const values = await read().catch(() => new Map<string, number>());
        for (const [value, amount] of values) this.set({ [label]: value }, amount);
      }
    },
  });
  return (reading) => {
    readings.add(reading);
    return () => void readings.delete(reading);
  };
}

/**
 * Per platform (woocommerce, shopify: two values), the oldest last successful sync among its
 * connected stores, in seconds: the lag of the worst store. A per-store label would grow with the
 * customers; the stores page and `store list` name the store.
 */
export const observeConnectorLag = labelledGauge(
  'connector_lag_seconds',
  'Seconds since the least recently synced connected store of each platform last synced successfully.',
  'platform',
);

/** The text Prometheus scrapes, and its content type. */
export async function exposition(): Promise<{ body: string; contentType: string }> {
  return { body: await registry.metrics(), contentType: registry.contentType };
}

const REFUSAL_OF_CODE: Readonly<Record<string, Refusal>> = {
  RATE_LIMITED: 'rate_limit',
  AUTH_FAILURES_LIMITED: 'auth_failures',
  SERVICE_BUSY: 'busy',
};

/** Counts an error answer that is a refusal (R1, R2, busy); any other code counts nothing. */
export function countRefusal(code: string): void {
  const reason = REFUSAL_OF_CODE[code];
  if (reason) refusals.inc({ reason });
}
