// No request holds the event loop more than 100 ms (issue 26, item 6): a long loop (shaping tens
// of thousands of rows, writing a 50 MB answer) runs in slices, and gives the event loop a turn
// whenever its slice has lasted SLICE_MS, so that /healthz and every other organization's requests
// are served between them. A slice is measured, not counted in rows: a row costs ten times more
// with a comparison, and a loaded machine is slower.
// Issue 29, item 2: the turn is the organization's (organization-turns.ts), so that one
// organization's many slices wait behind each other, not in front of the others'. And a slice is
// short while another organization has work under way, or had some within the last second
// (RECENT_MS: its next request may be waiting in its socket): each of the few turns of the loop
// that the other's request needs then lasts a few milliseconds, not SLICE_MS (measured with
// bench/tenants-fairness.ts, docs/operations.md).
import { nextTurn, othersAtWork, requestTurns, type RequestTurns } from './organization-turns.js';

/** A slice's length: well under the 100 ms bound, even if one step of the loop is slow. */
export const SLICE_MS = 15;

/** A slice's length while another organization has work under way or had some lately (issue 29, item 2). */
export const SHARED_SLICE_MS = 3;

export class TimeSlices {
  private started = performance.now();
  private length: number;
  /** Whose turns the slices take, their time counted towards its weight (organization-turns.ts). */
  private readonly request: RequestTurns | undefined;

  /** `organizationId`: whose turns the slices take, when the caller's context does not say. */
  constructor(organizationId?: string) {
    this.request = requestTurns(organizationId);
    this.length = this.lengthNow();
  }

  private lengthNow(): number {
    return othersAtWork(this.request?.organizationId) ? SHARED_SLICE_MS : SLICE_MS;
  }

  /** Whether the current slice has lasted its time: then `await slices.next()`. */
  due(): boolean {
    return performance.now() - this.started >= this.length;
  }

  /** Gives the event loop a turn and starts a new slice. */
  async next(): Promise<void> {
    await nextTurn(this.request, performance.now() - this.started);
    this.started = performance.now();
    this.length = this.lengthNow();
  }

  /** Gives the event loop a turn only if the slice is over (cheap to call every step). */
  async pause(): Promise<void> {
    if (this.due()) await this.next();
  }
}

/**
 * A long text built piece by piece (a page's table rows, a CSV's lines), the event loop given a
 * turn whenever the slice has lasted its time: the same text as `[...pieces].join('')`, written
 * without holding the loop for the whole of it (the web pages' 731-row tables, issue 26 item 6).
 */
export async function joinInSlices(pieces: Iterable<string>, slices = new TimeSlices()): Promise<string> {
  let text = '';
  for (const piece of pieces) {
    text += piece;
    await slices.pause();
  }
  return text;
}
