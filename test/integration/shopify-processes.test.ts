// Issue 21 over the real processes: `sales-metrics store connect --platform shopify` while
// `sales-metrics serve` runs on the same database, against the stand-in Shopify
// (test/helpers/fake-shopify.ts) over HTTPS trusted through NODE_EXTRA_CA_CERTS. The server is
// killed (SIGKILL) mid-backfill and started again: the backfill resumes at its saved cursor, and
// the figures equal those of an organization that imported the same orders with `sales-metrics import`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  assertNoSecretInDatabase,
  assertSameAsFileImport,
  secretForms,
  startStoreProcesses,
  type StoreProcesses,
} from '../helpers/connected-store.js';
import { connectionsOf } from '../../src/ingest/connectors/connections.js';
import { findOrganization } from '../../src/domain/organizations.js';
import { engine } from '../helpers/database.js';
import { FakeShopify } from '../helpers/fake-shopify.js';
import { runCli } from '../helpers/processes.js';
import {
  countedShopifyOrders,
  expectedShopifyLines,
  paced,
  SHOPIFY_SYNC_ENV,
} from '../helpers/shopify-expectations.js';
import { eventually } from '../helpers/woocommerce-expectations.js';

const ORG = 'boutique-shopify';
/** A token the shop refuses (tried at connection): it must not be kept or logged either. */
const wrongToken = `shpat_${'7'.repeat(32)}`;

interface StoreStatus {
  address: string;
  platform: string;
  phase: 'backfill' | 'incremental';
  state: string;
  orders: number;
  failures: number;
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
  /** The servers (every one started, killed ones included: their output is searched for tokens). */
  let processes: StoreProcesses;
  const cli = (...args: string[]) => processes.cli(...args);
  const list = async () => (await cli('store', 'list', '--org', ORG)).stores as StoreStatus[];
  /**
   * The store's row, read through the database as the CLI opens it: polled a few times a second
   * without starting a `sales-metrics` process each time (`store list` is asked once it holds).
   */
  const stored = paced(async () => {
    const db = await processes.database();
    return (await connectionsOf(db, (await findOrganization(db, ORG)).id))[0];
  });

  before(async () => {
    shop = await FakeShopify.start({ seed: 21 });
    processes = await startStoreProcesses({
      ca: shop.ca,
      prefix: 'sm-shopify-processes-',
      // A look at the running operation every 500 ms: it runs until a test ends it, each look
      // is a request and a write, and nothing here waits on the look's pace.
      serverEnv: { ...SHOPIFY_SYNC_ENV, SHOPIFY_BULK_POLL_MS: '500', LOG_LEVEL: 'info' },
    });
  });
  after(async () => {
    const code = await processes?.stop();
    await shop?.close();
    assert.equal(code, 0, 'the restarted server stops cleanly on SIGTERM');
  });

  test('store connect --platform shopify: the token on standard input only, checked, never shown back', async () => {
    assert.deepEqual(await cli('org', 'create', '--name', 'Boutique Shopify'), { slug: ORG });
    // Four slices of the bulk file (250 orders each): three read before the kill, one after.
    shop.addOrders(1_000);
    shop.slowDown(15);
    // Running until the second test ends it: seen gathering, and killed while it runs, however
    // long the commands take on a loaded machine.
    shop.bulkDurationMs = 600_000;
    const connect = (extra: string[], stdin?: string) =>
      processes.connect({ org: ORG, platform: 'shopify', address: shop.url }, extra, stdin);
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
    await eventually(
      'the bulk operation’s objects',
      stored,
      (c) => (c?.exportObjects ?? 0) > 0 && c?.runOrders === 0,
      30_000,
    );
    const [gathering] = await list();
    assert.ok((gathering?.backfill?.exportObjects ?? 0) > 0, 'the objects so far in store list');
    assert.equal(gathering!.backfill!.read, 0);
    assert.ok(gathering!.backfill!.exportObjects! < shop.allOrders().length * 10);
    assert.ok(gathering!.backfill!.exportObjectsPerSecond >= 0);
    const text = await runCli(['store', 'list', '--org', ORG], processes.env);
    assert.match(text.stdout, /export \d+ objets \(\d+ objets\/s\)|historique [1-9]/);
  });

