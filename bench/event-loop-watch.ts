// Loaded into a server for a benchmark (NODE_OPTIONS="--import ./dist/bench/event-loop-watch.js"):
// the main thread's event loop watched from inside. A 5 ms timer notes each gap between two of its
// turns, split from Linux's schedstat into the main thread's CPU time, its wait for a CPU and the
// rest (blocked: mostly a garbage collection waiting for its helper threads), and the garbage
// collections are counted. On SIGUSR2 it writes one line of the figures since the last SIGUSR2 to
// watchFile(pid), and starts again (bench/compare-bursts.ts sends it around each burst).
import fs from 'node:fs';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { watchFile } from './event-loop-watch-file.js';

const TICK_MS = 5;

interface Figures {
  longestGapMs: number;
  /** The longest gap's main-thread CPU, CPU wait and blocked time. */
  longest: string;
  mostCpuInAGapMs: number;
  minorGcs: number;
  majorGcs: number;
  gcMs: number;
  longestGcMs: number;
}

const fresh = (): Figures => ({
  longestGapMs: 0,
  longest: '',
  mostCpuInAGapMs: 0,
  minorGcs: 0,
  majorGcs: 0,
  gcMs: 0,
  longestGcMs: 0,
});

function watch(): void {
  let figures = fresh();
  const schedstat = `/proc/self/task/${process.pid}/schedstat`;
  const sched = () =>
    fs
      .readFileSync(schedstat, 'utf8')
      .split(' ')
      .map((x) => Number(x) / 1e6);
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) figures.majorGcs++;
      else figures.minorGcs++;
      figures.gcMs += entry.duration;
      figures.longestGcMs = Math.max(figures.longestGcMs, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  let last = performance.now();
  let [ran, waited] = sched();
  setInterval(() => {
    const now = performance.now();
    const [ranNow = 0, waitedNow = 0] = sched();
    const gap = now - last - TICK_MS;
    const cpu = ranNow - (ran ?? 0);
    const wait = waitedNow - (waited ?? 0);
    figures.mostCpuInAGapMs = Math.max(figures.mostCpuInAGapMs, cpu);
    if (gap > figures.longestGapMs) {
      figures.longestGapMs = gap;
      figures.longest = `CPU ${cpu.toFixed(0)}, CPU wait ${wait.toFixed(0)}, blocked ${Math.max(0, now - last - cpu - wait).toFixed(0)}`;
    }
    [last, ran, waited] = [now, ranNow, waitedNow];
  }, TICK_MS).unref();
  // The file says the server is watched: the bench signals only such a server (SIGUSR2 ends another).
  fs.writeFileSync(watchFile(process.pid), 'watched\n');
  process.on('SIGUSR2', () => {
    const f = figures;
    fs.writeFileSync(
      watchFile(process.pid),
      `event loop: longest gap ${f.longestGapMs.toFixed(0)} ms (${f.longest}), most main-thread CPU in a gap ${f.mostCpuInAGapMs.toFixed(0)} ms; ` +
        `GC: ${f.minorGcs} minor, ${f.majorGcs} major, ${f.gcMs.toFixed(0)} ms in all, longest ${f.longestGcMs.toFixed(0)} ms\n`,
    );
    figures = fresh();
  });
}

// The embedded database's worker loads this file too: only the main thread's loop is watched.
if (isMainThread) watch();
