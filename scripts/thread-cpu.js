// Preload for benchmarks (Linux): at exit, prints each live thread's CPU time from /proc/self/task,
// so that a command's own thread can be told from PGlite's and V8's helper threads.
//   node --import ./scripts/thread-cpu.js bin/sales-metrics.js import --org bench orders.ndjson
// A thread that ended before the exit (PGlite's worker, say) is no longer listed.
import fs from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

process.on('exit', () => {
  const rows = [];
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpu = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // utime + stime
      rows.push(`${tid} ${name}: ${cpu.toFixed(2)} s`);
    } catch {
      // the thread ended while it was read
    }
  }
  process.stderr.write(`thread CPU at exit:\n  ${rows.join('\n  ')}\n`);
});