  /** SIGKILL, then the server started again on the same database (its lease freed on PostgreSQL). */
  async function killAndRestart(whileDown: () => unknown = () => undefined): Promise<void> {
    assert.equal(await processes.current().kill(), null, 'killed by a signal');
    await whileDown();
    if (engine === 'postgres') {
      const db = await processes.database();
      await db.query(`UPDATE store_connections SET lease_until = now() - interval '1 second'`);
    }
    await processes.startAnother();
  }

  test('the server killed while the bulk operation still runs (no file yet) and started again: it polls the same operation, none started again', async () => {
    assert.equal(shop.bulkDownloads.length, 0, 'no file read yet');
    assert.equal(shop.bulkRuns, 1, 'one operation started');
    // Asked for once, even when an answer is too slow: the client looks before asking again
    // (bulk-start.ts), on the default API 2026-10 where a second one would start.
    const asked = shop.bulkRunQueries;
    assert.equal(asked, 1, 'one bulkOperationRunQuery');
    assert.equal(shop.bulkRunning, 1, 'the operation still RUNNING at the kill');
    const polls = () => shop.requests.filter((r) => r.body.includes('SalesMetricsBulkOperation(')).length;
    const polledBefore = polls();
    await killAndRestart();
    // The restarted server looks at the same operation while it still runs; then it completes.
    await eventually(
      'the operation polled again',
      async () => polls(),
      (n) => n > polledBefore,
      60_000,
    );
    assert.equal(shop.bulkRunning, 1, 'still running when the restarted server looked');
    shop.completeBulkOperations();
    // Each answer slower now: the fourth slice still to read when the next test kills the server.
    shop.slowDown(100);
    await eventually(
      'the same operation’s file read',
      async () => shop.bulkDownloads.length,
      (n) => n >= 3,
      60_000,
    );
    assert.equal(shop.bulkRunQueries, asked, 'no bulkOperationRunQuery after the restart');
    assert.equal(shop.bulkRuns, 1);
    assert.equal(historyCursors(shop).length, 0, 'no page-by-page walk');
    // Read from its end (issue 26: a child line comes anywhere after its order).
    const end = Number(/^bytes=\d+-(\d+)$/.exec(shop.bulkDownloads[0]?.range ?? '')?.[1]);
    assert.equal(end + 1, shop.bulkFileBytes(1), 'its file read from its last byte');
  });

  test('the server killed mid-backfill (bulk operation) and started again: the same operation resumes at its byte; the figures of a file import', async () => {
    await eventually(
      'a few slices of the bulk file read',
      async () => shop.bulkDownloads.length,
      (n) => n >= 3,
      60_000,
    );
    const slicesBefore = shop.bulkDownloads.length;
    await killAndRestart(async () => {
      shop.slowDown(0);
      // A request the killed server sent last is recorded once its slowed answer begins: let it.
      await new Promise((resolve) => setTimeout(resolve, 500));
      shop.requests.length = 0;
      shop.bulkDownloads.length = 0;
    });
    const counted = countedShopifyOrders(shop).length;
    await eventually(
      'the backfill finished',
      stored,
      (c) => c?.phase === 'incremental' && !c.running && c.orders === counted,
      120_000,
    );
    // Then as `store list` says it (once, or again if a pass of the server was running then).
    const [status] = await eventually(
      'store list: up to date',
      list,
      (s) => s[0]?.state === 'ok' && s[0].orders === counted,
    );
    assert.equal(status?.platform, 'shopify');
    assert.ok(slicesBefore >= 3);
    assert.ok(
      !shop.requests.some((r) => r.body.includes('bulkOperationRunQuery')),
      'no new bulk operation after the restart',
    );
    assert.equal(historyCursors(shop).length, 0, 'no page-by-page walk either');
    // The file is read from its end (issue 26): first its tail again, for the children of the
    // orders still to read (nothing written), then on from the position saved: no order twice.
    const end = Number(/^bytes=\d+-(\d+)$/.exec(shop.bulkDownloads[0]?.range ?? '')?.[1]);
    assert.equal(end + 1, shop.bulkFileBytes(1), 'the tail read again from the last byte');
    const [jobs] = await (
      await processes.database()
    ).query<{ imported: string; updated: string }>(
      `SELECT sum(imported) AS imported, sum(updated) AS updated FROM import_jobs WHERE origin = 'connector'`,
    );
    assert.equal(Number(jobs!.imported), counted, 'every order written once');
    assert.equal(Number(jobs!.updated), 0, 'resumed where it stopped: no order written again');
    for (const r of shop.requests) assert.ok(!r.path.includes('shpat_'), 'the token never in an address');

    await assertSameAsFileImport(processes, ORG, expectedShopifyLines(shop));
  });

