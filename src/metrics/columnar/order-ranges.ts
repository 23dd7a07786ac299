// A part's orders read in ranges (issue 26, item 6): a pass over a million orders is cut so that
// the event loop gets a turn between two ranges when the request's slice is over. A range starts
// anywhere, in the middle of a customer's run of orders too (U2 still looks at the whole run).

export interface Rows {
  readonly from: number;
  readonly to: number;
}

/** The run (in [0, runs]) that holds the order `i`: the last one starting at or before it. */
export function runAt(runStart: Int32Array, runs: number, i: number): number {
  // Two lets, not [low, high] = [0, runs]: an array pattern is iteration, ten times the bytecode, and
  // the scan's loop inlines this within V8's budget.
  let low = 0;
  let high = runs;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((runStart[middle] as number) <= i) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** The ranges of `size` orders of a part of `orderCount` orders. */
export function* ranges(orderCount: number, size: number): Generator<Rows> {
  for (let from = 0; from < orderCount; from += size) yield { from, to: Math.min(orderCount, from + size) };
}
