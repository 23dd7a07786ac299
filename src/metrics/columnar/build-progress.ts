// How far a snapshot build has gone, and when it should end (issue 28, item 3): a report that SQL
// cannot answer within its short budget while the build runs is told to come back then (503
// SNAPSHOT_BUILDING with Retry-After), instead of waiting 30 s for a statement timeout.

/** Filled in by buildSnapshot as it reads; read by whoever must say how long is left. */
export interface BuildProgress {
  /** performance.now() when the build started reading. */
  startedAt: number;
  /** The organization's orders and lines, once counted (undefined before): the rows to read. */
  expected?: number;
  /** Of those, the orders, read first: what a report that reads no line waits for. */
  expectedOrders?: number;
  /** Rows (orders, then lines) decoded so far. */
  read: number;
  /**
   * performance.now() when the first row came. The speed is measured from then: the statements
   * before it (the counts, a wait for the embedded database's one session) took seconds at 1,000,000
   * orders, which measured from startedAt made the first estimates minutes too long (Retry-After
   * 309 s for a 14 s build, docs/benchmarks.md).
   */
  firstReadAt?: number;
  /** Rows a second assumed before the speed is measured (ASSUMED_ROWS_PER_S of its engine). */
  assumedRowsPerS: number;
}

/**
 * Rows a second assumed, by engine, before the build has read for MEASURED_AFTER_S. Measured on a
 * quiet 2-core machine at a million orders with 2.5 million lines (docs/benchmarks.md, 29
 * November): on PostgreSQL the orders in 3.2–4.2 s and all 3.5 million rows in about 14 s, 250,000
 * to 300,000 rows a second (about 200,000 with 200 reports arriving at once); embedded the orders in
 * 6.3–7.3 s, about 150,000. A Retry-After a little short costs the client one more try, one too
 * long a needless wait: one speed for both, 100,000, told 10 to 14 s for orders read in 4 to 5.
 */
export const ASSUMED_ROWS_PER_S = { postgres: 200_000, embedded: 150_000 } as const;
/**
 * Reading for less than this, the speed measured is the larger of the assumed one and the rows read
 * so far: the first rows come slowly (the statement's start, the code not optimized yet, the very
 * requests that arrived with the build parsed on the same thread). Under 200 reports at once at a
 * million orders on PostgreSQL, the speed of the first 0.3 s told 12 to 14 s for orders read 4 s
 * later, that of the first second (about 80,000 rows) still 12 to 13 s for 4.5 s.
 */
const MEASURED_AFTER_S = 2;
/** Before the count is known: about the time a small organization's build takes. */
const UNKNOWN_LEFT_S = 5;
const MAX_LEFT_S = 600;

export function newProgress(engine: keyof typeof ASSUMED_ROWS_PER_S, now = performance.now()): BuildProgress {
  return { startedAt: now, read: 0, assumedRowsPerS: ASSUMED_ROWS_PER_S[engine] };
}

/**
 * Whole seconds until the build should end, at least 1: measured speed once it has read some rows.
 * `ordersOnly`: until its orders are read (a report that reads no line is answered then, issue 28).
 */
export function secondsLeft(
  progress: BuildProgress | undefined,
  now = performance.now(),
  ordersOnly = false,
): number {
  const expected =
    ordersOnly && progress?.expectedOrders !== undefined ? progress.expectedOrders : progress?.expected;
  if (!progress || expected === undefined) return UNKNOWN_LEFT_S;
  const left = Math.max(0, expected - progress.read);
  const elapsedS = (now - (progress.firstReadAt ?? progress.startedAt)) / 1000;
  const measured = progress.read > 0 && elapsedS > 0 ? progress.read / elapsedS : 0;
  const perS =
    elapsedS >= MEASURED_AFTER_S && measured > 0 ? measured : Math.max(measured, progress.assumedRowsPerS);
  return Math.min(MAX_LEFT_S, Math.max(1, Math.ceil(left / perS)));
}
