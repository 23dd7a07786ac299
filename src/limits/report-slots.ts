// Load shedding for report computations (issue 7, finding 6): at most `total` at once, at most
// `perOrganization` for one organization, and a short queue. A request that cannot start within
// `maxWaitMs`, or finds the queue full, is refused at once as busy (503 SERVICE_BUSY with
// Retry-After) instead of piling up connections until clients time out. A request whose client
// went away leaves the queue. Cached answers and authentication never come here.
import { AppError } from '../errors.js';

export interface SlotLimits {
  readonly total: number;
  readonly perOrganization: number;
  /** Requests waiting for a slot, all organizations together. */
  readonly maxQueued: number;
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

export class ReportSlots {
  private active = 0;
  private readonly perOrganization = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(readonly limits: SlotLimits) {}

  /** Computations running now (for the health check and the tests). */
  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves with the function that gives the slot back, or rejects with SERVICE_BUSY. */
  async acquire(organizationId: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.canStart(organizationId)) return this.start(organizationId);
    if (this.waiting.length >= this.limits.maxQueued)
      throw busy('Service occupé : trop de rapports en cours de calcul, réessayez dans quelques secondes.');
    return new Promise<() => void>((resolve, reject) => {
      const leave = (error: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const at = this.waiting.indexOf(waiter);
        if (at !== -1) this.waiting.splice(at, 1);
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
                : 'Service occupé : trop de rapports en cours de calcul, réessayez dans quelques secondes.',
            ),
          ),
        this.limits.maxWaitMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
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
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      const left = this.count(organizationId) - 1;
      if (left === 0) this.perOrganization.delete(organizationId);
      else this.perOrganization.set(organizationId, left);
      this.wakeNext();
    };
  }

  /** The first waiter that may start now: one organization's backlog does not block the others. */
  private wakeNext(): void {
    const at = this.waiting.findIndex((w) => this.canStart(w.organizationId));
    if (at === -1) return;
    const [next] = this.waiting.splice(at, 1);
    next?.grant();
  }
}
