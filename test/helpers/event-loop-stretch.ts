// The longest time the main thread kept the event loop (issue 26, item 6): a timer ticks every
// millisecond and, at each tick, reads the main thread's time on a CPU from Linux's schedstat, so
// that the time a loaded machine kept the thread waiting for a CPU is not counted (a neighbour's
// doing, not ours); the largest CPU time between two ticks is the longest synchronous stretch.
// Without /proc it falls back to the wall time between ticks.
import fs from 'node:fs';

const SCHEDSTAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;
const hasSchedstat = fs.existsSync(SCHEDSTAT);

/** The main thread's time on a CPU so far, in ms (wall time without /proc). */
function cpuMs(): number {
  if (!hasSchedstat) return performance.now();
  return Number(fs.readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]) / 1e6;
}

export interface Stretches<T> {
  readonly result: T;
  /** The longest CPU time of the main thread between two turns of the event loop, in ms. */
  readonly longestMs: number;
  /** The same, as wall time (includes waiting for a CPU on a loaded machine). */
  readonly longestWallMs: number;
}

/** Runs `work` while measuring the longest synchronous stretch of the event loop. */
export async function longestStretch<T>(work: () => Promise<T>): Promise<Stretches<T>> {
  let [longestMs, longestWallMs] = [0, 0];
  let [cpu, wall] = [cpuMs(), performance.now()];
  const timer = setInterval(() => {
    const [nowCpu, nowWall] = [cpuMs(), performance.now()];
    longestMs = Math.max(longestMs, nowCpu - cpu);
    longestWallMs = Math.max(longestWallMs, nowWall - wall);
    [cpu, wall] = [nowCpu, nowWall];
  }, 1);
  try {
    const result = await work();
    return { result, longestMs, longestWallMs };
  } finally {
    clearInterval(timer);
  }
}
