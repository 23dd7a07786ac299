// Issue 29, item 2: one organization's long work does not crowd out the others'. Work that runs
// in time slices (src/limits/time-slice.ts: scans, shaping, serialization, writing an answer to
// its socket) gives the event loop a turn between slices; without more, four answers of one
// organization being computed or serialized at once would each take a slice per turn of the loop,
// and another organization's single request would get a fifth of the process. Here the slices of
// one organization wait in its own queue, and each organization resumes at most one slice per
// turn of the event loop: every organization with work gets an equal share of the loop, however
// many requests it has under way. The organization is known from the asynchronous context
// (AsyncLocalStorage), set once where a report's work starts, so the slicing code does not carry
// it around.
//
// Which organizations have work under way is counted too: a slice is short while another
// organization waits (time-slice.ts), because a request of a quiet organization needs several
// turns of the loop (its key looked up, its data version read, its answer computed and written)
// and each turn lasts as long as the others' slices.
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<string>();

/** Whose work a request is before its key says which organization it is for (no id is empty). */
export const UNKNOWN_ORGANIZATION = '';

/** Work under way by organization: computations, serializations and answers being written. */
const atWork = new Map<string, number>();

/** Counts work of the organization until the returned function is called (safe to call twice). */
export function workUnderWay(organizationId: string): () => void {
  atWork.set(organizationId, (atWork.get(organizationId) ?? 0) + 1);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    const left = (atWork.get(organizationId) ?? 1) - 1;
    if (left > 0) atWork.set(organizationId, left);
    else atWork.delete(organizationId);
  };
}

/** Whether an organization other than the caller's has work under way (then slices are short). */
export function othersAtWork(organizationId = current.getStore()): boolean {
  return atWork.size > (organizationId !== undefined && atWork.has(organizationId) ? 1 : 0);
}

/**
 * The slices of everything `work` starts, awaited or not, take this organization's turns; its
 * promise, until it settles, counts as the organization's work under way.
 */
export function asOrganization<T>(organizationId: string, work: () => T): T {
  if (current.getStore() === organizationId) return work();
  const ended = workUnderWay(organizationId);
  try {
    const result = current.run(organizationId, work);
    if (result instanceof Promise) {
      result.then(ended, ended);
      return result;
    }
    ended();
    return result;
  } catch (error) {
    ended();
    throw error;
  }
}

/** Each organization's slices waiting for their turn, oldest first. */
const waiting = new Map<string, (() => void)[]>();

/** Resumes the organization's oldest waiting slice; the next one waits for the next turn of the loop. */
function resumeOne(organizationId: string): void {
  const queue = waiting.get(organizationId);
  const next = queue?.shift();
  if (!queue || queue.length === 0) waiting.delete(organizationId);
  else setImmediate(resumeOne, organizationId);
  next?.();
}

/**
 * Resolves at the organization's next turn (by default the caller's, from its context): after
 * this turn of the event loop, behind its other waiting slices. Work outside any organization gets
 * the next turn, as setImmediate.
 */
export function nextTurn(organizationId = current.getStore()): Promise<void> {
  return new Promise((resolve) => {
    if (organizationId === undefined) return void setImmediate(resolve);
    const queue = waiting.get(organizationId);
    if (queue) return void queue.push(resolve);
    waiting.set(organizationId, [resolve]);
    setImmediate(resumeOne, organizationId);
  });
}

/** Slices waiting, all organizations together (for tests and /metrics). */
export function slicesWaiting(): number {
  let count = 0;
  for (const queue of waiting.values()) count += queue.length;
  return count;
}
