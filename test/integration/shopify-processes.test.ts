// Issue 21 over the real processes: `sales-metrics store connect --platform shopify` while
// `sales-metrics serve` runs on the same database, against the stand-in Shopify
// (test/helpers/fake-shopify.ts) over HTTPS trusted through NODE_EXTRA_CA_CERTS. The server is
// killed (SIGKILL) mid-backfill and started again: the backfill resumes at its saved cursor, and
// the figures equal those of an organization that imported the same orders with `sales-metrics import`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { engine } from '../helpers/database.js';
import { FakeShopify } from '../helpers/fake-shopify.js';
import {
  runCli,
  startServer,
  startServerOnFreshDatabase,
  type FreshServer,
  type ServerProcess,
} from '../helpers/processes.js';
import { countedShopifyOrders, expectedShopifyLines } from '../helpers/shopify-expectations.js';
import {
  answers,
  assertSameAnswers,
  eventually,
  FAST_SYNC_ENV,
} from '../helpers/woocommerce-expectations.js';

const ORG = 'boutique-shopify';
/** A token the shop refuses (tried at connection): it must not be kept or logged either. */
const wrongToken = `shpat_${'7'.repeat(32)}`;

interface StoreStatus {
  address: string;
  platform: string;
  phase: 'backfill' | 'incremental';
  state: string;
  orders: number;
  backfill: {
    read: number;
    estimatedTotal: number | null;
    exportObjects: number | null;
    exportObjectsPerSecond: number;
  } | null;
}

/** The `after` of each history page asked for (orders sorted by ID), in order. */
const historyCursors = (shop: FakeShopify): (string | null)[] =>
  shop.requests
    .filter((r) => r.path.endsWith('/graphql.json') && r.body.includes('SalesMetricsOrders('))
    .map((r) => JSON.parse(r.body) as { variables: { sortKey?: string; after?: string | null } })
    .filter((r) => r.variables.sortKey === 'ID')
    .map((r) => r.variables.after ?? null);

