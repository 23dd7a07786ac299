// Issue 26 item 1: a bulk operation's file as Shopify writes it on API 2026-10, not grouped (a
// child line somewhere after its order, among other orders and their children; one in eight at
// the very end), read by the connector's own history walk against the stand-in over real HTTPS.
// Every order's items (the sum of its line items' quantities) and, for tax-inclusive shops, its
// shipping without the shipping lines' taxes must come out exactly as the README's table says
// (S1–S3, SPEC 12), read in one go, after a restart between two slices (the children carried
// from one slice to the next gathered again), and on a grouped file (API 2025-10). No database
// here: the engines are covered by shopify-connector and shopify-processes, which import the
// same walk's pages.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { OrdersPage, StoreApi } from '../../src/ingest/connectors/connector.js';
import { DEFAULT_RETRY } from '../../src/ingest/connectors/polite-get.js';
import { shopifyConnector } from '../../src/ingest/connectors/shopify/shopify.js';
import { FakeShopify } from '../helpers/fake-shopify.js';
import { expectedShopifyLines } from '../helpers/shopify-expectations.js';

const retry = { ...DEFAULT_RETRY, baseDelayMs: 5 };

describe('a bulk file not grouped (API 2026-01 and later): every order whole (issue 26 item 1)', () => {
  let shop: FakeShopify;
  let certificate: { key: string; cert: string };
  before(async () => {
    certificate = await FakeShopify.generateCertificate();
    shop = await FakeShopify.start({ seed: 26, certificate });
    shop.bulkDurationMs = 50;
    // Three slices and more (250 orders each); tax-inclusive orders with many taxed shipping lines.
    shop.addOrders(640);
    for (let i = 0; i < 4; i++) shop.addOrderWithManyParts({ refunds: 0, shippingLines: 6 + i });
  });
  after(() => shop?.close());

  /** The connector's API on `address` (another name of the same shop: a fresh process's view). */
  const open = (version: string, of = shop, address = of.url): StoreApi =>
    shopifyConnector(version, retry).open(
      new URL(address),
      { key: '', secret: of.accessToken },
      { allowPrivate: true, ca: of.ca },
      'EUR',
    );

  /** History pages from `cursor` until `stop` says so or the walk ends; the orders read, by id. */
  async function walk(api: StoreApi, cursor: string | undefined, stop = (_: OrdersPage) => false) {
    const lines = new Map<string, Record<string, unknown>>();
    let next = cursor;
    for (let pages = 0; pages < 200; pages++) {
      const page = await api.history(next);
      for (const line of page.orders) lines.set(line.id, line);
      next = page.next;
      if (next === undefined || stop(page)) break;
    }
    return { lines, next };
  }

  const expected = (of: FakeShopify) =>
    new Map(expectedShopifyLines(of).map(({ store: _store, ...line }) => [String(line.id), line]));

  function assertExact(lines: Map<string, Record<string, unknown>>, of = shop): void {
    const wanted = expected(of);
    assert.equal(lines.size, wanted.size, 'every counted order read once');
    let items = 0;
    for (const [id, line] of wanted) {
      assert.deepEqual(lines.get(id), line, `order ${id}`);
      items += Number(line.items);
    }
    assert.ok(items > wanted.size, 'orders of several line items');
  }

  test('API 2026-10: the file is not grouped, and every order’s items and shipping come out exact', async () => {
    const downloads = shop.bulkDownloads.length;
    const { lines, next } = await walk(open('2026-10'), undefined);
    assert.equal(next, undefined);
    assertExact(lines);
    assert.ok(shop.bulkDownloads.length - downloads >= 3, 'read in slices, by byte ranges');
    assert.equal(shop.bulkFileGrouped(shop.bulkRuns), false, 'the stand-in wrote it ungrouped');
  });

  test('a restart between two slices (the carried children lost): gathered again from the file’s tail, the figures exact', async () => {
    const first = await walk(open('2026-10'), undefined, (page) => page.orders.length > 0);
    assert.match(first.next ?? '', /^bulk:gid:\/\/shopify\/BulkOperation\/\d+:to:\d+$/);
    assert.ok(first.lines.size > 0 && first.lines.size < 300, 'one slice read before the restart');
    // The same shop by its address 127.0.0.1: nothing this process carried applies to it.
    const rest = await walk(open('2026-10', shop, shop.url.replace('localhost', '127.0.0.1')), first.next);
    assert.equal(rest.next, undefined);
    assertExact(new Map([...first.lines, ...rest.lines]));
  });

  test('API 2025-10: the file grouped (Shopify’s default then), read the same way, the same figures', async () => {
    // A shop of its own: on the first one, this connector's completed operation would be adopted.
    const older = await FakeShopify.start({ seed: 27, certificate });
    try {
      older.bulkDurationMs = 50;
      older.addOrders(120);
      const { lines } = await walk(open('2025-10', older), undefined);
      assertExact(lines, older);
      assert.equal(older.bulkFileGrouped(older.bulkRuns), true);
    } finally {
      await older.close();
    }
  });
});
