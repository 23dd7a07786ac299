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
// Issue 29, item 2, again: equal turns were not enough. A quiet organization's report shared the
// loop half and half with the noisy one's heavy answers, so its few milliseconds of work took
// twice as long, and the measured p95 ratio sat at 2–3.6×. The turns are now weighted (stride
// scheduling): a slice of a light request, one whose slices have taken less than LIGHT_MS so
// far, weighs LIGHT_WEIGHT times less than a slice of a heavy one, so a light request waiting
// beside heavy ones gets LIGHT_WEIGHT turns for each of theirs, and the organization waiting
// with the fewest weighted turns taken always goes next. A heavy request still gets a turn in
// every LIGHT_WEIGHT + 1 (never starved), two heavy organizations share the loop equally, and
// a request stays light for at most LIGHT_MS of the loop.
//
// Which organizations have work under way is counted too: a slice is short while another
// organization waits (time-slice.ts), because a request of a quiet organization needs several
// turns of the loop (its key and data version looked up, its answer computed and written) and
// each turn lasts as long as the others' slices. And for RECENT_MS after another
// organization's work ended: its next request is unseen until the loop reads it from its socket,
// so it waited for a whole long slice before it counted (measured: 15 ms of the quiet
// organization's 45 at the median, docs/operations.md).
import { AsyncLocalStorage } from 'node:async_hooks';

/** A request's share of the turns: its organization, and the time its slices have taken so far. */
export interface RequestTurns {
  readonly organizationId: string;
  attainedMs: number;
}

const current = new AsyncLocalStorage<RequestTurns>();

/** Whose work a request is before its key says which organization it is for (no id is empty). */
export const UNKNOWN_ORGANIZATION = '';

/** A request is light until its slices have taken this long (a report by day takes a few ms). */
export const LIGHT_MS = 50;

/** Turns a light request's organization gets for each turn of an organization with heavy work. */
export const LIGHT_WEIGHT = 8;

/**
 * Another organization's work that ended less than this long ago still shortens the slices: a
 * client asking one report after another is away for a millisecond or two between them, a
 * dashboard's reports come within a second of each other.
 */
export const RECENT_MS = 1_000;

/** Work under way by organization: computations, serializations and answers being written. */
const atWork = new Map<string, number>();

/**
 * The last two organizations whose work ended, the latest first, with when: one of them at least
 * is not the caller's (a request being authenticated is not noted: its organization's own work
 * follows it at once).
 */
const lastEnded: { organizationId: string; at: number }[] = [];

function noteEnded(organizationId: string): void {
  if (organizationId === UNKNOWN_ORGANIZATION) return;
  const at = performance.now();
  const latest = lastEnded[0];
  if (latest?.organizationId === organizationId) latest.at = at;
  else {
    lastEnded.unshift({ organizationId, at });
    lastEnded.length = Math.min(lastEnded.length, 2);
  }
}

/** Counts work of the organization until the returned function is called (safe to call twice). */
export function workUnderWay(organizationId: string): () => void {
  atWork.set(organizationId, (atWork.get(organizationId) ?? 0) + 1);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    const left = (atWork.get(organizationId) ?? 1) - 1;
    if (left > 0) atWork.set(organizationId, left);
    else {
      atWork.delete(organizationId);
      noteEnded(organizationId);
    }
  };
}

/**
 * Whether an organization other than the caller's has work under way, or had some less than
 * RECENT_MS before `now` (then slices are short).
 */
export function othersAtWork(
  organizationId = current.getStore()?.organizationId,
  now = performance.now(),
): boolean {
  if (atWork.size > (organizationId !== undefined && atWork.has(organizationId) ? 1 : 0)) return true;
  return lastEnded.some((ended) => ended.organizationId !== organizationId && now - ended.at < RECENT_MS);
}

/**
 * The slices of everything `work` starts, awaited or not, take this organization's turns, as one
 * request (its time counted together); its promise, until it settles, counts as the
 * organization's work under way.
 */
