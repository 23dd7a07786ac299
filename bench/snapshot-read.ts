// Reading a snapshot file back, step by step (issue 19, item 5), in one process: the whole file
// read, then the old way's SHA-256 and copy into typed arrays against the new way's CRC-32 (the
// columns are views over the buffer read: no copy). Prints each step's time and the load average.
// Usage: node dist/bench/snapshot-read.js FILE (a file of REPORT_SNAPSHOT_DIR, e.g. one bench:big left)
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import zlib from 'node:zlib';

const file = process.argv[2];
if (!file) throw new Error('usage: node dist/bench/snapshot-read.js FILE');
const time = <T>(work: () => T | Promise<T>): Promise<[T, string]> => {
  const started = performance.now();
  return Promise.resolve(work()).then((value) => [value, `${(performance.now() - started).toFixed(0)} ms`]);
};
const [data, read] = await time(() => fs.readFile(file));
const [, sha] = await time(() => crypto.createHash('sha256').update(data).digest());
const [, copy] = await time(() => new Uint8Array(data.length).set(data));
const [, crc] = await time(() => zlib.crc32(data));
const load = (await fs.readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
console.log(
  `${(data.length / 2 ** 20).toFixed(0)} MB: read ${read}; old: SHA-256 ${sha}, copy ${copy}; new: CRC-32 ${crc}, no copy; load ${load}`,
);
