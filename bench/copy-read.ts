// What reading a build's COPY costs the server's thread, apart from decoding it (issue 28, item 2):
// an organization's orders, as the build reads them (ORDER_FIELDS, binary), read on one
// connection in turns through pg-copy-streams (the stream the builds used until 29 November) and
// through src/db/copy-out.ts (what they use now), the output only counted. Prints each run's wall
// time and the process's CPU (user and system: the socket's reads are the system's).
// Usage: npm run build && node dist/bench/copy-read.js --database-url postgres://… [--organization ID] [--runs R]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { CopyOutQuery } from '../src/db/copy-out.js';
import { ORDER_FIELDS } from '../src/metrics/columnar/order-columns.js';

const { values: args } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    organization: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
  },
});
if (!args['database-url']) throw new Error('--database-url postgres://… is required');
const organization = BigInt(args.organization); // an integer, written out by BigInt
const sql = `COPY (SELECT ${ORDER_FIELDS} FROM orders o WHERE o.organization_id = ${organization}) TO STDOUT (FORMAT binary)`;
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const client = new pg.Client({ connectionString: args['database-url'] });
await client.connect();

const readers: Record<string, () => Promise<number>> = {
  'pg-copy-streams': async () => {
    let bytes = 0;
    for await (const piece of client.query(copyTo(sql))) bytes += (piece as Buffer).length;
    return bytes;
  },
  'copy-out.ts': async () => {
    let bytes = 0;
    await client.query(new CopyOutQuery(sql, (_, from, to) => void (bytes += to - from))).done;
    return bytes;
  },
};

console.log(`load average ${load()}; node ${process.version}`);
console.log('reader            wall ms  user ms  system ms  MB');
for (let run = 0; run < Number(args.runs); run++) {
  for (const [name, read] of Object.entries(readers)) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const bytes = await read();
    const used = process.cpuUsage(cpu);
    console.log(
      [
        name.padEnd(16),
        (performance.now() - started).toFixed(0).padStart(8),
        (used.user / 1000).toFixed(0).padStart(8),
        (used.system / 1000).toFixed(0).padStart(10),
        (bytes / 1e6).toFixed(0).padStart(4),
      ].join(' '),
    );
  }
}
console.log(`load average ${load()}`);
await client.end();
