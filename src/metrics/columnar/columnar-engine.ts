// The columnar report engine (issue 9): answers from an in-memory snapshot of the organization's
// orders when it is current, else from the SQL engine (the reference), which also answers what a
// snapshot cannot (an organization over the memory budget, amounts past exact range, zones whose
// days are not contiguous).
//
// Never stale (X1, S4): every request reads the organization's data version (migration 007,
// bumped by triggers in the same transaction as any change to its orders or stores, whichever
// process made it) and uses a snapshot only when it was built at that very version. Otherwise
// the snapshot is dropped and rebuilt in the background while SQL answers. Report settings are
// not in the snapshot: they come with each plan.
import { LRUCache } from 'lru-cache';
import { addDays, dayOf } from '../../query/dates.js';
import type { ReportPlan } from '../../query/plan.js';
import type { ReportEngine, ReportRows } from '../engine.js';
import { buildSnapshot, type SnapshotSource, type Unsupported } from './build-snapshot.js';
import { loadDayBuckets, type DayBuckets } from './day-buckets.js';
import { EXECUTION_PATHS, executePlan, type ExecutionPaths } from './execute.js';
import type { Snapshot } from './snapshot.js';

export type SnapshotEvent =
  | {
      readonly event: 'built';
      readonly organizationId: string;
      readonly version: string;
      readonly orders: number;
      readonly bytes: number;
      readonly ms: number;
    }
  | {
      readonly event: 'unsupported';
      readonly organizationId: string;
      readonly version: string;
      readonly reason: string;
    }
  | { readonly event: 'evicted'; readonly organizationId: string; readonly bytes: number }
  | { readonly event: 'failed'; readonly organizationId: string; readonly error: unknown };

export interface ColumnarOptions {
  /** Memory for all snapshots together (REPORT_MEMORY_MB); least recently used ones leave first. */
  readonly memoryBudgetBytes: number;
  /** How long a request waits for a snapshot being built before SQL answers it. */
  readonly buildWaitMs?: number;
  readonly chunkRows?: number;
  /** The differential test's way to run every execution path on small data. */
  readonly executionPaths?: ExecutionPaths;
  readonly onEvent?: (event: SnapshotEvent) => void;
}

interface Entry {
  /** The data version the current build, snapshot or refusal is for. */
  version: string;
  building?: Promise<void>;
  snapshot?: Snapshot;
  unsupported?: Unsupported;
}

const newer = (a: string, b: string): boolean => BigInt(a) > BigInt(b);

export class ColumnarReportEngine implements ReportEngine {
  /** Map order is recency order: the first entry is the least recently used. */
  private readonly entries = new Map<string, Entry>();
  private usedBytes = 0;
  /** One build at a time: they share the machine with the requests. */
  private buildQueue: Promise<unknown> = Promise.resolve();
  private readonly paths: ExecutionPaths;
  private readonly dayBuckets = new LRUCache<string, Promise<DayBuckets | undefined>>({ max: 64 });

  constructor(
    private readonly db: SnapshotSource,
    private readonly fallback: ReportEngine,
    private readonly options: ColumnarOptions,
  ) {
    this.paths = options.executionPaths ?? EXECUTION_PATHS;
  }

  async run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows> {
    signal?.throwIfAborted();
    const snapshot = await this.currentSnapshot(plan.organizationId);
    signal?.throwIfAborted();
    if (snapshot) {
      const buckets = plan.dimensions.includes('date') ? await this.bucketsFor(plan) : undefined;
      const rows = executePlan(snapshot, plan, buckets, this.paths);
      if (rows) return rows;
    }
    return this.fallback.run(plan, signal);
  }

  /** Snapshot memory in use, in bytes (for the benchmark and the logs). */
  get memoryInUse(): number {
    return this.usedBytes;
  }

