// Load shedding for report computations (issue 7, finding 6): at most `total` at once, at most
// `perOrganization` for one organization, and a short queue. A request that cannot start within
// `maxWaitMs`, or finds the queue full, is refused at once as busy (503 SERVICE_BUSY with
// Retry-After) instead of piling up connections until clients time out. A request whose client
// went away leaves the queue. Cached answers and authentication never come here.
//
// Fair by construction (issue 29, item 2; STYLE: "work is queued per tenant and served in
// turns"): each organization waits in a queue of its own, at most `maxQueuedPerOrganization`
// long, and a freed slot goes to the head of the queue of the organization served least recently
// (round robin over the organizations waiting). One organization's burst therefore waits behind itself: another organization's
// request is served after at most one computation of each organization ahead of it in the turn,
// however many the burst queued (one queue in arrival order served it after the whole burst).
import { AppError } from '../errors.js';

export interface SlotLimits {
  readonly total: number;
  readonly perOrganization: number;
  /** Requests waiting for a slot, all organizations together. */
  readonly maxQueued: number;
  /** Of which one organization's (default: half of maxQueued, at least 1). */
  readonly maxQueuedPerOrganization?: number;
  readonly maxWaitMs: number;
}

interface Waiter {
  readonly organizationId: string;
  readonly grant: () => void;
}

export const BUSY_RETRY_AFTER_S = 2;

export function busy(message: string): AppError {
  return new AppError('SERVICE_BUSY', message, {}, { retryAfterS: BUSY_RETRY_AFTER_S });
}

const TOO_MANY = 'Service occupé : trop de rapports en cours de calcul, réessayez dans quelques secondes.';

export class ReportSlots {
  private active = 0;
  private readonly perOrganization = new Map<string, number>();
  /** Each organization's waiters, in arrival order. */
  private readonly queues = new Map<string, Waiter[]>();
  private waiting = 0;
  /** When each organization running or waiting last started a computation (a count of starts). */
  private readonly lastServed = new Map<string, number>();
  private starts = 0;

  constructor(readonly limits: SlotLimits) {}

  /** Computations running now (for the health check, /metrics and the tests). */
  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting;
  }

  private get maxQueuedPerOrganization(): number {
    return this.limits.maxQueuedPerOrganization ?? Math.max(1, Math.ceil(this.limits.maxQueued / 2));
  }

  /** Resolves with the function that gives the slot back, or rejects with SERVICE_BUSY. */
  async acquire(organizationId: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    const queue = this.queues.get(organizationId);
    // Behind its own queue even when a slot is free: a request never overtakes its organization's.
    if (!queue && this.canStart(organizationId)) return this.start(organizationId);
    if (this.waiting >= this.limits.maxQueued) throw busy(TOO_MANY);
    if ((queue?.length ?? 0) >= this.maxQueuedPerOrganization)
      throw busy(
        `Service occupé : ${this.limits.perOrganization + this.maxQueuedPerOrganization} rapports de cette organisation sont déjà en cours ou en attente, réessayez dans quelques secondes.`,
      );
    return new Promise<() => void>((resolve, reject) => {
      const leave = (error: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.remove(waiter);
        reject(error);
      };
      const waiter: Waiter = {
        organizationId,
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(this.start(organizationId));
        },
      };
      const onAbort = () => leave(signal?.reason);
      const timer = setTimeout(
        () =>
          leave(
            busy(
              this.count(organizationId) >= this.limits.perOrganization
                ? `Service occupé : ${this.limits.perOrganization} rapports de cette organisation sont déjà en cours de calcul, réessayez dans quelques secondes.`
                : TOO_MANY,
            ),
          ),
        this.limits.maxWaitMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      if (queue) queue.push(waiter);
      else this.queues.set(organizationId, [waiter]);
      this.waiting++;
    });
  }

  private count(organizationId: string): number {
    return this.perOrganization.get(organizationId) ?? 0;
  }

  private canStart(organizationId: string): boolean {
    return this.active < this.limits.total && this.count(organizationId) < this.limits.perOrganization;
  }

  private start(organizationId: string): () => void {
    this.active++;
    this.perOrganization.set(organizationId, this.count(organizationId) + 1);
    this.lastServed.set(organizationId, ++this.starts);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      const left = this.count(organizationId) - 1;
      if (left === 0) this.perOrganization.delete(organizationId);
      else this.perOrganization.set(organizationId, left);
      this.forgetIfIdle(organizationId);
      this.serveNextTurns();
    };
  }

  /** Takes a waiter out of its organization's queue (it timed out or its client went away). */
  private remove(waiter: Waiter): void {
    const queue = this.queues.get(waiter.organizationId);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at === -1) return;
    queue.splice(at, 1);
    this.waiting--;
    if (queue.length === 0) this.queues.delete(waiter.organizationId);
    this.forgetIfIdle(waiter.organizationId);
  }

  /** An organization with nothing running or waiting has no turn to remember (bounded memory). */
  private forgetIfIdle(organizationId: string): void {
    if (this.count(organizationId) === 0 && !this.queues.has(organizationId))
      this.lastServed.delete(organizationId);
  }

  /**
   * Gives the free slots in turns: each to the head of the queue of the organization, among those
   * that may start, served least recently.
   */
  private serveNextTurns(): void {
    while (this.active < this.limits.total) {
      let next: [string, Waiter[]] | undefined;
      for (const entry of this.queues) {
        if (!this.canStart(entry[0])) continue;
        if (!next || (this.lastServed.get(entry[0]) ?? 0) < (this.lastServed.get(next[0]) ?? 0)) next = entry;
      }
      if (!next) return;
      const [organizationId, queue] = next;
      const waiter = queue.shift() as Waiter;
      this.waiting--;
      if (queue.length === 0) this.queues.delete(organizationId);
      waiter.grant();
    }
  }
}
