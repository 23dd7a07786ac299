// One long-lived importer for bench/live.ts (issue 19): a connected store's orders arrive inside a
// running process (webhooks, sync passes), not as one `sales-metrics import` process per batch,
// whose Node start-up alone would take most of the time measured. It opens the database as the
// command does (on the embedded engine, through the server's socket), then imports each batch
// read from standard input (one JSON array of orders a line) through the same ingest code as a
// file import (validation, staging, merge, U2), and answers one line a batch: `ok` or the error.
// Usage: node dist/bench/live-importer.js SLUG, with the command's environment.
import readline from 'node:readline';
import { Readable } from 'node:stream';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { findOrganization } from '../src/domain/organizations.js';
import { importOrderStream } from '../src/ingest/import.js';

const slug = process.argv[2];
if (!slug) throw new Error('usage: live-importer SLUG');
const db = await openDatabase(loadConfig(), { role: 'cli' });
try {
  const org = await findOrganization(db, slug);
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const orders = JSON.parse(line) as object[];
    const ndjson = orders.map((o) => `${JSON.stringify(o)}\n`).join('');
    const answer = await importOrderStream(db, org.id, Readable.from([ndjson]), 'ndjson').then(
      (result) => (result.refused ? `refused ${JSON.stringify(result)}` : 'ok'),
      (error: unknown) => `error ${String(error).replace(/\n/g, ' ')}`,
    );
    process.stdout.write(`${answer}\n`);
  }
} finally {
  await db.close();
}