  /** The snapshot at the organization's current data version, waiting for a build only briefly. */
  async currentSnapshot(
    organizationId: string,
    waitMs = this.options.buildWaitMs ?? 250,
  ): Promise<Snapshot | undefined> {
    const [row] = await this.db.query<{ data_version: string }>(
      'SELECT data_version FROM organizations WHERE id = $1',
      [organizationId],
    );
    if (!row) {
      this.drop(organizationId);
      return undefined;
    }
    const version = String(row.data_version);
    let entry = this.entries.get(organizationId);
    if (entry && newer(entry.version, version)) return undefined; // this request read before a change
    if (entry?.snapshot?.version === version) {
      this.entries.delete(organizationId); // most recently used: to the end of the map
      this.entries.set(organizationId, entry);
      return entry.snapshot;
    }
    if (entry?.unsupported?.version === version) return undefined;
    if (!entry || entry.version !== version || (!entry.building && !entry.snapshot)) {
      this.drop(organizationId); // stale: never answer from it again
      entry = { version };
      this.entries.set(organizationId, entry);
      entry.building = this.build(organizationId, entry);
    }
    if (entry.building && waitMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([entry.building, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return entry.snapshot?.version === version ? entry.snapshot : undefined;
  }

  private build(organizationId: string, entry: Entry): Promise<void> {
    const run = async (): Promise<void> => {
      if (this.entries.get(organizationId) !== entry) return; // superseded while queued
      const started = performance.now();
      try {
        const result = await buildSnapshot(this.db, organizationId, {
          maxBytes: this.options.memoryBudgetBytes,
          ...(this.options.chunkRows ? { chunkRows: this.options.chunkRows } : {}),
        });
        if (this.entries.get(organizationId) !== entry) return;
        if (result === undefined) {
          this.entries.delete(organizationId);
        } else if ('reason' in result) {
          entry.version = result.version;
          entry.unsupported = result;
          this.options.onEvent?.({ event: 'unsupported', organizationId, ...result });
        } else {
          this.admit(organizationId, entry, result);
          this.options.onEvent?.({
            event: 'built',
            organizationId,
            version: result.version,
            orders: result.orderCount,
            bytes: result.bytes,
            ms: Math.round(performance.now() - started),
          });
        }
      } catch (error) {
        if (this.entries.get(organizationId) === entry) this.entries.delete(organizationId);
        this.options.onEvent?.({ event: 'failed', organizationId, error });
      } finally {
        entry.building = undefined;
      }
    };
    const next = this.buildQueue.then(run);
    this.buildQueue = next;
    return next;
  }

  /** Keeps the snapshot within the budget, evicting the least recently used others first. */
  private admit(organizationId: string, entry: Entry, snapshot: Snapshot): void {
    for (const [id, other] of this.entries) {
      if (this.usedBytes + snapshot.bytes <= this.options.memoryBudgetBytes) break;
      if (id === organizationId || !other.snapshot) continue;
      this.options.onEvent?.({ event: 'evicted', organizationId: id, bytes: other.snapshot.bytes });
      this.drop(id);
    }
    if (this.usedBytes + snapshot.bytes > this.options.memoryBudgetBytes) {
      entry.unsupported = { version: snapshot.version, reason: 'over-budget' };
      return;
    }
    entry.version = snapshot.version; // the build may have read a newer version than it was asked for
    entry.snapshot = snapshot;
    this.usedBytes += snapshot.bytes;
  }

  private drop(organizationId: string): void {
    const entry = this.entries.get(organizationId);
    if (entry?.snapshot) this.usedBytes -= entry.snapshot.bytes;
    this.entries.delete(organizationId);
  }

  /** Local days of the plan's period in its zone, from the database's zone rules (cached: they do not change). */
  private bucketsFor(plan: ReportPlan): Promise<DayBuckets | undefined> {
    const from = dayOf(plan.periodStart);
    const to = addDays(dayOf(plan.periodEnd), -1); // '10000-01-01' after a `to` of 9999-12-31
    const key = `${plan.timezone}\u0000${from}\u0000${to}`;
    let buckets = this.dayBuckets.get(key);
    if (!buckets) {
      buckets = loadDayBuckets(this.db, plan.timezone, from, to, this.paths.dayUnits);
      buckets.catch(() => this.dayBuckets.delete(key));
      this.dayBuckets.set(key, buckets);
    }
    return buckets;
  }
}
