// Issue 21: two `sales-metrics serve` processes on one PostgreSQL database and one Redis (as in
// production, test/integration/production.test.ts), one Shopify shop connected by the CLI: the
// store's lease lets one instance at a time read it, so one bulk operation is started, each
// slice of its file read once, one instance runs the backfill (its passes logged, never at the
// same time as the other's), a webhook delivered to the other instance is applied, and the
// figures equal those of an organization that imported the same orders from a file. PostgreSQL
// run only (the embedded database serves one server process by design).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertSameAsFileImport,
  secretForms,
  startStoreProcesses,
  type StoreProcesses,
} from '../helpers/connected-store.js';
import { findOrganization } from '../../src/domain/organizations.js';
import { connectionsOf } from '../../src/ingest/connectors/connections.js';
import { describeOn } from '../helpers/database.js';
import { FakeShopify } from '../helpers/fake-shopify.js';
import { type ServerProcess } from '../helpers/processes.js';
import { redisAvailable, startRedis, type TestRedis } from '../helpers/redis.js';
import {
  countedShopifyOrders,
  expectedShopifyLines,
  paced,
  SHOPIFY_SYNC_ENV,
} from '../helpers/shopify-expectations.js';
import { eventually } from '../helpers/woocommerce-expectations.js';

const ORG = 'shopify-deux-serveurs';

interface PassLog {
  time: number;
  ms: number;
  written: number;
  connectionId: string;
}

/** The sync passes a server logged ('store sync pass', with when it ended and how long it held the store). */
const passesOf = (server: ServerProcess): PassLog[] =>
  server
    .stdout()
    .split('\n')
    .filter((line) => line.includes('"store sync pass"'))
    .map((line) => JSON.parse(line) as PassLog);

describeOn('postgres', 'two server processes, one Shopify shop (issue 21)', () => {
  let shop: FakeShopify;
  let redis: TestRedis;
  let processes: StoreProcesses;
  const cli = (...args: string[]) => processes.cli(...args);
  /** The store's row, polled through the database (no `sales-metrics` process started each time). */
  const stored = paced(async () => {
    const db = await processes.database();
    return (await connectionsOf(db, (await findOrganization(db, ORG)).id))[0];
  });
  const list = async () =>
    (await cli('store', 'list', '--org', ORG)).stores as { state: string; orders: number }[];

  before(async () => {
    assert.ok(redisAvailable(), 'redis-server is installed');
    redis = await startRedis();
    shop = await FakeShopify.start({ seed: 51 });
    processes = await startStoreProcesses({
      ca: shop.ca,
      prefix: 'sm-shopify-instances-',
      serverEnv: {
        ...SHOPIFY_SYNC_ENV,
        REDIS_URL: redis.url,
        LOG_LEVEL: 'info', // each pass logged: which instance held the store, and when
      },
    });
    await processes.startAnother();
  });
  after(async () => {
    const code = await processes?.stop();
    await shop?.close();
    await redis?.stop();
    assert.equal(code, 0, 'the second server stops cleanly on SIGTERM');
  });

  test('the backfill by one bulk operation and one instance, each slice read once; a webhook to the other instance applied; the figures of a file import', async () => {
    assert.deepEqual(await cli('org', 'create', '--name', 'Shopify deux serveurs'), { slug: ORG });
    // Four slices of the bulk file (250 orders each): each read once, by one of the two servers.
    shop.addOrders(1_000);
    shop.bulkDurationMs = 2_000;
    shop.slowDown(5);
    const connected = await processes.connect(
      { org: ORG, platform: 'shopify', address: shop.url },
      ['--access-token-stdin', '--webhook-secret-stdin'],
      `${shop.accessToken}\n${shop.apiSecret}\n`,
    );
    assert.equal(connected.code, 0, connected.stderr);
    const { webhookUrl } = JSON.parse(connected.stdout) as { webhookUrl: string };
    const counted = countedShopifyOrders(shop).length;
    await eventually(
      'the backfill finished',
      stored,
      (c) => c?.phase === 'incremental' && !c.running && c.orders === counted,
      120_000,
    );
    // Then as `store list` says it (once, or again if a pass was running then).
    await eventually('store list: up to date', list, (s) => s[0]?.state === 'ok' && s[0].orders === counted);
    const runs = shop.requests.filter((r) => r.body.includes('bulkOperationRunQuery'));
    assert.equal(runs.length, 1, 'one bulk operation, started by one of the two servers');
    assert.ok(
      !shop.requests.some((r) => r.body.includes('SalesMetricsOrders(') && r.body.includes('"ID"')),
      'neither server fell back to the page walk (a second operation refused)',
    );
    const ranges = shop.bulkDownloads.map((d) => d.range ?? 'bytes=0-');
    assert.ok(ranges.length >= 4, `${ranges.length} slices`);
    assert.equal(new Set(ranges).size, ranges.length, `no slice read twice: ${ranges.join(' ')}`);

    // Which instance ran the backfill: the one whose passes wrote the orders; the other wrote none.
    const servers = processes.servers;
    const written = servers.map((server) => passesOf(server).reduce((sum, p) => sum + p.written, 0));
    const ran = written.findIndex((n) => n > 0);
    assert.ok(ran >= 0, 'a pass logged with the orders it wrote');
    assert.equal(
      written.filter((n) => n > 0).length,
      1,
      `one instance wrote the whole history: ${written.join(' / ')}`,
    );
    assert.ok(written[ran]! >= counted, `${written[ran]} orders written (test orders removed included)`);
    const db = await processes.database();
    const [jobs] = await db.query<{ imported: string; updated: string }>(
      `SELECT sum(imported) AS imported, sum(updated) AS updated FROM import_jobs WHERE origin = 'connector'`,
    );
    assert.deepEqual([Number(jobs!.imported), Number(jobs!.updated)], [counted, 0], 'no order written twice');
    // The lease: no pass of one instance while a pass of the other held the store.
    const [a, b] = servers.map((server) => passesOf(server).map((p) => [p.time - p.ms, p.time] as const));
    for (const [startA, endA] of a!)
      for (const [startB, endB] of b!)
        assert.ok(endA <= startB + 50 || endB <= startA + 50, 'two passes at once');

    // A deletion delivered to the other instance (after the first sweep: only the webhook finds it).
    await eventually(
      'the first deletion sweep done',
      () => db.query<{ swept: boolean }>('SELECT swept_at IS NOT NULL AS swept FROM store_connections'),
      (rows) => rows[0]?.swept === true,
      30_000,
    );
    const other = servers[1 - ran]!;
    const deleted = countedShopifyOrders(shop)[42]!;
    shop.deleteOrder(deleted.id);
    const delivery = await shop.deliver(`${other.baseUrl}${webhookUrl}`, 'orders/delete', deleted.id);
    assert.equal(delivery.status, 202, delivery.body);
    await eventually('the deleted order removed', stored, (c) => c?.orders === counted - 1, 30_000);

    // Neither server logged the token or the app's secret (the webhook's key), even at info level.
    for (const server of servers)
      for (const form of secretForms([shop.accessToken, shop.apiSecret]))
        assert.ok(!server.output().includes(form), 'a secret in a server’s log');

    // Each server answers the same as the file import (the other one's reads included).
    await assertSameAsFileImport(processes, ORG, expectedShopifyLines(shop), processes.servers);
  });
});
