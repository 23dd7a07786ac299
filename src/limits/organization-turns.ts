// Issue 29, item 2: one organization's long work does not crowd out the others'. Work that runs
// in time slices (src/limits/time-slice.ts: scans, shaping, serialization) gives the event loop
// a turn between slices; without more, four answers of one organization being computed or
// serialized at once would each take a slice per turn of the loop, and another organization's
// single request would get a fifth of the process. Here the slices of one organization wait in
// its own queue, and each organization resumes at most one slice per turn of the event loop:
// every organization with work gets an equal share of the loop, however many requests it has
// under way. The organization is known from the asynchronous context (AsyncLocalStorage), set
// once where a report's work starts, so the slicing code does not carry it around.
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<string>();

/** The slices of everything `work` starts, awaited or not, take this organization's turns. */
export function asOrganization<T>(organizationId: string, work: () => T): T {
  return current.getStore() === organizationId ? work() : current.run(organizationId, work);
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
 * Resolves at the caller's organization's next turn: after this turn of the event loop, behind
 * its other waiting slices. Work outside any organization gets the next turn, as setImmediate.
 */
export function nextTurn(): Promise<void> {
  const organizationId = current.getStore();
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
