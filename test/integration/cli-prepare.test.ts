// Issue 28, item 1: a large import by the command line leaves its organization's report snapshot
// built and saved, so that a server started after it reads the file back and its first report
// takes the fast path (no build from the database, no SQL answer meanwhile); a small import is
// left to the server's delta. SPEC 12: standard output still holds the three counts alone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PREPARE_MIN_ORDERS } from '../../src/cli/prepare-reports.js';
import { cliJson, runCli, startServer, type ServerProcess } from '../helpers/processes.js';
import { migratedConfig } from '../helpers/database.js';
import { openDatabase } from '../../src/db/database.js';

const ORDERS = PREPARE_MIN_ORDERS;

function ordersFile(dir: string, name: string, count: number, prefix: string): string {
  const file = path.join(dir, name);
  const lines = Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      store: 'https://grand.example',
      id: `${prefix}${i}`,
      created_at: new Date(Date.UTC(2026, 0, 1) + i * 600_000).toISOString(),
      status: 'completed',
      customer_email: `client${i % 500}@example.org`,
      items: 1,
      total: '10.00',
      tax_total: '0',
      shipping_total: '0',
      fee_total: '0',
      refund_total: '0',
      refund_tax: '0',
      refund_shipping: '0',
    }),
  );
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

type LogLine = { msg?: string; event?: string; organizationId?: string; orders?: number };

describe('a large import leaves the report snapshot ready (issue 28, item 1)', () => {
  let fresh: Awaited<ReturnType<typeof migratedConfig>>;
  let env: Record<string, string>;
  let files: string;
  let snapshots: string;
  let server: ServerProcess | undefined;

  before(async () => {
    fresh = await migratedConfig();
    files = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-prepare-'));
    snapshots = path.join(files, 'snapshots');
    env = {
      ...(fresh.config.databaseUrl
        ? { DATABASE_URL: fresh.config.databaseUrl, SECRET_KEY: fresh.config.secretKey.toString('hex') }
        : { DATA_DIR: fresh.config.dataDir }),
      REPORT_SNAPSHOT_DIR: snapshots,
    };
  });
  after(async () => {
    await server?.stop();
    await fresh.drop();
    fs.rmSync(files, { recursive: true, force: true });
  });

  test('the command builds and saves it; a server started after reads it back and answers from it', async () => {
    const cli = cliJson(env);
    const { slug } = await cli('org', 'create', '--name', 'Grand Import');
    const file = ordersFile(files, 'orders.ndjson', ORDERS, 'g');
    const result = await runCli(['import', '--org', String(slug), file, '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { imported: ORDERS, updated: 0, rejected: 0 }, 'SPEC 12');
    assert.match(result.stderr, new RegExp(`Rapports prêts : ${ORDERS} commandes`));
    assert.equal(fs.readdirSync(snapshots).length, 1, 'one saved snapshot');
    // The statistics refreshed too (issue 27: the command refreshes them, its snapshot saved
    // meanwhile): the planner counts the organization's orders.
    const db = await openDatabase(fresh.config, { role: 'cli' });
    try {
      const [orders] = await db.query<{ n: number }>(
        `SELECT reltuples::float8 AS n FROM pg_class WHERE oid = 'orders'::regclass`,
      );
      assert.ok(orders!.n >= ORDERS, `the planner counts ${orders!.n} orders`);
    } finally {
      await db.close();
    }

    // Below the bound: nothing prepared by the command (the server's delta will do).
    const small = ordersFile(files, 'small.ndjson', 3, 'small');
    const again = await runCli(['import', '--org', String(slug), small, '--json'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /Rapports prêts/);

    // A second large batch, the file then behind it: read back, brought up to date (here a
    // rebuild: more changed than a delta takes) and saved again, the count the organization's.
    const second = ordersFile(files, 'second.ndjson', ORDERS, 'h');
    const later = await runCli(['import', '--org', String(slug), second, '--json'], env);
    assert.equal(later.code, 0, later.stderr);
    assert.match(later.stderr, new RegExp(`Rapports prêts : ${2 * ORDERS + 3} commandes`));
    assert.equal(fs.readdirSync(snapshots).length, 1, 'one saved snapshot');

    const { key } = await cli('key', 'create', '--org', String(slug), '--name', 'Tableur');
    server = await startServer({ ...env, LOG_LEVEL: 'info' });
    const response = await fetch(
      `${server.baseUrl}/api/reports/tabular?metrics=orders,gross_sales&from=2026-01-01&to=2026-03-31`,
      { headers: { authorization: `Bearer ${String(key)}` } },
    );
    assert.equal(response.status, 200);
    const body = (await response.json()) as { rows: { orders: number; gross_sales: number }[] };
    assert.deepEqual(body.rows, [{ orders: 2 * ORDERS + 3, gross_sales: (2 * ORDERS + 3) * 10 }]);
    const events = server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.msg === 'report snapshot');
    assert.deepEqual(
      events.filter((line) => line.event === 'loaded').map((line) => line.orders),
      [2 * ORDERS + 3],
      'the file read back once, at the last batch',
    );
    const kinds = events.map((line) => line.event);
    assert.ok(!kinds.includes('built'), `nothing built from the database: ${kinds.join(', ')}`);
  });
});
