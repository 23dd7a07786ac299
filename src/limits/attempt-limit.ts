// Limits on attempts per client address: failed API authentications (R2), failed logins and
// sign-ups of the web application. Each one checks the address's count, makes the attempt, then
// counts it when its outcome uses up the limit. Attempts from one address run one at a time, or
// parallel attempts would all pass the check before any of them was counted (500 parallel key
// guesses got 263 lookups through before this; 20 parallel sign-ups, 20 accounts).
import type { FastifyRequest } from 'fastify';
import { KeyedLock } from './keyed-lock.js';

/** What @fastify/rate-limit's `createRateLimit` returns: a count per address, read or increased. */
export type AddressCounter = (
  request: FastifyRequest,
  options?: { increment?: boolean },
) => Promise<{ isAllowed: true } | { isAllowed: false; remaining: number; ttl: number }>;

export type Attempted<T> = { readonly outcome: T } | { readonly limitedForMs: number };

export class AttemptLimit {
  private readonly lock = new KeyedLock();

  constructor(private readonly counter: AddressCounter) {}

  /**
   * `attempt` unless the address has used up its limit; `counts` says whether its outcome uses
   * some of it. `serialize: false` lets an attempt skip the queue of its address, for callers
   * that know it will not count (a key seen to succeed lately).
   */
  async run<T>(
    request: FastifyRequest,
    attempt: () => Promise<T>,
    counts: (outcome: T) => boolean,
    options: { serialize?: boolean } = {},
  ): Promise<Attempted<T>> {
    const once = async (): Promise<Attempted<T>> => {
      const status = await this.counter(request, { increment: false });
      if (!status.isAllowed && status.remaining === 0) return { limitedForMs: status.ttl };
      const outcome = await attempt();
      if (counts(outcome)) await this.counter(request);
      return { outcome };
    };
    return options.serialize === false ? once() : this.lock.run(request.ip, once);
  }
}
