// The sync worker of one instance (issue 11, item 4): every few seconds it claims due stores
// (connections.ts: FOR UPDATE SKIP LOCKED and a lease), runs a pass on each (sync.ts), at most
// `concurrency` stores at once, and gives each back with the time of its next sync. Every
// instance may run one; a store is synced by one of them at a time.
import crypto from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Database } from '../../db/database.js';
import { databaseMomentarilyOut } from '../../errors.js';
import type { Platform, StoreConnector } from './connector.js';
import { claimDue, release, type StoreConnection } from './connections.js';
import { LeaseLost } from './order-writes.js';
import { runPass, type SyncSettings } from './sync.js';

export interface WorkerEvents {
  passEnded(event: {
    connectionId: string;
    organizationId: string;
    ok: boolean;
    written: number;
    /** How long the pass held the store (with the log line's time: when it held it). */
    ms: number;
    nextInS: number;
    error?: string;
  }): void;
  failed(error: unknown, connectionId: string | undefined): void;
}

/**
 * Waits before each new try to give a store back when our database was busy or away for a moment.
 * Without them a release that met `SERVICE_BUSY` left the store leased until its lease ran out
 * (LEASE_S, a minute), although the database answered again a second later.
 */
export const RELEASE_RETRY_MS: readonly number[] = [250, 1000, 4000];

/**
 * Runs `attempt`, and again after each of `waitsMs` while it fails because our database is busy or
 * away for a moment (databaseMomentarilyOut), unless `stopping()`: any other error, the last one,
 * or one met while stopping is thrown.
 */
export async function retryWhileMomentarilyOut<T>(
  attempt: () => Promise<T>,
  waitsMs: readonly number[],
  stopping: () => boolean,
): Promise<T> {
  for (let tried = 0; ; tried += 1) {
    try {
      return await attempt();
    } catch (error) {
      const wait = waitsMs[tried];
      if (wait === undefined || !databaseMomentarilyOut(error) || stopping()) throw error;
      await delay(wait);
    }
  }
}

export class StoreSyncWorker {
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Set<Promise<void>>();
  private stopping = false;
  private ticking = false;

  constructor(
    private readonly db: Database,
    private readonly connectors: Readonly<Record<Platform, StoreConnector>>,
    private readonly settings: SyncSettings,
    private readonly events: WorkerEvents,
    private readonly options: { concurrency: number; pollMs: number },
  ) {}

  start(): void {
    this.timer = setInterval(() => this.kick(), this.options.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Looks for due stores now (a webhook just queued an order). */
  kick(): void {
    if (this.stopping || this.ticking) return;
    this.ticking = true;
    void this.claim()
      .catch((error: unknown) => this.events.failed(error, undefined))
      .finally(() => (this.ticking = false));
  }

  private async claim(): Promise<void> {
    while (!this.stopping && this.running.size < this.options.concurrency) {
      const owner = crypto.randomUUID(); // one lease token per pass: fencing tells passes apart
      const connection = await claimDue(this.db, owner);
      if (!connection) return;
      const pass: Promise<void> = this.pass(connection, owner).finally(() => {
        this.running.delete(pass);
        this.kick();
      });
      this.running.add(pass);
    }
  }

  private async pass(connection: StoreConnection, owner: string): Promise<void> {
    const started = Date.now();
    try {
      const connector = this.connectors[connection.platform];
      const { outcome, written, internalError } = await runPass(
        this.db,
        connector,
        connection,
        owner,
        this.settings,
        {
          stopping: () => this.stopping,
        },
      );
      if (internalError !== undefined) this.events.failed(internalError, connection.id);
      await retryWhileMomentarilyOut(
        () => release(this.db, connection.id, owner, outcome),
        RELEASE_RETRY_MS,
        () => this.stopping,
      );
      this.events.passEnded({
        connectionId: connection.id,
        organizationId: connection.organizationId,
        ok: outcome.ok,
        written,
        ms: Date.now() - started,
        nextInS: outcome.nextInS,
        ...(outcome.ok ? {} : { error: outcome.error }),
      });
    } catch (error) {
      if (!(error instanceof LeaseLost)) this.events.failed(error, connection.id);
    }
  }

  /** Stops claiming; the passes under way stop at their next page and give their stores back. */
  async close(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await Promise.allSettled([...this.running]);
  }
}
