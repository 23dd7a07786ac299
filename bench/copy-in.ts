// What COPY … FROM STDIN costs the embedded engine's host as an import sends it (issue 27): batches
// of rows, a few megabytes each, COPYed into a table through the host's socket, as one CopyData
// message a batch (what every import sent until 1 December), and in pieces of 64 KB and of 256 KB
// (src/db/database.ts, copyPieces: COPY_PIECE_BYTES, what it sends now), in turns on the same
// connection. Prints each run's wall time and the process's CPU, PGlite's thread included (user and
// system).
// Usage: npm run build && node dist/bench/copy-in.js [--megabytes M] [--batch-megabytes B] [--runs R]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { copyPieces } from '../src/db/database.js';
import { SOCKET_PORT, startHost } from '../src/db/embedded.js';

const { values: args } = parseArgs({
  options: {
    megabytes: { type: 'string', default: '300' },
    'batch-megabytes': { type: 'string', default: '3' },
    runs: { type: 'string', default: '3' },
  },
});
const MEGABYTES = Number(args.megabytes);
const BATCH_BYTES = Number(args['batch-megabytes']) * 1024 * 1024;
const RUNS = Number(args.runs);
if (!(MEGABYTES > 0 && BATCH_BYTES > 0 && Number.isInteger(RUNS) && RUNS > 0))
  throw new Error('--megabytes, --batch-megabytes: positive numbers; --runs: a positive whole number');
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

// Rows shaped like an order's (ids, an instant, a status, a hash, amounts).
const row = (i: number): string =>
  `1\t${1 + (i % 3)}\t${100_000 + i}\t2025-0${1 + (i % 9)}-1${i % 10}T10:${10 + (i % 50)}:00+00\tcompleted\t` +
  `${(i * 2_654_435_761).toString(16).padStart(64, '0').slice(-64)}\tFR\t${1 + (i % 4)}\t${(i % 20_000) / 100}\t0.00\n`;
let text = '';
for (let i = 0; text.length < BATCH_BYTES; i++) text += row(i);
const batch = Buffer.from(text, 'utf8');
const batches = Math.max(1, Math.round((MEGABYTES * 1024 * 1024) / batch.length));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'copy-in-'));
const host = await startHost(dataDir, 'cli');
if (host === undefined) throw new Error('the embedded database could not be hosted');
const client = new pg.Client({
  host: host.socketDir,
  port: SOCKET_PORT,
  user: 'postgres',
  database: 'postgres',
});
await client.connect();
await client.query(`CREATE TABLE copied (organization_id bigint, store_id bigint, external_id text,
  created_at timestamptz, status text, customer text, country text, items int, total numeric, tax numeric)`);

const senders: Record<string, (data: Buffer) => Readable> = {
  'one message a batch': (data) => Readable.from([data]),
  'pieces of 64 KB': (data) => Readable.from(copyPieces(data, 64 * 1024)),
  'pieces of 256 KB': (data) => Readable.from(copyPieces(data, 256 * 1024)),
};
console.log(
  `${batches} batches of ${(batch.length / 1024 / 1024).toFixed(1)} MB into the embedded engine, ${RUNS} runs each in turns`,
);
for (let run = 1; run <= RUNS; run++) {
  for (const [name, send] of Object.entries(senders)) {
    await client.query('TRUNCATE copied');
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let b = 0; b < batches; b++)
      await pipeline(send(batch), client.query(copyFrom('COPY copied FROM STDIN')));
    const used = process.cpuUsage(cpu);
    console.log(
      `run ${run} ${name.padEnd(20)} ${(performance.now() - started).toFixed(0).padStart(6)} ms wall, ` +
        `CPU ${(used.user / 1e6).toFixed(1)} s user ${(used.system / 1e6).toFixed(1)} s system, load ${load()}`,
    );
  }
}
await client.end();
await host.close();
fs.rmSync(dataDir, { recursive: true, force: true });