describe('sales-metrics store … with a Shopify shop, over the real processes (issue 21)', () => {
  let shop: FakeShopify;
  let fresh: FreshServer;
  let restarted: ServerProcess | undefined;
  /** Every server process started, killed ones included: their whole output is searched for tokens. */
  const servers: ServerProcess[] = [];
  let db: Database | undefined;
  let dir: string;
  let serverEnv: Record<string, string>;
  let env: Record<string, string>;

  const cli = async (...args: string[]) => {
    const result = await runCli([...args, '--json'], env);
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const list = async () => (await cli('store', 'list', '--org', ORG)).stores as StoreStatus[];
  const baseUrl = () => (restarted ?? fresh.server).baseUrl;
  const get = (query: string, key?: string) =>
    fetch(`${baseUrl()}${query}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

  before(async () => {
    shop = await FakeShopify.start({ seed: 21 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-shopify-processes-'));
    const caFile = path.join(dir, 'stand-in-ca.pem');
    fs.writeFileSync(caFile, shop.ca);
    serverEnv = { ...FAST_SYNC_ENV, NODE_EXTRA_CA_CERTS: caFile, LOG_LEVEL: 'info' };
    fresh = await startServerOnFreshDatabase(serverEnv);
    servers.push(fresh.server);
    env = { ...fresh.env, ...FAST_SYNC_ENV, NODE_EXTRA_CA_CERTS: caFile };
  });
  after(async () => {
    await db?.close();
    const code = restarted ? await restarted.stop() : 0;
    await fresh?.stop();
    await shop?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, 'the restarted server stops cleanly on SIGTERM');
  });

  test('store connect --platform shopify: the token on standard input only, checked, never shown back', async () => {
    assert.deepEqual(await cli('org', 'create', '--name', 'Boutique Shopify'), { slug: ORG });
    shop.addOrders(3_000);
    shop.slowDown(15);
    shop.bulkDurationMs = 8_000; // long enough to be seen gathering
    const connect = (extra: string[], stdin?: string) =>
      runCli(
        [
          'store',
          'connect',
          '--org',
          ORG,
          '--platform',
          'shopify',
          '--address',
          shop.url,
          ...extra,
          '--json',
        ],
        env,
        stdin,
      );
    const noStdin = await connect([], `${shop.accessToken}\n`);
    assert.equal(noStdin.code, 1);
    assert.match(noStdin.stderr, /jeton d’accès.*entrée standard.*--access-token-stdin/);
    const wrong = await connect(['--access-token-stdin'], `${wrongToken}\n`);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /Jeton refusé par la boutique Shopify localhost:\d+ \(401\)/);
    assert.ok(!wrong.stderr.includes(wrongToken));
    assert.deepEqual(await list(), [], 'nothing saved after the refusals');

    const connected = await connect(
      ['--access-token-stdin', '--webhook-secret-stdin'],
      `${shop.accessToken}\n${shop.apiSecret}\n`,
    );
    assert.equal(connected.code, 0, connected.stderr);
    const answer = JSON.parse(connected.stdout) as Record<string, string>;
    assert.deepEqual(Object.keys(answer).sort(), ['address', 'webhookUrl'], 'no secret shown');
    assert.match(answer.webhookUrl ?? '', /^\/webhooks\/shopify\/[0-9a-f-]{36}$/);
    const output = connected.stdout + connected.stderr;
    assert.ok(!output.includes(shop.accessToken) && !output.includes(shop.apiSecret));
    // While the bulk operation gathers the history (no order read yet): its objects so far.
    const [gathering] = await eventually(
      'the bulk operation’s objects in store list',
      list,
      (s) => (s[0]?.backfill?.exportObjects ?? 0) > 0 && s[0]?.backfill?.read === 0,
      30_000,
    );
    assert.ok(gathering!.backfill!.exportObjects! < shop.allOrders().length * 10);
    assert.ok(gathering!.backfill!.exportObjectsPerSecond >= 0);
    const text = await runCli(['store', 'list', '--org', ORG], env);
    assert.match(text.stdout, /export \d+ objets \(\d+ objets\/s\)|historique [1-9]/);
  });

  /** SIGKILL, then the server started again on the same database (its lease freed on PostgreSQL). */
  async function killAndRestart(whileDown: () => void = () => undefined): Promise<void> {
    assert.equal(await (restarted ?? fresh.server).kill(), null, 'killed by a signal');
    whileDown();
    if (engine === 'postgres') {
      db ??= await openDatabase(loadConfig({ ...fresh.env }), { role: 'cli' });
      await db.query(`UPDATE store_connections SET lease_until = now() - interval '1 second'`);
    }
    restarted = await startServer({ ...fresh.env, ...serverEnv });
    servers.push(restarted);
  }

  test('the server killed while the bulk operation still runs (no file yet) and started again: it polls the same operation, none started again', async () => {
    assert.equal(shop.bulkDownloads.length, 0, 'the operation still gathering');
    assert.equal(shop.bulkRunQueries, 1);
    await killAndRestart();
    await eventually(
      'the same operation’s file read',
      async () => shop.bulkDownloads.length,
      (n) => n >= 3,
      60_000,
    );
    assert.equal(shop.bulkRunQueries, 1, 'no second bulkOperationRunQuery after the restart');
    assert.equal(shop.bulkRuns, 1);
    assert.equal(historyCursors(shop).length, 0, 'no page-by-page walk');
    assert.equal(shop.bulkDownloads[0]?.range, undefined, 'its file read from the start');
  });

  test('the server killed mid-backfill (bulk operation) and started again: the same operation resumes at its byte; the figures of a file import', async () => {
    await eventually(
      'a few slices of the bulk file read',
      async () => shop.bulkDownloads.length,
      (n) => n >= 3,
      60_000,
    );
    const slicesBefore = shop.bulkDownloads.length;
    await killAndRestart(() => {
      shop.requests.length = 0;
      shop.bulkDownloads.length = 0;
      shop.slowDown(0);
    });
    db ??= await openDatabase(loadConfig({ ...fresh.env }), { role: 'cli' });
    const counted = countedShopifyOrders(shop).length;
    const [status] = await eventually(
      'the backfill finished',
      list,
      (s) => s[0]?.state === 'ok' && s[0].orders === counted,
      120_000,
    );
    assert.equal(status?.platform, 'shopify');
    assert.ok(slicesBefore >= 3);
    assert.ok(
      !shop.requests.some((r) => r.body.includes('bulkOperationRunQuery')),
      'no new bulk operation after the restart',
    );
    assert.equal(historyCursors(shop).length, 0, 'no page-by-page walk either');
    const first = shop.bulkDownloads[0]?.range ?? '';
    assert.match(first, /^bytes=[1-9]\d*-$/, 'the file read again from the byte saved, not from the start');
    for (const r of shop.requests) assert.ok(!r.path.includes('shpat_'), 'the token never in an address');

    const { slug: twin } = await cli('org', 'create', '--name', 'Import Shopify');
    const file = path.join(dir, 'commandes.ndjson');
    const lines = expectedShopifyLines(shop);
    fs.writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    assert.deepEqual(await cli('import', '--org', String(twin), file), {
      imported: lines.length,
      updated: 0,
      rejected: 0,
    });
    const synced = String((await cli('key', 'create', '--org', ORG, '--name', 'comparaison')).key);
    const imported = String((await cli('key', 'create', '--org', String(twin), '--name', 'comparaison')).key);
    const service = { get: (p: string, key?: string) => get(p, key) };
    assertSameAnswers(await answers(service, synced), await answers(service, imported));
  });

  test('store sync: a deleted order is found by the sweep and stops counting', async () => {
    const deleted = countedShopifyOrders(shop)[123]!;
    shop.deleteOrder(deleted.id);
    const result = await runCli(['store', 'sync', '--org', ORG, '--address', shop.url, '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    await eventually(
      'the deleted order removed',
      list,
      (s) => s[0]?.orders === countedShopifyOrders(shop).length,
      30_000,
    );
  });

  test('no token or secret in any server’s log (info level, killed ones included), in the database, its files, or an address (issue 21)', async () => {
    const secrets = [shop.accessToken, shop.apiSecret, wrongToken];
    const forms = secrets.flatMap((s) => [
      s,
      Buffer.from(s).toString('hex'),
      Buffer.from(s).toString('base64'),
    ]);
    const logs = servers.map((server) => server.output()).join('\n');
    assert.ok(logs.includes('store sync pass'), 'the log was read at info level');
    for (const form of forms) assert.ok(!logs.includes(form), 'a secret in a server’s log');
    // The database as a dump: every row of every table, as text (bytea as hex).
    const database = (db ??= await openDatabase(loadConfig({ ...fresh.env }), { role: 'cli' }));
    const tables = await database.query<{ name: string }>(
      `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name
       FROM information_schema.tables
       WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    assert.ok(tables.some((t) => t.name.endsWith('store_connections')));
    for (const { name } of tables) {
      const rows = await database.query<{ text: string | null }>(
        `SELECT string_agg(t::text, E'\\n') AS text FROM ${name} t`,
      );
      const dump = rows[0]?.text ?? '';
      for (const form of forms) assert.ok(!dump.includes(form), `a secret in ${name}`);
    }
    // The embedded database's own files, byte for byte.
    if (fresh.env.DATA_DIR) {
      const files = fs.readdirSync(fresh.env.DATA_DIR, { recursive: true, withFileTypes: true });
      for (const file of files.filter((f) => f.isFile())) {
        const bytes = fs.readFileSync(path.join(file.parentPath, file.name));
        for (const secret of secrets) assert.equal(bytes.indexOf(secret), -1, `a secret in ${file.name}`);
      }
    }
    for (const r of shop.requests)
      for (const s of secrets) assert.ok(!r.path.includes(s), 'a secret in an address');
  });
});