export function asOrganization<T>(organizationId: string, work: () => T): T {
  if (current.getStore()?.organizationId === organizationId) return work();
  const ended = workUnderWay(organizationId);
  try {
    const result = current.run({ organizationId, attainedMs: 0 }, work);
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

/**
 * The request whose turns slices take: the caller's (from its context), or, for work of a named
 * organization started outside its request's context, one of its own, heavy from the start: that
 * is a large answer being written to its socket (over 64 KiB, src/api/send-answer.ts), whose
 * slices cost little while they run and much later in the turn (the kernel's copy), so that
 * their own time would keep them light for megabytes.
 */
export function requestTurns(organizationId?: string): RequestTurns | undefined {
  const request = current.getStore();
  if (organizationId === undefined || request?.organizationId === organizationId) return request;
  return { organizationId, attainedMs: LIGHT_MS };
}

interface WaitingSlice {
  readonly request: RequestTurns;
  readonly resume: () => void;
}

/** Each organization's slices waiting for their turn, oldest first. */
const waiting = new Map<string, WaitingSlice[]>();
/** Weighted turns taken by each organization waiting (stride scheduling's pass). */
const taken = new Map<string, number>();
/** The weighted turns of the organization resumed last: where a newly waiting one starts. */
let clock = 0;
let dispatching = false;

/**
 * Resumes one slice: the oldest of the organization waiting with the fewest weighted turns taken
 * (the first to wait on a tie). One slice a turn of the event loop, the others' I/O between them.
 */
function resumeNext(): void {
  dispatching = false;
  let next: string | undefined;
  for (const organizationId of waiting.keys())
    if (next === undefined || (taken.get(organizationId) ?? 0) < (taken.get(next) ?? 0))
      next = organizationId;
  if (next === undefined) return;
  const queue = waiting.get(next) as WaitingSlice[];
  const slice = queue.shift() as WaitingSlice;
  clock = taken.get(next) as number;
  const light = slice.request.attainedMs < LIGHT_MS;
  taken.set(next, clock + (light ? 1 : LIGHT_WEIGHT));
  if (queue.length === 0) waiting.delete(next);
  if (waiting.size > 0) dispatchSoon();
  slice.resume();
}

/** Turns remembered for organizations no longer waiting: behind the clock, they mean nothing. */
const REMEMBERED = 1_000;

/** Bounded memory: past REMEMBERED organizations, those behind the clock are forgotten. */
function forgetPastTurns(): void {
  if (taken.size <= REMEMBERED) return;
  for (const [organizationId, turns] of taken)
    if (turns <= clock && !waiting.has(organizationId)) taken.delete(organizationId);
}

function dispatchSoon(): void {
  if (dispatching) return;
  dispatching = true;
  setImmediate(resumeNext);
}

/**
 * Resolves at the request's next turn (by default the caller's, from its context), after this
 * turn of the event loop; `usedMs`, the time its slice just took, counts towards its weight.
 * Work outside any organization gets the next turn, as setImmediate.
 */
export function nextTurn(request = current.getStore(), usedMs = 0): Promise<void> {
  return new Promise((resume) => {
    if (request === undefined) return void setImmediate(resume);
    request.attainedMs += usedMs;
    const queue = waiting.get(request.organizationId);
    if (queue) queue.push({ request, resume });
    else {
      waiting.set(request.organizationId, [{ request, resume }]);
      // Its turns taken are kept while it is away (a request resumed waits again in the same
      // turn), but no credit is banked: it comes back level with the one served last at least.
      taken.set(request.organizationId, Math.max(taken.get(request.organizationId) ?? clock, clock));
      forgetPastTurns();
    }
    dispatchSoon();
  });
}

/** Slices waiting, all organizations together (for tests and /metrics). */
export function slicesWaiting(): number {
  let count = 0;
  for (const queue of waiting.values()) count += queue.length;
  return count;
}