  test('store sync: a deleted order is found by the sweep and stops counting', async () => {
    const deleted = countedShopifyOrders(shop)[123]!;
    shop.deleteOrder(deleted.id);
    const result = await runCli(
      ['store', 'sync', '--org', ORG, '--address', shop.url, '--json'],
      processes.env,
    );
    assert.equal(result.code, 0, result.stderr);
    await eventually(
      'the deleted order removed',
      stored,
      (c) => c?.orders === countedShopifyOrders(shop).length,
      30_000,
    );
  });

  test('store sync while the shop limits its requests (issue 26 item 2): a refill the bucket allows soon is waited for and said; a long one is handed over to the server, exit 0', async () => {
    const { bucket } = shop;
    const restoreRate = bucket.restoreRate;
    const sync = () =>
      runCli(['store', 'sync', '--org', ORG, '--address', shop.url, '--json'], processes.env);
    try {
      // An empty bucket restoring 1 point a second: a page of orders (899 points) needs 15 minutes.
      bucket.restoreRate = 1;
      shop.drainBucket();
      // The server's own pass gives up at once (its bound is a minute) and sets its next try then.
      await eventually('the server’s pass throttled', stored, (c) => (c?.failures ?? 0) >= 1, 30_000);
      const long = await sync();
      assert.equal(long.code, 0, long.stderr);
      const handed = JSON.parse(long.stdout) as { handedOver?: boolean; retryInS?: number };
      assert.equal(handed.handedOver, true);
      assert.ok((handed.retryInS ?? 0) > 300, `handed over for ${handed.retryInS} s`);
      // A bucket restoring 300 points a second: about 3 s, waited for by the throttleStatus.
      // Kept empty until the command's first query (its start-up takes seconds on a busy machine).
      bucket.restoreRate = 300;
      const seen = shop.requests.length;
      // Then the usual rate again, so that only that first wait counts (not the sweep's pages).
      const keepEmpty = setInterval(() => {
        if (shop.requests.length === seen) return shop.drainBucket();
        clearInterval(keepEmpty);
        setTimeout(() => (bucket.restoreRate = restoreRate), 200);
      }, 5);
      const started = Date.now();
      const short = await sync().finally(() => clearInterval(keepEmpty));
      assert.equal(short.code, 0, short.stderr);
      const answer = JSON.parse(short.stdout) as { waitedS?: number; error?: string };
      assert.equal(answer.error, undefined);
      // 896 points at 300 a second: 3 s, as the throttleStatus says (not a fixed minute).
      assert.ok((answer.waitedS ?? 0) >= 2 && (answer.waitedS ?? 0) <= 6, `waited ${answer.waitedS} s`);
      assert.ok(Date.now() - started < 60_000);
    } finally {
      bucket.restoreRate = restoreRate;
      bucket.available = bucket.maximum;
    }
  });

  test('no token or secret in any server’s log (info level, killed ones included), in the database, its files, or an address (issue 21)', async () => {
    const secrets = [shop.accessToken, shop.apiSecret, wrongToken];
    const logs = processes.servers.map((server) => server.output()).join('\n');
    assert.ok(logs.includes('store sync pass'), 'the log was read at info level');
    for (const form of secretForms(secrets)) assert.ok(!logs.includes(form), 'a secret in a server’s log');
    await assertNoSecretInDatabase(await processes.database(), secrets);
    // The embedded database's own files, byte for byte.
    const dataDir = processes.fresh.env.DATA_DIR;
    if (dataDir) {
      const files = fs.readdirSync(dataDir, { recursive: true, withFileTypes: true });
      for (const file of files.filter((f) => f.isFile())) {
        const bytes = fs.readFileSync(path.join(file.parentPath, file.name));
        for (const secret of secrets) assert.equal(bytes.indexOf(secret), -1, `a secret in ${file.name}`);
      }
    }
    for (const r of shop.requests)
      for (const s of secrets) assert.ok(!r.path.includes(s), 'a secret in an address');
  });
});
