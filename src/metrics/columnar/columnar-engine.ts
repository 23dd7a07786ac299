// The columnar report engine (issue 9): answers from an in-memory snapshot of the organization's
// orders when it is current, else from the SQL engine (the reference), which also answers what a
// snapshot cannot (an organization over the memory budget, amounts past exact range, zones whose
// days are not contiguous).
//
// Never stale (X1, S4): every request reads the organization's data version (migration 007,
// bumped by triggers in the same transaction as any change to its orders or stores, whichever
// process made it) and uses a snapshot only when it holds that version or a later one. A newer
// version is brought in by a delta (issue 19, migration 012: the orders changed since the
// snapshot's database snapshot, in time proportional to them) that the request waits for; only
// a first build, or a change too large for a delta, is read in the background while SQL answers.
// Report settings are not in the snapshot: they come with each plan, so changing them needs
// nothing here (S1, S2).
import { LRUCache } from 'lru-cache';
import { addDays, dayOf } from '../../query/dates.js';
import {
  DEFAULT_DEDUCTIONS,
  DEFAULT_EXCLUDED_STATUSES,
  LINE_METRIC_IDS,
  ORDER_METRIC_IDS,
} from '../../catalog.js';
import { NO_EXTENSIONS } from '../../query/parse.js';
import { planReport, type ReportPlan } from '../../query/plan.js';
import type { ReportEngine, ReportRowSequence, ReportRows } from '../engine.js';
import { AppError } from '../../errors.js';
import { newProgress, secondsLeft, type BuildProgress } from './build-progress.js';
import { BuildLane, inLargeLane, LARGE_BUILD_ROWS } from './build-lanes.js';
import { buildSnapshot, type SnapshotSource, type Unsupported } from './build-snapshot.js';
import { DEFAULT_CHUNK_ROWS } from './page-statements.js';
import { loadDayBuckets, type DayBuckets } from './day-buckets.js';
import { readDelta, REBUILD } from './delta.js';
import { executeCompared } from './compared.js';
import { EXECUTION_PATHS, executePlan, executePlanOnDemand, type ExecutionPaths } from './execute.js';
import type { LiveSnapshot } from './live-snapshot.js';
import { AmountOutOfRange, OverBudget } from './order-columns.js';
import { identityOf, loadSnapshot, removeLeftoverSaves, savedFileBytes, saveSnapshot } from './persist.js';
import { BYTES_PER_ORDER, heldOrders, type Snapshot } from './snapshot.js';
import {
  expectedSnapshotSize,
  rowsBeforeOrders,
  type RowsBeforeOrders,
  type SnapshotSize,
} from './snapshot-size.js';
import { reportAnswers } from '../../observability/metrics.js';

export type SnapshotEvent =
  | {
      /** built: read from the database; loaded: read from its saved file (then brought up to date). */
      readonly event: 'built' | 'loaded';
      readonly organizationId: string;
      readonly version: string;
      readonly orders: number;
      readonly bytes: number;
      readonly ms: number;
    }
  | {
      /**
       * Issue 28: a build from the database has read the orders and goes on with their lines;
       * meanwhile the orders alone answer the reports that read no line (order grain). `built`
       * follows once the lines are in.
       */
      readonly event: 'ordersBuilt';
      readonly organizationId: string;
      readonly version: string;
      readonly orders: number;
      readonly ms: number;
    }
  | {
      readonly event: 'unsupported';
      readonly organizationId: string;
      readonly version: string;
      readonly reason: string;
    }
  | {
      readonly event: 'updated';
      readonly organizationId: string;
      readonly version: string;
      readonly changed: number;
      /** The snapshot's memory after the delta (a long trickle's stays bounded: compaction). */
      readonly bytes: number;
      /** Of ms: reading the changes from the database (the rest: applying them). */
      readonly readMs: number;
      readonly ms: number;
    }
  | {
      readonly event: 'compacted';
      readonly organizationId: string;
      readonly bytes: number;
      /** Parts left: 1 after a whole compaction, 2 after the small parts were folded together. */
      readonly parts: number;
      readonly ms: number;
    }
  | {
      readonly event: 'saved';
      readonly organizationId: string;
      readonly version: string;
      readonly orders: number;
      readonly ms: number;
    }
  | {
      readonly event: 'evicted';
      readonly organizationId: string;
      readonly bytes: number;
      /** Issue 29, item 3: how long ago a report last used it (the least recently used leaves first). */
      readonly idleMs: number;
    }
  | { readonly event: 'failed'; readonly organizationId: string; readonly error: unknown };

export interface ColumnarOptions {
  /** Memory for all snapshots together (REPORT_MEMORY_MB); least recently used ones leave first. */
  readonly memoryBudgetBytes: number;
  /** How long a request waits for a snapshot being built before SQL answers it. */
  readonly buildWaitMs?: number;
  /** How long a request waits for a delta before SQL answers it (a delta is small: its wait is long). */
  readonly deltaWaitMs?: number;
  /** A delta of more orders than this (or this share of the snapshot's, if more) rebuilds instead. */
  readonly maxDeltaOrders?: number;
  /** Where snapshots are saved and read back after a restart (REPORT_SNAPSHOT_DIR); none: not saved. */
  readonly snapshotDir?: string;
  /** Compaction waits for at least this many retired or added orders (or a tenth of the snapshot). */
  readonly compactionMinOrders?: number;
  /**
   * A snapshot is saved again this often at most (default 10 minutes), by the first compaction
   * after that time, made whole for it.
   */
  readonly saveEveryMs?: number;
  readonly chunkRows?: number;
  /**
   * Issue 28 (REPORT_BUILDING_SQL_MS): while the organization's snapshot builds, a report not
   * answered within this many ms is refused (503 SNAPSHOT_BUILDING, Retry-After: the build's
   * expected end) instead of waiting for SQL; 0 or none: SQL is waited for.
   */
  readonly buildingSqlBudgetMs?: number;
  /**
   * Issue 29 (REPORT_LARGE_BUILD_ROWS): a build from the database of an organization with more
   * rows than this (orders and lines) goes on in a lane of its own (default LARGE_BUILD_ROWS).
   */
  readonly largeBuildRows?: number;
  /** warmUp() scans a snapshot of up to this many orders, and only sums a larger one's (default WARM_UP_MAX_ORDERS). */
  readonly warmUpMaxOrders?: number;
  /**
   * The builds read the lines ahead as the orders (BuildOptions.linesAhead): for an engine that
   * answers no report while it builds (a command that prepares the reports, issue 28 item 1).
   */
  readonly linesAhead?: boolean;
  /** The differential test's way to run every execution path on small data. */
  readonly executionPaths?: ExecutionPaths;
  readonly onEvent?: (event: SnapshotEvent) => void;
}

