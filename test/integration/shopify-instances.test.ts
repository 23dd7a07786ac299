// Issue 21: two `sales-metrics serve` processes on one PostgreSQL database and one Redis (as in
// production, test/integration/production.test.ts), one Shopify shop connected by the CLI: the
// store's lease lets one instance at a time read it, so one bulk operation is started, each
// slice of its file read once, and the figures equal those of an
// organization that imported the same orders from a file. PostgreSQL run only (the embedded
// database serves one server process by design).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeOn } from '../helpers/database.js';
import { FakeShopify } from '../helpers/fake-shopify.js';
import {
  runCli,
  startServer,
  startServerOnFreshDatabase,
  type FreshServer,
  type ServerProcess,
} from '../helpers/processes.js';
import { redisAvailable, startRedis, type TestRedis } from '../helpers/redis.js';
import { countedShopifyOrders, expectedShopifyLines } from '../helpers/shopify-expectations.js';
import {
  answers,
  assertSameAnswers,
  eventually,
  FAST_SYNC_ENV,
} from '../helpers/woocommerce-expectations.js';

const ORG = 'shopify-deux-serveurs';

describeOn('postgres', 'two server processes, one Shopify shop (issue 21)', () => {
  let shop: FakeShopify;
  let redis: TestRedis;
  let first: FreshServer;
  let second: ServerProcess | undefined;
  let dir: string;
  let env: Record<string, string>;

  const cli = async (...args: string[]) => {
    const result = await runCli([...args, '--json'], env);
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };

  before(async () => {
    assert.ok(redisAvailable(), 'redis-server is installed');
    redis = await startRedis();
    shop = await FakeShopify.start({ seed: 51 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-shopify-instances-'));
    const caFile = path.join(dir, 'stand-in-ca.pem');
    fs.writeFileSync(caFile, shop.ca);
    const serverEnv = { ...FAST_SYNC_ENV, NODE_EXTRA_CA_CERTS: caFile, REDIS_URL: redis.url };
    first = await startServerOnFreshDatabase(serverEnv);
    env = { ...first.env, ...serverEnv };
    second = await startServer(env);
  });
  after(async () => {
    const code = (await second?.stop()) ?? 0;
    await first?.stop();
    await shop?.close();
    await redis?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, 'the second server stops cleanly on SIGTERM');
  });

  test('the backfill by one bulk operation, each slice read once; the figures of a file import', async () => {
    assert.deepEqual(await cli('org', 'create', '--name', 'Shopify deux serveurs'), { slug: ORG });
    shop.addOrders(2_500);
    shop.bulkDurationMs = 2_000;
    shop.slowDown(5);
    const connected = await runCli(
      [
        'store',
        'connect',
        '--org',
        ORG,
        '--platform',
        'shopify',
        '--address',
        shop.url,
        '--access-token-stdin',
      ],
      env,
      `${shop.accessToken}\n`,
    );
    assert.equal(connected.code, 0, connected.stderr);
    const counted = countedShopifyOrders(shop).length;
    await eventually(
      'the backfill finished',
      async () => (await cli('store', 'list', '--org', ORG)).stores as { state: string; orders: number }[],
      (s) => s[0]?.state === 'ok' && s[0].orders === counted,
      120_000,
    );
    const runs = shop.requests.filter((r) => r.body.includes('bulkOperationRunQuery'));
    assert.equal(runs.length, 1, 'one bulk operation, started by one of the two servers');
    assert.ok(
      !shop.requests.some((r) => r.body.includes('SalesMetricsOrders(') && r.body.includes('"ID"')),
      'neither server fell back to the page walk (a second operation refused)',
    );
    const ranges = shop.bulkDownloads.map((d) => d.range ?? 'bytes=0-');
    assert.ok(ranges.length >= 8, `${ranges.length} slices`);
    assert.equal(new Set(ranges).size, ranges.length, `no slice read twice: ${ranges.join(' ')}`);

    const { slug: twin } = await cli('org', 'create', '--name', 'Import Shopify deux');
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
    // Each server answers the same as the file import (the other one's reads included).
    for (const baseUrl of [first.server.baseUrl, second!.baseUrl]) {
      const service = {
        get: (query: string, key?: string) =>
          fetch(`${baseUrl}${query}`, { headers: key ? { authorization: `Bearer ${key}` } : {} }),
      };
      assertSameAnswers(await answers(service, synced), await answers(service, imported));
    }
  });
});
