// Issue 28, "no SQL minute": snapshots prepared before a report asks for them. At start, every
// organization is prepared in the background, most recently used first (its last API key use,
// last import or creation: what its users did last), as long as its orders fit what is left of
// REPORT_MEMORY_MB: a later, less used one never evicts an earlier one, and enters the engine's
// recency order before it (issue 29: the least used leave first). Then, every interval,
// any organization whose data version moved (an import, an upload, a connector's backfill, from
// whichever process) is prepared at once: a delta for a snapshot in memory, a build for one that
// fits. One at a time, behind the engine's one build at a time; builds yield the event loop
// between pieces (build-snapshot.ts). docs/architecture.md, "Cold start".
import type { SnapshotSource } from './build-snapshot.js';
import type { ColumnarReportEngine } from './columnar-engine.js';
import type { SnapshotSize } from './snapshot-size.js';

export interface ColdStartOptions {
  /** REPORT_WARM_INTERVAL_MS: how often data versions are looked at. */
  readonly intervalMs: number;
  /** REPORT_MEMORY_MB in bytes: what the prepared snapshots may take together. */
  readonly memoryBudgetBytes: number;
  /**
   * REPORT_WARM_SCOPE=held (issue 29): only snapshots already held are brought up to date. Behind
   * a balancer that places organizations, an instance otherwise prepared every organization that
   * fit, on every instance: N times the memory and the builds the placement is there to save.
   */
  readonly heldOnly?: boolean;
  readonly onError?: (error: unknown) => void;
}

/** Organizations, most recently used first, with their data version. */
const BY_RECENT_USE = `
  SELECT o.id::text, o.data_version::text,
    greatest(o.created_at,
      (SELECT max(k.last_used_at) FROM api_keys k WHERE k.organization_id = o.id),
      (SELECT max(j.created_at) FROM import_jobs j WHERE j.organization_id = o.id)) AS used_at
  FROM organizations o
  ORDER BY used_at DESC, o.id`;

/** A promise and the function that resolves it (Promise.withResolvers is Node 22's). */
function resolvable(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

export class ColdStart {
  /** Data versions seen at the last look: a change since is a write to prepare for. */
  private seen = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Until the first pass has prepared every organization it takes (or failed, or stopped). */
  private firstPass = false;
  /** Resolved once the first pass has read back the saved files it found (or ended). */
  private readonly filesRead = resolvable();

  constructor(
    private readonly db: SnapshotSource,
    private readonly engine: ColumnarReportEngine,
    private readonly options: ColdStartOptions,
  ) {}

  /** Starts the first pass at once, then one look each interval. */
  start(): void {
    this.firstPass = true;
    void this.pass(true);
  }

  /** Whether the start's preparation is still under way (its saved files read back, its builds). */
  get preparing(): boolean {
    return this.firstPass;
  }

  /**
   * Resolves when the first pass has read back every saved file it prepares, or reached an
   * organization it must build from the database (never waited for: minutes at ten million
   * orders), or after `maxMs`. A server waits for it before it listens, so that its first report
   * finds the snapshot there instead of waiting for the file (issue 28: 5.5× the warm answer).
   */
  async savedFilesRead(maxMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.filesRead.promise,
      new Promise((resolve) => (timer = setTimeout(resolve, maxMs))),
    ]);
    clearTimeout(timer);
  }

  /**
   * Stops looking. The preparation under way is not waited for (a build of millions of orders
   * would hold the server's close): the next start reads its file or builds again.
   */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async pass(first: boolean): Promise<void> {
    try {
      const organizations = await this.db.query<{ id: string; data_version: string }>(BY_RECENT_USE);
      for (const { id, data_version: version } of organizations) {
        if (this.stopped) return;
        const changed = this.seen.get(id) !== version;
        this.seen.set(id, version);
        if (!first && !changed) continue;
        const held = this.engine.heldVersion(id);
        if (held !== undefined) {
          if (held !== version) await this.engine.prepare(id);
          continue;
        }
        if (this.options.heldOnly) continue;
        const room = await this.room(id, first);
        if (!room.fits) continue;
        await this.engine.prepare(id, room.counted);
      }
    } catch (error) {
      if (!this.stopped) this.options.onError?.(error); // a stop closes the database under it
    } finally {
      if (first) {
        this.filesRead.resolve();
        this.firstPass = false;
      }
      if (!this.stopped)
        this.timer = setTimeout(() => void this.pass(false), this.options.intervalMs).unref();
    }
  }

  /**
   * Whether the organization's snapshot, orders, lines and customers, fits the memory left,
   * evicting nobody, and whether it has a saved file: weighed by that file when it has one (read
   * back at once, no count before it), else by its rows counted, a count its build then goes by
   * (issue 29: counted once).
   */
  private async room(
    organizationId: string,
    first: boolean,
  ): Promise<{ fits: boolean; saved: boolean; counted?: SnapshotSize }> {
    const fits = (bytes: number) => this.engine.memoryInUse + bytes <= this.options.memoryBudgetBytes;
    const saved = await this.engine.savedBytes(organizationId);
    if (saved !== undefined) return { fits: fits(saved), saved: true };
    // A build, never waited for before listening, nor its count: on a busy (or locked) orders
    // table that count alone can take the statement's whole budget.
    if (first) this.filesRead.resolve();
    // Nothing held, nothing to evict: it fits if its build does, which checks REPORT_MEMORY_MB
    // itself. Issue 28: on PostgreSQL that build then reads its orders before it counts the rest,
    // instead of after this count (about 0.6 s sooner at a million orders).
    if (this.engine.memoryInUse === 0) return { fits: true, saved: false };
    // The engine's count: a build that a report starts meanwhile waits for this one instead of
    // counting again.
    const counted = await this.engine.countRows(organizationId);
    return { fits: fits(counted.bytes), saved: false, counted };
  }
}