interface Entry {
  /** The data version the current build, snapshot or refusal is for. */
  version: string;
  building?: Promise<void>;
  /** How far the build has read (issue 28: Retry-After). */
  progress?: BuildProgress;
  /**
   * Issue 28: while the build reads the lines, its orders alone (every order with no line), at the
   * build's version: what a report that reads no line is answered from meanwhile.
   */
  ordersOnly?: Snapshot;
  /** Resolves once ordersOnly is there, or the build ended. */
  ordersReady?: Promise<void>;
  ordersReadyNow?: () => void;
  /** When its build started, performance.now() (the ordersBuilt event's ms, as built's). */
  buildStarted?: number;
  /** While the build reads the organization's saved file: resolves to whether it was read back. */
  loading?: Promise<boolean>;
  live?: LiveSnapshot;
  /** live's view at its version: what requests read. */
  snapshot?: Snapshot;
  /** Memory counted for this entry in usedBytes. */
  bytes: number;
  unsupported?: Unsupported;
  /** Deltas and compactions of this organization, one after the other. */
  queue: Promise<unknown>;
  /** The delta being read or applied, that requests for a newer version wait for. */
  updating?: Promise<void>;
  /** The one SQL answer running for this organization while its snapshot builds. */
  fallback?: Promise<void>;
  /** Whether its build reads the database in the large lane; undefined: not known yet. */
  large?: boolean;
  /** Resolves once `large` is known, or the build ended (build()), by calling `sizedNow`. */
  sized?: Promise<void>;
  sizedNow?: () => void;
  /** When its snapshot was last saved (or read from its file), Date.now(); 0: never. */
  savedAt: number;
  /** The data version of its snapshot last saved or read from its file. */
  savedVersion?: string;
  /**
   * A rebuild's: the version of the snapshot it replaces. A saved file at this version or an older
   * one is not read back: bringing it up to date is what the rebuild was for (a delta too large,
   * or refused), and reading it back again would start the same rebuild, over and over.
   */
  notAfter?: string;
  /** When a report last used its snapshot (or it was admitted), performance.now(). */
  usedAt?: number;
  /** The organization's rows as last counted for its build, and when (issue 29: counted once). */
  counted?: { readonly size: SnapshotSize; readonly at: number };
  /**
   * Issue 28, PostgreSQL: its orders counted and its lines looked for before its build, and when;
   * its build reads the orders before it counts the rest (countRows).
   */
  counting?: { readonly before: RowsBeforeOrders; readonly at: number };
}

/**
 * Issue 19: a saved snapshot is written whole (tens of megabytes, hashed, synced); written after
 * each compaction, at 20 orders a second, it took more of the machine than the deltas. A restart
 * reads a file up to this old and brings it up to date by one delta (12,000 orders at 20 a second).
 */
const SAVE_EVERY_MS = 10 * 60 * 1000;

/**
 * How long a request waits for a saved snapshot being read back (issue 19): 2 s at ten million
 * orders, where the SQL answer it would otherwise start takes the 30 s statement timeout.
 */
const LOAD_WAIT_MS = 15_000;

/**
 * Issue 28: the first key of the advisory lock an instance holds while it builds and saves an
 * organization's snapshot (the second is the organization's id), and how often the others look
 * for the file it saves.
 */
export const BUILD_LOCK = 28_028;

/** The largest snapshot warmUp() scans before the server listens (a few hundred ms at most). */
export const WARM_UP_MAX_ORDERS = 2_000_000;
const SAVED_FILE_POLL_MS = 250;

/**
 * Issue 28: reports of one organization waiting for its build outside the report slots
 * (beforeSlot), at most; the next is refused SNAPSHOT_BUILDING at once. Each holds a connection
 * and a timer for at most REPORT_BUILDING_SQL_MS.
 */
export const MAX_BUILD_WAITERS = 64;

/** A snapshot read longer ago than this is rebuilt: retirement rows are kept two days (migration 012). */
const MAX_DELTA_AGE_MS = 24 * 3600 * 1000;

/**
 * Issue 29: a count of the organization's rows this recent is the one its build goes by, not
 * taken again (a second on a million orders, embedded); an older one (a build that waited in the
 * large lane) is taken again.
 */
const COUNT_KEPT_MS = 60_000;

/**
 * Issue 28: a report refused while its organization's snapshot builds, told when to come back;
 * `ordersOnly`: it reads no line, and is answered once the build's orders are read.
 */
function buildingError(progress: BuildProgress | undefined, ordersOnly = false): AppError {
  const left = secondsLeft(progress, performance.now(), ordersOnly);
  return new AppError(
    'SNAPSHOT_BUILDING',
    `Calcul en cours : les données de l’organisation sont en préparation, réessayez dans ${left} s.`,
    {},
    { retryAfterS: left },
  );
}

/** A snapshot read: from its saved file (loaded), or from the database and already saved by it. */
interface Built {
  readonly result: LiveSnapshot | Unsupported | undefined;
  readonly loaded: boolean;
  readonly saved?: boolean;
}

/** Build lanes (build-lanes.ts). */
type LaneName = 'small' | 'large';

/** A build from the database that another instance holds (its advisory lock), its file not saved yet. */
const ELSEWHERE = Symbol('built elsewhere');

const newer = (a: string, b: string): boolean => BigInt(a) > BigInt(b);

/** A count (or look) taken for a build at most COUNT_KEPT_MS ago, the one it goes by; else undefined. */
const recent = <T extends { readonly at: number }>(taken: T | undefined): T | undefined =>
  taken && performance.now() - taken.at <= COUNT_KEPT_MS ? taken : undefined;

/**
 * What a report waits for besides the build (issue 28): for one that reads no line, the build's
 * orders, unless they are read already (older than the organization's data version, then).
 */
const ordersFor = (entry: Entry, plan: ReportPlan): Promise<void> | undefined =>
  plan.readsLines || entry.ordersOnly ? undefined : entry.ordersReady;

/** Resolves when `signal` aborts (never without one). */
const aborted = (signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));

