// Issue 18, finding 2: the bytes of report answers held by responses still being sent, bounded.
// A slow reader keeps its answer in memory until it has read the last byte (20 KB/s: 40 minutes
// for 47 MB), and the report slots only bound computations, so ten readers of ten different
// answers held 2 GB. Every answer a response sends is counted here until the response ends or
// its connection closes; past the budget, overall or for one organization, the request is refused
// at once as busy (503 SERVICE_BUSY with Retry-After). Responses sending the same answer (one
// cached body) share its bytes, counted once. Answers being serialized count too, as they grow
// (a reservation): four computations of one organization serializing 13 MB each at once held
// 100 MB of buffers beyond the budget before any of them was sent.
import { busy } from './report-slots.js';

export interface AnswerBudgetLimits {
  /** Bytes of answers in flight, all organizations together. */
  readonly totalBytes: number;
  /** Of which one organization may hold, so that one organization's readers leave room for others. */
  readonly perOrganizationBytes: number;
}

/** The bytes of one answer being serialized (see `reserve`). */
export interface AnswerReservation {
  /** The answer's size so far, in bytes. */
  grow(bytes: number): void;
  release(): void;
}

interface Held {
  readonly organizationId: string;
  readonly bytes: number;
  holders: number;
}

const mb = (bytes: number) => `${Math.ceil(bytes / 1024 ** 2)} Mo`;

export class AnswerBudget {
  private total = 0;
  private readonly perOrganization = new Map<string, number>();
  /** By answer body: a body sent by several responses at once is counted once. */
  private readonly held = new Map<Uint8Array, Held>();

  constructor(readonly limits: AnswerBudgetLimits) {}

  /** Bytes held now (for the tests and the bench). */
  get heldBytes(): number {
    return this.total;
  }

  /**
   * Room for one answer being serialized: refused at once when the budget is full, then grown to
   * the answer's size so far (throws SERVICE_BUSY past the budget); `release` gives it all back
   * (safe to call more than once), when the answer is held by its response or abandoned.
   */
  reserve(organizationId: string): AnswerReservation {
    this.refuseBeyond(organizationId, 1);
    let reserved = 0;
    return {
      grow: (bytes) => {
        if (bytes <= reserved) return;
        this.refuseBeyond(organizationId, bytes - reserved);
        this.add(organizationId, bytes - reserved);
        reserved = bytes;
      },
      release: () => {
        this.add(organizationId, -reserved);
        reserved = 0;
      },
    };
  }

  /**
   * Counts `body` for one response; resolves with the function that gives it back (safe to call
   * more than once), or throws SERVICE_BUSY when it does not fit.
   */
  hold(organizationId: string, body: Uint8Array): () => void {
    const shared = this.held.get(body);
    if (shared) shared.holders++;
    else {
      this.refuseBeyond(organizationId, body.byteLength);
      this.held.set(body, { organizationId, bytes: body.byteLength, holders: 1 });
      this.add(organizationId, body.byteLength);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const entry = this.held.get(body);
      if (!entry || --entry.holders > 0) return;
      this.held.delete(body);
      this.add(entry.organizationId, -entry.bytes);
    };
  }

  private refuseBeyond(organizationId: string, bytes: number): void {
    const { totalBytes, perOrganizationBytes } = this.limits;
    if (bytes > perOrganizationBytes)
      throw busy(
        `Service occupé : cette réponse (${mb(bytes)}) dépasse ce qu’une organisation peut recevoir à la fois (${mb(perOrganizationBytes)}) ; demandez moins de lignes (limit) ou paginez (offset).`,
      );
    if ((this.perOrganization.get(organizationId) ?? 0) + bytes > perOrganizationBytes)
      throw busy(
        `Service occupé : les réponses de cette organisation en cours d’envoi occupent déjà ${mb(perOrganizationBytes)}, réessayez dans quelques secondes.`,
      );
    if (this.total + bytes > totalBytes)
      throw busy(
        'Service occupé : trop de réponses volumineuses en cours d’envoi, réessayez dans quelques secondes.',
      );
  }

  private add(organizationId: string, bytes: number): void {
    this.total += bytes;
    const left = (this.perOrganization.get(organizationId) ?? 0) + bytes;
    if (left > 0) this.perOrganization.set(organizationId, left);
    else this.perOrganization.delete(organizationId);
  }
}