/** What `promise` resolves to within `ms`, else false. */
async function within(promise: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

export class ColumnarReportEngine implements ReportEngine {
  /** Map order is recency order: the first entry is the least recently used. */
  private readonly entries = new Map<string, Entry>();
  private usedBytes = 0;
  /** One build at a time in each lane: they share the machine with the requests (build-lanes.ts). */
  private readonly lanes: Record<LaneName, BuildLane> = { small: new BuildLane(), large: new BuildLane() };
  private readonly paths: ExecutionPaths;
  private readonly dayBuckets = new LRUCache<string, Promise<DayBuckets | undefined>>({ max: 64 });

  /** Counts of organizations' rows under way (countRows). */
  private readonly counts = new Map<string, Promise<SnapshotSize>>();
  /** Reports waiting for their organization's build before taking a slot (beforeSlot), by organization. */
  private readonly buildWaiters = new Map<string, number>();
  /** Saves being written; a stop drops them (issue 26, item 8). */
  private readonly saving = new Set<Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly db: SnapshotSource,
    private readonly fallback: ReportEngine,
    private readonly options: ColumnarOptions,
  ) {
    this.paths = options.executionPaths ?? EXECUTION_PATHS;
    // Half-written files of processes killed during a save (issue 26, item 8).
    if (options.snapshotDir !== undefined) removeLeftoverSaves(options.snapshotDir);
  }

  /**
   * A stop: saves being written are dropped, their temporary files removed, before it resolves;
   * none starts after. The file a restart reads is the last one renamed into place.
   */
  async close(): Promise<void> {
    this.stopping.abort();
    await Promise.all(this.saving);
  }

  /**
   * Issue 28: while the organization's snapshot builds, the answer within buildingSqlBudgetMs or a
   * 503 SNAPSHOT_BUILDING at once (its SQL cancelled), never the statement timeout's 30 s.
   */
  run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows> {
    return this.withinBudget(plan, signal, (within) => this.answer(plan, within, false));
  }

  /** run()'s answer, a snapshot's rows built only as they are read (issue 29, item 2). */
  runInPieces(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRowSequence> {
    return this.withinBudget(plan, signal, (within) => this.answer(plan, within, true));
  }

  private async withinBudget<T>(
    plan: ReportPlan,
    signal: AbortSignal | undefined,
    answer: (signal?: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const budgetMs = this.options.buildingSqlBudgetMs ?? 0;
    if (budgetMs <= 0) return answer(signal);
    const limit = new AbortController();
    const stop = () => limit.abort(signal?.reason);
    signal?.addEventListener('abort', stop, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const refused = new Promise<never>((_, reject) => {
      // Checked each budget: a build started during the request (by it) counts too.
      const check = () => {
        const entry = this.entries.get(plan.organizationId);
        if (!entry?.building || entry.loading) return void (timer = setTimeout(check, budgetMs));
        const error = buildingError(entry.progress, !plan.readsLines);
        limit.abort(error);
        reject(error);
      };
      timer = setTimeout(check, budgetMs);
    });
    try {
      return await Promise.race([answer(limit.signal), refused]);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      refused.catch(() => undefined);
    }
  }

  private answer(plan: ReportPlan, signal: AbortSignal | undefined, onDemand: false): Promise<ReportRows>;
  private answer(
    plan: ReportPlan,
    signal: AbortSignal | undefined,
    onDemand: true,
  ): Promise<ReportRowSequence>;
  private async answer(
    plan: ReportPlan,
    signal: AbortSignal | undefined,
    onDemand: boolean,
  ): Promise<ReportRows | ReportRowSequence> {
    for (;;) {
      signal?.throwIfAborted();
      const held = this.entries.get(plan.organizationId)?.snapshot;
      const snapshot = await this.snapshotAt(
        plan.organizationId,
        this.options.buildWaitMs ?? 250,
        true,
        undefined,
        !plan.readsLines,
        plan.dataVersion,
      );
      signal?.throwIfAborted();
      if (snapshot) {
        this.used(plan.organizationId);
        const buckets = plan.dimensions.includes('date')
          ? await this.bucketsFor(plan, plan.timezone)
          : undefined;
        // PC1: both periods on the one snapshot this request caught up.
        const rows = plan.comparison
          ? await executeCompared(
              snapshot,
              { ...plan, comparison: plan.comparison },
              { main: buckets, previous: buckets && (await this.bucketsFor(plan.comparison, plan.timezone)) },
              this.paths,
            )
          : await (onDemand ? executePlanOnDemand : executePlan)(snapshot, plan, buckets, this.paths);
        const kept = snapshot === held || snapshot === this.entries.get(plan.organizationId)?.ordersOnly;
        if (rows) reportAnswers.inc({ engine: kept ? 'snapshot' : 'delta' }); // issue 29
        if (rows) return rows;
        return this.fallback.run(plan, signal);
      }
      // Issue 19: while the organization's snapshot builds, one SQL answer at a time for it, so
      // that SQL fallbacks never starve the build that would end them; the others wait for the
      // build, or for that answer, then ask again.
      const entry = this.entries.get(plan.organizationId);
      if (!entry?.building) return this.fallback.run(plan, signal);
      // Issue 28: a report that reads no line is answered by the build's orders once they are read
      // (read already, they did not do: they are older than the organization's data version).
      const orders = ordersFor(entry, plan);
      if (this.waitsForBuild(entry, orders)) {
        // run() refuses it when its budget is spent; a read-back keeps SQL (its check waits for it).
        await this.waitForBuild(entry, plan, this.options.buildingSqlBudgetMs ?? 0, signal);
        continue;
      }
      if (entry.fallback) {
        await Promise.race([entry.building, entry.fallback, ...(orders ? [orders] : [])]);
        continue;
      }
      // Issue 28: an order-grain report's SQL is given up (its statement cancelled) once the
      // build's orders are read: the snapshot answers it at once, and the SQL answers queued
      // behind it no longer hold the connections every request needs.
      const given = new AbortController();
      const answer = this.fallback.run(plan, signal ? AbortSignal.any([signal, given.signal]) : given.signal);
      const running = answer.then(
        () => undefined,
        () => undefined,
      );
      entry.fallback = running;
      try {
        if (!orders || (await Promise.race([running.then(() => true), orders.then(() => false)])))
          return await answer;
        if (!entry.ordersOnly) return await answer; // the build ended (or failed) instead
        given.abort(new Error('answered from the orders read'));
        continue;
      } finally {
        if (entry.fallback === running) entry.fallback = undefined;
      }
    }
  }

  /**
   * Issue 28, item 2: the embedded database runs one statement at a time for everyone and cannot
   * cancel one under way, so a report's SQL over a large organization holds the session for its
   * whole length, its budget spent or not: at 300,000 orders with lines under reports every 250 ms,
   * each SQL answer took 15 to 27 s and the build read three of its statements in four minutes.
   * There a report on an organization whose build takes the large lane waits for the build and is
   * refused with its Retry-After when the budget is spent (run()); a small organization's report
   * still runs SQL, short beside its build. A PostgreSQL server runs both at once and cancels the
   * SQL, but for the reports that the build's orders answer (below); REPORT_BUILDING_SQL_MS=0 keeps
   * SQL everywhere.
   */
  private waitsForBuild(entry: Entry, orders: Promise<void> | undefined): boolean {
    if ((this.options.buildingSqlBudgetMs ?? 0) <= 0 || entry.loading) return false;
    if (this.db.engine === 'embedded') return entry.large !== false;
    // PostgreSQL (issue 28): a report that reads no line, on a build of the large lane whose orders
    // are still being read, waits for them (seconds: 1,000,000 orders in about 4 s) instead of
    // starting SQL. Profiled at a million orders, SQL beside the build answered nothing within its
    // budget and took a core from the build: its orders came 10.0–10.8 s after `serve`, 7.0–7.2 s
    // without that SQL (docs/benchmarks.md). While its lane is not known yet but its count is under
    // way (its turn in the small lane come: a fraction of a second), it waits for the count too:
    // SQL started then ran beside the whole build, the reports behind it holding their slots.
    const counting = entry.large === undefined && entry.progress !== undefined;
    return orders !== undefined && (entry.large === true || counting);
  }

  /**
   * Issue 28, item 3: a report that answer() would make wait for its organization's build
   * (waitsForBuild) waits here, before it takes a report slot (LimitedReportEngine): waiting in a
   * slot, the reports asked every 250 ms while a million orders were read filled their
   * organization's slots and queue, and the next ones were refused SERVICE_BUSY with a Retry-After
   * of 2 s instead of SNAPSHOT_BUILDING with the build's. Refused the same way as run() refuses it
   * once REPORT_BUILDING_SQL_MS is spent; resolves as soon as the build, or for a report that reads
   * no line the build's orders, can answer it (or once it would not wait: answer() decides then);
   * true when it waited.
   */
  async beforeSlot(plan: ReportPlan, signal?: AbortSignal): Promise<boolean> {
    const budgetMs = this.options.buildingSqlBudgetMs ?? 0;
    if (budgetMs <= 0) return false;
    const deadline = performance.now() + budgetMs;
    const waits = (entry: Entry | undefined): entry is Entry =>
      entry?.building !== undefined &&
      !entry.live &&
      (plan.readsLines || !entry.ordersOnly) &&
      this.waitsForBuild(entry, ordersFor(entry, plan));
    const first = this.entries.get(plan.organizationId);
    if (!waits(first)) return false;
    // Bounded like the slots' queue: past it, refused at once (the build's Retry-After all the same).
    const waiting = this.buildWaiters.get(plan.organizationId) ?? 0;
    if (waiting >= MAX_BUILD_WAITERS) throw buildingError(first.progress, !plan.readsLines);
    this.buildWaiters.set(plan.organizationId, waiting + 1);
    try {
      for (
        let entry: Entry | undefined = first;
        waits(entry);
        entry = this.entries.get(plan.organizationId)
      ) {
        signal?.throwIfAborted();
        const left = deadline - performance.now();
        if (left <= 0) throw buildingError(entry.progress, !plan.readsLines);
        await this.waitForBuild(entry, plan, left, signal);
      }
      signal?.throwIfAborted();
      return true;
    } finally {
      const left = (this.buildWaiters.get(plan.organizationId) ?? 1) - 1;
      if (left > 0) this.buildWaiters.set(plan.organizationId, left);
      else this.buildWaiters.delete(plan.organizationId);
    }
  }

  /**
   * One wait of a report for its organization's build (answer(), beforeSlot()), at most `ms`: until
   * the lane is known while the build counts (embedded: waitsForBuild counts an unknown lane as
   * large), else until the build ends; for a report that reads no line, or until its orders are read.
   */
  private async waitForBuild(
    entry: Entry,
    plan: ReportPlan,
    ms: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const orders = ordersFor(entry, plan);
    const until = entry.large === undefined ? (entry.sized ?? entry.building) : entry.building;
    let timer: NodeJS.Timeout | undefined;
    const spent = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
    try {
      await Promise.race([until, spent, aborted(signal), ...(orders ? [orders] : [])]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Issue 29, item 3: a report uses the organization's snapshot: most recently used, to the end
   * of the map (evictions take the first). Bringing a snapshot up to date in the background
   * (prepare) is no use: an organization nobody asks for still ages and leaves first.
   */
  private used(organizationId: string): void {
    const entry = this.entries.get(organizationId);
    if (!entry) return;
    entry.usedAt = performance.now();
    this.entries.delete(organizationId);
    this.entries.set(organizationId, entry);
  }

  /** Seconds since a report last used the least recently used snapshot held (for /metrics); 0: none held. */
  get oldestIdleSeconds(): number {
    const now = performance.now();
    for (const entry of this.entries.values())
      if (entry.snapshot) return (now - (entry.usedAt ?? now)) / 1000;
    return 0;
  }

  /**
   * Whether a snapshot is being built or read back: the routes' schemas wait to be compiled in the
   * background (src/app.ts), whose few hundred milliseconds held the statements of a starting
   * server's first build (issue 28).
   */
  get buildsUnderWay(): boolean {
    for (const entry of this.entries.values()) if (entry.building) return true;
    return false;
  }

  /** Snapshots held in memory (for /metrics). */
  get snapshotsHeld(): number {
    let held = 0;
    for (const entry of this.entries.values()) if (entry.snapshot) held++;
    return held;
  }

  /**
   * Issue 28: brings the organization's snapshot to its current data version in the background
   * (a build, its saved file read back, or a delta), resolving when that is done.
   */
  async prepare(
    organizationId: string,
    counted?: SnapshotSize,
    options: { save?: boolean } = {},
  ): Promise<void> {
    // A snapshot read back holds its file's version: the next round brings it to the database's
    // (a delta, or a rebuild when too much changed, which the round after waits for).
    for (let round = 0; round < 3; round++) {
      const held = await this.snapshotAt(organizationId, 0, false, round === 0 ? counted : undefined);
      const entry = this.entries.get(organizationId);
      await entry?.building;
      await entry?.updating;
      if (held !== undefined || entry?.unsupported) break;
    }
    if (options.save) await this.saveHeld(organizationId);
  }

  /**
   * Issue 27: takes a snapshot built by whoever wrote the organization's rows (a command's first
   * import, import-snapshot.ts) as a build's, and saves it. An organization already held or being
   * built is left as it is. `identity`: the database's and organization's (identityOf), when the
   * caller asked for it already.
   */
  async adopt(organizationId: string, live: LiveSnapshot, identity?: string): Promise<void> {
    if (this.entries.has(organizationId)) return;
    live.identity = identity ?? (await identityOf(this.db, organizationId));
    if (this.entries.has(organizationId)) return;
    const entry: Entry = { version: live.version, bytes: 0, queue: Promise.resolve(), savedAt: 0 };
    this.entries.set(organizationId, entry);
    this.admit(organizationId, entry, live);
    if (entry.unsupported) return;
    entry.savedAt = Date.now();
    await this.save(organizationId, live);
  }

  /**
   * Saves the organization's snapshot unless its file already holds its version (folded into one
   * part first): a command that wrote a large batch leaves the file current (issue 28, item 1).
   */
  private async saveHeld(organizationId: string): Promise<void> {
    await this.saved();
    const entry = this.entries.get(organizationId);
    if (!entry?.live || !this.options.snapshotDir) return;
    const run = async (): Promise<void> => {
      const live = entry.live;
      if (this.entries.get(organizationId) !== entry || !live || entry.savedVersion === live.version) return;
      if (live.parts.length > 1) {
        await live.compact('all');
        if (this.entries.get(organizationId) !== entry) return;
        this.account(organizationId, entry);
      }
      entry.savedAt = Date.now();
      await this.save(organizationId, live);
    };
    const next = entry.queue.then(run);
    entry.queue = next.catch(() => undefined);
    await next;
  }

  /**
   * Issue 28: the very first report after a restart ran the scan's loops before V8 had optimized
   * them (a profile at 1,000,000 orders: the first pass about twice a warm one). Before the server
   * listens, the most recently used snapshot held answers, for no one, the questions a first
   * report asks (every order metric over its last two years, in total and by day, and with its
   * lines when it has some), so that the first real report runs optimized code and finds the
   * snapshot's quarter-hour sums built (cell-sums.ts). Its answers are
   * dropped and counted nowhere. No question starts after `maxMs`. A snapshot of more than
   * WARM_UP_MAX_ORDERS gets its quarter-hour sums alone, waited for at most what is left of `maxMs`
   * (their build goes on after it): its first scan's overhead is small beside the scan, but at ten
   * million orders the sums take about a second, which the first reports otherwise spent scanning
   * (issue 28: no 503 in the first minute). The start stays well within Fastify's 10 s for the
   * hook that waits for it. Says what it did: nothing, the sums alone, or the scans.
   */
  async warmUp(maxMs: number): Promise<'nothing' | 'sums' | 'scans'> {
    const held = [...this.entries].reverse().find(([, entry]) => entry.snapshot !== undefined);
    const snapshot = held?.[1].snapshot;
    if (!held || !snapshot || !(maxMs > 0)) return 'nothing';
    const large = heldOrders(snapshot.parts) > (this.options.warmUpMaxOrders ?? WARM_UP_MAX_ORDERS);
    const to = new Date().toISOString().slice(0, 10);
    const from = addDays(to, -729);
    const organization = {
      id: held[0],
      settings: { excludedStatuses: DEFAULT_EXCLUDED_STATUSES, deductions: DEFAULT_DEDUCTIONS },
    };
    const ask = (dimensions: ReportPlan['dimensions'], grain: 'order' | 'line') =>
      planReport(
        {
          dimensions,
          metrics: grain === 'order' ? ORDER_METRIC_IDS : LINE_METRIC_IDS,
          from,
          to,
          timezone: 'UTC',
          limit: 10,
          ...NO_EXTENSIONS,
        },
        organization,
      );
    const started = performance.now();
    const questions = large
      ? [ask([], 'order')]
      : [ask([], 'order'), ask(['date'], 'order'), ask(['product'], 'line')];
    for (const plan of questions) {
      const left = maxMs - (performance.now() - started);
      if (left <= 0) break;
      const buckets = plan.dimensions.includes('date')
        ? await this.bucketsFor(plan, plan.timezone)
        : undefined;
      // The quarter-hour sums the first question starts are waited for here (reports do not wait
      // for them), so that the first real report finds them built, not being built beside it.
      const answered = executePlan(snapshot, plan, buckets, { ...this.paths, waitForCells: true });
      if (!large) await answered;
      else {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          answered.then(
            () => undefined,
            () => undefined, // a failed warm-up only leaves the first report to build them
          ),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, left))),
        ]).finally(() => clearTimeout(timer));
      }
    }
    return large ? 'sums' : 'scans';
  }

  /** The size of the organization's saved snapshot file, if there is one (issue 28: the start weighs it so). */
  async savedBytes(organizationId: string): Promise<number | undefined> {
    const dir = this.options.snapshotDir;
    return dir ? savedFileBytes(this.db, dir, organizationId).catch(() => undefined) : undefined;
  }

  /** Resolves when every save under way has ended, without stopping them (a command's import, issue 28). */
  async saved(): Promise<void> {
    await Promise.all(this.saving);
  }

  /** The orders held by the organization's snapshot in memory (replaced ones included), if it has one. */
  heldOrders(organizationId: string): number | undefined {
    const snapshot = this.entries.get(organizationId)?.snapshot;
    return snapshot && heldOrders(snapshot.parts);
  }

  /** The data version of the organization's snapshot in memory, if it has one (issue 28). */
  heldVersion(organizationId: string): string | undefined {
    return this.entries.get(organizationId)?.snapshot?.version;
  }

  /**
   * Issue 29: a snapshot no report asked for (prepared in the background) enters as the least
   * recently used, before every other. The start's preparation goes most recently used first (it
   * readies them soonest), so each next one is less used than those before it: placed first, the
   * order after it is the order of real use, and memory short after a restart evicts the least
   * used organizations, not the most used ones that were prepared first. O(snapshots held): once
   * per background build.
   */
  private placeUnasked(organizationId: string, entry: Entry): void {
    const others = [...this.entries];
    this.entries.clear();
    this.entries.set(organizationId, entry);
    for (const [id, other] of others) this.entries.set(id, other);
  }

  /** Snapshot memory in use, in bytes (for the benchmark and the logs). */
  get memoryInUse(): number {
    return this.usedBytes;
  }

  /** The snapshot at the organization's current data version, waiting for a build only briefly. */
  currentSnapshot(
    organizationId: string,
    waitMs = this.options.buildWaitMs ?? 250,
  ): Promise<Snapshot | undefined> {
    return this.snapshotAt(organizationId, waitMs, true);
  }

  /**
   * currentSnapshot; `asked`: false for a background preparation, whose new snapshot enters the
   * recency order as the least recently used (placeUnasked); `counted`: its rows, just counted;
   * `ordersWill`: the report reads no line, so the orders of a build still reading its lines will
   * do (issue 28), when they hold the current data version; `known`: that version, read after the
   * request arrived (ReportPlan.dataVersion), else read here.
   */
  private async snapshotAt(
    organizationId: string,
    waitMs: number,
    asked: boolean,
    counted?: SnapshotSize,
    ordersWill = false,
    known?: string,
  ): Promise<Snapshot | undefined> {
    const version = known ?? (await this.dataVersion(organizationId));
    if (version === undefined) {
      this.drop(organizationId);
      return undefined;
    }
    let entry = this.entries.get(organizationId);
    if (entry?.live) return this.upToDate(organizationId, entry, version);
    if (entry?.unsupported && !newer(version, entry.unsupported.version)) return undefined;
    if (!entry || (!entry.building && !entry.live)) {
      this.drop(organizationId); // a refusal at an older version: try again
      entry = { version, bytes: 0, queue: Promise.resolve(), savedAt: 0 };
      if (counted) entry.counted = { size: counted, at: performance.now() };
      if (asked) this.entries.set(organizationId, entry);
      else this.placeUnasked(organizationId, entry);
      entry.building = this.build(organizationId, entry);
    }
    const ordersOnly = (): Snapshot | undefined =>
      ordersWill && entry?.building && entry.ordersOnly && !newer(version, entry.ordersOnly.version)
        ? entry.ordersOnly
        : undefined;
    if (ordersOnly()) return ordersOnly();
    if (entry.building && waitMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([entry.building, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    if (entry.building && entry.loading && waitMs > 0 && (await within(entry.loading, LOAD_WAIT_MS)))
      await entry.building; // read back: admitted at once
    // Built meanwhile, at this version or an older one (then a delta brings it up to date).
    return entry.live && !entry.building ? this.upToDate(organizationId, entry, version) : ordersOnly();
  }

  /** The organization's data version, undefined when it no longer exists. */
  private async dataVersion(organizationId: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ data_version: string }>(
      'SELECT data_version FROM organizations WHERE id = $1',
      [organizationId],
    );
    return row && String(row.data_version);
  }

  /**
   * The entry's snapshot once it holds `version` (a later one will do: X1 asks for every change
   * committed before the request, not for none after), waiting for the deltas that bring it there.
   */
  private async upToDate(
    organizationId: string,
    entry: Entry,
    version: string,
  ): Promise<Snapshot | undefined> {
    const deadline = performance.now() + (this.options.deltaWaitMs ?? 10_000);
    // A delta already under way may have read its moment before this request's version: then one more.
    for (let attempt = 0; attempt < 3; attempt++) {
      const snapshot = entry.snapshot;
      if (snapshot && !newer(version, snapshot.version)) return snapshot;
      if (this.entries.get(organizationId) !== entry || !entry.live) break;
      entry.updating ??= this.update(organizationId, entry);
      let timer: NodeJS.Timeout | undefined;
      const left = Math.max(0, deadline - performance.now());
      const done = await Promise.race([
        entry.updating.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), left))),
      ]);
      clearTimeout(timer);
      if (!done) break;
    }
    const snapshot = this.entries.get(organizationId) === entry ? entry.snapshot : undefined;
    return snapshot && !newer(version, snapshot.version) ? snapshot : undefined;
  }

  /** Reads and applies the changes since the entry's snapshot; a rebuild when they are too many. */
  private update(organizationId: string, entry: Entry): Promise<void> {
    const run = async (): Promise<void> => {
      const live = entry.live;
      if (this.entries.get(organizationId) !== entry || !live) return;
      const started = performance.now();
      const held = live.heldOrders;
      const maxOrders = Math.max(this.options.maxDeltaOrders ?? 20_000, Math.floor(held / 10));
      try {
        const delta =
          Date.now() - live.readAt > MAX_DELTA_AGE_MS
            ? REBUILD
            : await readDelta(this.db, organizationId, live.databaseSnapshot, maxOrders);
        const readMs = Math.round(performance.now() - started);
        if (this.entries.get(organizationId) !== entry) return;
        if (delta === undefined) return this.drop(organizationId);
        const budget = Math.floor(this.options.memoryBudgetBytes / BYTES_PER_ORDER);
        if (delta === REBUILD || !(await live.apply(delta, budget))) return this.rebuild(organizationId);
        this.account(organizationId, entry);
        this.options.onEvent?.({
          event: 'updated',
          organizationId,
          version: live.version,
          changed: delta.orders.length,
          bytes: entry.bytes,
          readMs,
          ms: Math.round(performance.now() - started),
        });
        if (live.needsCompaction(this.options.compactionMinOrders)) void this.compact(organizationId, entry);
      } catch (error) {
        if (error instanceof AmountOutOfRange || error instanceof OverBudget)
          return this.rebuild(organizationId);
        this.drop(organizationId);
        this.failed(organizationId, error);
      }
    };
    const next = entry.queue.then(run).finally(() => {
      if (entry.updating === next) entry.updating = undefined;
    });
    entry.queue = next;
    return next;
  }

  /** Folds the entry's parts in the background, between its deltas (requests read the previous view meanwhile). */
  private compact(organizationId: string, entry: Entry): Promise<void> {
    const run = async (): Promise<void> => {
      const live = entry.live;
      if (this.entries.get(organizationId) !== entry || !live) return;
      const needed = live.compactionNeeded(this.options.compactionMinOrders);
      if (!needed) return;
      // A save due: the whole snapshot folded (only one part is saved), so that the file a
      // restart reads stays at most about SAVE_EVERY_MS behind and its catch-up a small delta.
      const saveDue =
        this.options.snapshotDir !== undefined &&
        Date.now() - entry.savedAt >= (this.options.saveEveryMs ?? SAVE_EVERY_MS);
      const scope = saveDue ? 'all' : needed;
      const started = performance.now();
      await live.compact(scope);
      if (this.entries.get(organizationId) !== entry) return;
      this.account(organizationId, entry);
      this.options.onEvent?.({
        event: 'compacted',
        organizationId,
        bytes: entry.bytes,
        parts: live.parts.length,
        ms: Math.round(performance.now() - started),
      });
      if (saveDue && live.parts.length === 1) {
        entry.savedAt = Date.now();
        this.save(organizationId, live);
      }
    };
    const next = entry.queue.then(run).catch((error: unknown) => {
      this.drop(organizationId);
      this.options.onEvent?.({ event: 'failed', organizationId, error });
    });
    entry.queue = next;
    return next;
  }

  /**
   * Drops the organization's snapshot and builds it again in the background (SQL answers
   * meanwhile). Issue 29, item 3: a rebuild is no use, so the organization keeps its place in the
   * recency order and its last use (the new entry replaces the old one where it stands): moved to
   * the most recently used end, a delta too large made an organization nobody asked for outlast
   * the ones in use.
   */
  private rebuild(organizationId: string): void {
    const old = this.entries.get(organizationId);
    if (old) this.usedBytes -= old.bytes;
    const entry: Entry = { version: '0', bytes: 0, queue: Promise.resolve(), savedAt: 0 };
    if (old?.usedAt !== undefined) entry.usedAt = old.usedAt;
    const replaced = old?.live?.version;
    if (replaced !== undefined) entry.notAfter = replaced;
    this.entries.set(organizationId, entry); // Map.set on a key held keeps its place
    entry.building = this.build(organizationId, entry);
  }

  /** The entry's view and memory after a change of its live snapshot; others evicted if over budget. */
  private account(organizationId: string, entry: Entry): void {
    const live = entry.live as LiveSnapshot;
    entry.snapshot = live.view();
    entry.version = live.version;
    const bytes = live.bytes;
    this.usedBytes += bytes - entry.bytes;
    entry.bytes = bytes;
    this.evictFor(organizationId, 0);
    if (this.usedBytes > this.options.memoryBudgetBytes) {
      this.drop(organizationId);
      this.entries.set(organizationId, {
        version: live.version,
        bytes: 0,
        queue: Promise.resolve(),
        savedAt: 0,
        unsupported: { version: live.version, reason: 'over-budget' },
      });
    }
  }

  /**
   * Issue 29, item 2 (build-lanes.ts): every build starts in the small lane, where the saved file
   * is read back first; a build from the database of an organization of more than largeBuildRows
   * rows goes on in the large lane, so that it never holds back the small organizations' builds.
   */
  private async build(organizationId: string, entry: Entry): Promise<void> {
    const started = performance.now();
    entry.sized = new Promise<void>((resolve) => (entry.sizedNow = resolve));
    entry.ordersReady = new Promise<void>((resolve) => (entry.ordersReadyNow = resolve));
    entry.buildStarted = started;
    try {
      const first = await this.lanes.small.run(() => this.readBackOrLane(organizationId, entry));
      if (!first) return; // superseded while queued
      const shared =
        first.built ?? (await this.fromDatabaseIn(first.lane, organizationId, entry, first.identity));
      if (!shared) return;
      const { result } = shared;
      const loaded = shared.loaded ? result : undefined;
      if (result && !('reason' in result)) result.identity = first.identity;
      if (this.entries.get(organizationId) !== entry) return;
      if (result === undefined) {
        this.entries.delete(organizationId);
      } else if ('reason' in result) {
        entry.version = result.version;
        entry.unsupported = result;
        this.options.onEvent?.({ event: 'unsupported', organizationId, ...result });
      } else {
        this.admit(organizationId, entry, result);
        entry.savedAt = Date.now();
        if (loaded || shared.saved) entry.savedVersion = result.version; // saved under the lock: not again
        if (!loaded && !shared.saved) this.save(organizationId, result);
        this.options.onEvent?.({
          event: loaded ? 'loaded' : 'built',
          organizationId,
          version: result.version,
          orders: result.heldOrders,
          bytes: entry.bytes,
          ms: Math.round(performance.now() - started),
        });
      }
    } catch (error) {
      if (this.entries.get(organizationId) === entry) this.entries.delete(organizationId);
      this.failed(organizationId, error);
    } finally {
      entry.sizedNow?.();
      entry.building = undefined;
      entry.progress = undefined;
      entry.ordersOnly = undefined;
      entry.counting = undefined;
      entry.ordersReadyNow?.();
    }
  }

  /**
   * In the small lane: the saved file read back (requests wait for it: entry.loading), else, for
   * a small organization, its build from the database; undefined: not for this entry any more.
   * `built` undefined: the build goes on in `lane` (the large one for a large organization; the
   * small one again, later, for a small one that another instance is building).
   */
  private async readBackOrLane(
    organizationId: string,
    entry: Entry,
  ): Promise<{ identity: string | undefined; built?: Built; lane: LaneName } | undefined> {
    if (this.entries.get(organizationId) !== entry) return undefined;
    const reading = (async () => {
      const identity = this.options.snapshotDir ? await identityOf(this.db, organizationId) : undefined;
      return { identity, loaded: await this.load(organizationId, entry.notAfter) };
    })();
    entry.progress = newProgress(this.db.engine);
    entry.loading = reading.then(
      ({ loaded }) => loaded !== undefined,
      () => false, // the failure is the build's, in build()
    );
    const { identity, loaded } = await reading.finally(() => (entry.loading = undefined));
    if (loaded) return { identity, built: { result: loaded, loaded: true }, lane: 'small' };
    const largeRows = this.options.largeBuildRows ?? LARGE_BUILD_ROWS;
    entry.large = !this.keptCount(entry)
      ? await this.laneBeforeCount(organizationId, entry, largeRows)
      : inLargeLane(await this.countFor(organizationId, entry), largeRows);
    entry.sizedNow?.();
    if (entry.large) return { identity, lane: 'large' };
    const built = await this.fromDatabase(organizationId, entry, identity);
    return built === ELSEWHERE ? { identity, lane: 'small' } : { identity, built, lane: 'small' };
  }

  /**
   * The organization's build from the database in `lane`. Issue 29: while another instance
   * builds it, this one waits outside its lanes and tries again every SAVED_FILE_POLL_MS (the
   * file read back, or the lock taken), so that the wait holds back none of this instance's other
   * builds: waiting in the lane, it held back this instance's builds of every other organization
   * for as long as the other instance's build took (docs/architecture.md, "Cold start").
   */
  private async fromDatabaseIn(
    lane: LaneName,
    organizationId: string,
    entry: Entry,
    identity: string | undefined,
  ): Promise<Built | undefined> {
    // A small organization's first try was in readBackOrLane: it comes back after a pause.
    let pause = lane === 'small';
    for (;;) {
      if (pause) await new Promise((resolve) => setTimeout(resolve, SAVED_FILE_POLL_MS));
      pause = true;
      if (this.entries.get(organizationId) !== entry || this.stopping.signal.aborted) return undefined;
      const built = await this.lanes[lane].run(async () =>
        this.entries.get(organizationId) === entry
          ? this.fromDatabase(organizationId, entry, identity)
          : undefined,
      );
      if (built !== ELSEWHERE) return built;
    }
  }

  /**
   * The organization's snapshot read from the database, by this instance or another (issue 28);
   * ELSEWHERE: another instance is building it, not saved yet.
   */
  private async fromDatabase(
    organizationId: string,
    entry: Entry,
    identity: string | undefined,
  ): Promise<Built | typeof ELSEWHERE> {
    return this.buildsAmongInstances(identity)
      ? this.buildAmongInstances(organizationId, entry, identity as string)
      : { result: await this.read(organizationId, entry), loaded: false };
  }

  /**
   * Issue 28: whether the organization's build takes the large lane, from its orders and its lines
   * counted up to the lane's bound (one short statement; past it, the orders the planner expects);
   * its whole count (countRows) comes once its orders are read (buildSnapshot). Waiting for that count first, a starting
   * server at a million orders read its orders about 0.6 s later on PostgreSQL, and 1.1 s later on
   * the embedded database, whose one session counted the lines in some sixty statements over their
   * pages before the first order was read (docs/benchmarks.md). Small if it could not be counted.
   */
  private async laneBeforeCount(organizationId: string, entry: Entry, largeRows: number): Promise<boolean> {
    // Up to the larger of the two bounds: past the one of a page statement, the orders are read by pages.
    const limit = Math.max(largeRows, this.options.chunkRows ?? DEFAULT_CHUNK_ROWS) + 1;
    const before = await rowsBeforeOrders(this.db, organizationId, limit).catch(() => undefined);
    if (!before) return false;
    entry.counting = { before, at: performance.now() };
    return before.orders + before.linesUpTo > largeRows;
  }

  /**
   * The organization's rows for its lane and its build: the count taken for it lately (by the
   * start's memory check, or here), else counted now; undefined if they cannot be counted.
   */
  private async countFor(organizationId: string, entry: Entry): Promise<SnapshotSize | undefined> {
    const kept = this.keptCount(entry);
    if (kept) return kept;
    return this.countRows(organizationId).catch(() => undefined); // kept in entry.counted by countRows
  }

  /**
   * The organization's rows counted now, or the count already under way for it (issue 28): the
   * start's memory check (ColdStart) and the build a report started meanwhile share one count.
   * Counting each for itself, they ran two counts of a million orders' lines (1.3–2.5 s each) one
   * after the other on the embedded database's one session before the build could start.
   */
  countRows(organizationId: string): Promise<SnapshotSize> {
    const running = this.counts.get(organizationId);
    if (running) return running;
    const count = expectedSnapshotSize(this.db, organizationId)
      .then((size) => {
        // Kept for the organization's build under way, if any (it reads its orders before counting).
        const entry = this.entries.get(organizationId);
        if (entry) entry.counted = { size, at: performance.now() };
        return size;
      })
      .finally(() => {
        if (this.counts.get(organizationId) === count) this.counts.delete(organizationId);
      });
    this.counts.set(organizationId, count);
    return count;
  }

  private keptCount(entry: Entry): SnapshotSize | undefined {
    return recent(entry.counted)?.size;
  }

  /** The organization's snapshot read from the database. */
  private read(organizationId: string, entry: Entry): Promise<LiveSnapshot | Unsupported | undefined> {
    const counted = this.keptCount(entry);
    const counting = counted ? undefined : recent(entry.counting);
    const started = entry.buildStarted ?? performance.now();
    return buildSnapshot(this.db, organizationId, {
      maxBytes: this.options.memoryBudgetBytes,
      ...(this.options.chunkRows ? { chunkRows: this.options.chunkRows } : {}),
      ...(this.options.linesAhead ? { linesAhead: true } : {}),
      ...(counted ? { counted } : {}),
      ...(counting
        ? {
            counting: {
              before: counting.before,
              // A count that ended during the orders' read (the start's) is kept: not taken again.
              whole: () => {
                const kept = this.keptCount(entry);
                return kept ? Promise.resolve(kept) : this.countRows(organizationId);
              },
            },
          }
        : {}),
      progress: (entry.progress = newProgress(this.db.engine)),
      onOrders: (orders) => {
        // Issue 28: order-grain reports answered from the orders while the lines are read.
        if (this.entries.get(organizationId) !== entry || !entry.building) return;
        entry.ordersOnly = orders;
        entry.ordersReadyNow?.();
        this.options.onEvent?.({
          event: 'ordersBuilt',
          organizationId,
          version: orders.version,
          orders: heldOrders(orders.parts),
          ms: Math.round(performance.now() - started),
        });
      },
    });
  }

  /** Issue 28: instances of one PostgreSQL database sharing REPORT_SNAPSHOT_DIR build once. */
  private buildsAmongInstances(identity: string | undefined): boolean {
    return this.db.engine === 'postgres' && this.options.snapshotDir !== undefined && identity !== undefined;
  }

  /**
   * Issue 28, several instances (docs/architecture.md, "Cold start"): the instance that takes the
   * organization's advisory lock builds and saves before letting it go; the others read the saved
   * file as soon as it is there, and build only once the lock is theirs and still no file is (its
   * holder failed, or died: a transaction's lock goes with its session). One try: ELSEWHERE while
   * another instance holds the lock and its file is not there yet (fromDatabaseIn tries again).
   */
  private async buildAmongInstances(
    organizationId: string,
    entry: Entry,
    identity: string,
  ): Promise<Built | typeof ELSEWHERE> {
    const built = await this.db.transaction(async (tx) => {
      const [lock] = await tx.query<{ held: boolean }>('SELECT pg_try_advisory_xact_lock($1, $2) AS held', [
        BUILD_LOCK,
        Number(BigInt(organizationId) % 2_147_483_647n),
      ]);
      if (!lock?.held) return undefined;
      const saved = await this.load(organizationId, entry.notAfter); // by the holder before this one
      if (saved) return { result: saved, loaded: true };
      const result = await this.read(organizationId, entry);
      if (!result || 'reason' in result) return { result, loaded: false };
      result.identity = identity;
      await this.save(organizationId, result); // before the lock goes: the others wait for it
      return { result, loaded: false, saved: true };
    });
    if (built) return built;
    const saved = await this.load(organizationId, entry.notAfter);
    return saved ? { result: saved, loaded: true } : ELSEWHERE;
  }

  /**
   * A build, delta or read-back that failed. One that a stop interrupted (its database closed under
   * it) did not: the next start builds again. Logged, it read as a warning with a stack at every
   * stop during a build ("Cannot use a pool after calling end on the pool").
   */
  private failed(organizationId: string, error: unknown): void {
    if (!this.stopping.signal.aborted) this.options.onEvent?.({ event: 'failed', organizationId, error });
  }

  /** The organization's saved snapshot, if there is one to trust (src/metrics/columnar/persist.ts). */
  private async load(organizationId: string, after?: string): Promise<LiveSnapshot | undefined> {
    const dir = this.options.snapshotDir;
    if (!dir) return undefined;
    try {
      return await loadSnapshot(this.db, dir, organizationId, after);
    } catch (error) {
      this.failed(organizationId, error);
      return undefined;
    }
  }

  /**
   * Saves a snapshot of one part in the background, as it is at this call; a failure costs only
   * the next start's build.
   */
  private save(organizationId: string, live: LiveSnapshot): Promise<void> | undefined {
    const dir = this.options.snapshotDir;
    const identity = live.identity;
    if (!dir || !identity || live.parts.length !== 1 || this.stopping.signal.aborted) return undefined;
    const started = performance.now();
    const [version, orders] = [live.version, live.heldOrders];
    const saved = saveSnapshot(dir, identity, live, this.stopping.signal).then(
      () => {
        const entry = this.entries.get(organizationId);
        if (entry?.live === live) entry.savedVersion = version;
        this.options.onEvent?.({
          event: 'saved',
          organizationId,
          version,
          orders,
          ms: Math.round(performance.now() - started),
        });
      },
      (error: unknown) => {
        this.failed(organizationId, error);
      },
    );
    this.saving.add(saved);
    void saved.finally(() => this.saving.delete(saved));
    return saved;
  }

  /** Evicts the least recently used other snapshots until `more` bytes fit the budget. */
  private evictFor(organizationId: string, more: number): void {
    for (const [id, other] of this.entries) {
      if (this.usedBytes + more <= this.options.memoryBudgetBytes) break;
      if (id === organizationId || !other.snapshot) continue;
      const idleMs = performance.now() - (other.usedAt ?? performance.now());
      this.options.onEvent?.({ event: 'evicted', organizationId: id, bytes: other.bytes, idleMs });
      this.drop(id);
    }
  }

  /** Keeps the snapshot within the budget, evicting the least recently used others first. */
  private admit(organizationId: string, entry: Entry, live: LiveSnapshot): void {
    const bytes = live.bytes;
    this.evictFor(organizationId, bytes);
    if (this.usedBytes + bytes > this.options.memoryBudgetBytes) {
      entry.unsupported = { version: live.version, reason: 'over-budget' };
      return;
    }
    entry.version = live.version; // the build may have read a newer version than it was asked for
    entry.live = live;
    entry.snapshot = live.view();
    entry.bytes = bytes;
    entry.usedAt ??= performance.now();
    this.usedBytes += bytes;
  }

  private drop(organizationId: string): void {
    const entry = this.entries.get(organizationId);
    if (entry) this.usedBytes -= entry.bytes;
    this.entries.delete(organizationId);
  }

  /** Local days of the plan's period in its zone, from the database's zone rules (cached: they do not change). */
  private bucketsFor(
    plan: Pick<ReportPlan, 'periodStart' | 'periodEnd'>,
    timezone: string,
  ): Promise<DayBuckets | undefined> {
    const from = dayOf(plan.periodStart);
    const to = addDays(dayOf(plan.periodEnd), -1); // '10000-01-01' after a `to` of 9999-12-31
    const key = `${timezone}\u0000${from}\u0000${to}`;
    let buckets = this.dayBuckets.get(key);
    if (!buckets) {
      buckets = loadDayBuckets(this.db, timezone, from, to, this.paths.dayUnits);
      buckets.catch(() => this.dayBuckets.delete(key));
      this.dayBuckets.set(key, buckets);
    }
    return buckets;
  }
}
