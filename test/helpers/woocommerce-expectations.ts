// What the connector should have made of a stand-in store's orders, computed apart from the
// connector's code, from the "WooCommerce field by field" table of docs/connectors.md: the import lines a
// person would write by hand for the same orders, and helpers to compare the API's answers for a
// synced organization and for one that imported those lines from a file.
import assert from 'node:assert/strict';
import type { FakeWooCommerce } from './fake-woocommerce.js';
import type { TestService } from './service.js';

/** Fast knobs for tests: a worker that looks every 100 ms, retries after 20 ms, syncs every second. */
export const FAST_SYNC_ENV = {
  STORE_ALLOW_PRIVATE: '1',
  STORE_SYNC_POLL_MS: '100',
  STORE_RETRY_BASE_MS: '20',
  STORE_HTTP_TIMEOUT_MS: '3000',
  STORE_SYNC_INTERVAL_S: '1',
};

const centsOf = (text: string | number): number => Math.round(Number(text) * 100);
const money = (cents: number): string => (cents / 100).toFixed(2);

/**
 * The import line of each order the store still counts (trashed ones are not orders any more),
 * in the organization's currency (EUR here: an order in another one is left out and reported).
 */
export function expectedLines(store: FakeWooCommerce): Record<string, unknown>[] {
  return countedOrders(store).map((order) => {
    const refunds = store.refundsOf(order.id);
    let refunded = 0;
    let refundTax = 0;
    let refundShipping = 0;
    for (const refund of refunds) {
      refunded += centsOf(refund.amount);
      const shippingLines =
        (refund as { shipping_lines?: { total: string; total_tax: string }[] }).shipping_lines ?? [];
      const feeLines = (refund as { fee_lines?: { total_tax: string }[] }).fee_lines ?? [];
      for (const line of [...refund.line_items, ...shippingLines, ...feeLines])
        refundTax += Math.abs(centsOf(line.total_tax));
      for (const line of shippingLines) refundShipping += Math.abs(centsOf(line.total));
    }
    refundShipping = Math.min(refundShipping, refunded);
    refundTax = Math.min(refundTax, refunded - refundShipping);
    const fees = order.fee_lines.reduce((sum, fee) => sum + centsOf(fee.total), 0);
    return {
      store: store.url,
      id: String(order.id),
      created_at: `${order.date_created_gmt}Z`,
      status: order.status,
      billing_country: order.billing.country,
      customer_email: order.billing.email,
      items: order.line_items.reduce((sum, item) => sum + item.quantity, 0),
      total: order.total,
      tax_total: order.total_tax,
      shipping_total: order.shipping_total,
      fee_total: money(Math.max(0, fees)),
      refund_total: money(refunded),
      refund_tax: money(refundTax),
      refund_shipping: money(refundShipping),
      lines: expectedOrderLines(store, order, refunds),
    };
  });
}

const decodeEntities = (name: string): string =>
  name
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#039;', "'")
    .replaceAll('&amp;', '&');

type Order = ReturnType<FakeWooCommerce['allOrders']>[number];
type Refund = ReturnType<FakeWooCommerce['refundsOf']>[number];

/**
 * SPEC section 15 as docs/connectors.md maps WooCommerce: one line per line item (variation 0 is
 * no variant; subtotal − total is the discount, taxes excluded), refunded by the refunds' line
 * items that name it in _refunded_item_id, categories from the product's, entities decoded.
 */
function expectedOrderLines(
  store: FakeWooCommerce,
  order: Order,
  refunds: Refund[],
): Record<string, unknown>[] {
  return order.line_items.map((item) => {
    let [refundedQuantity, refunded] = [0, 0];
    for (const refund of refunds)
      for (const line of refund.line_items)
        if (
          line.meta_data.some((m) => m.key === '_refunded_item_id' && String(m.value) === String(item.id))
        ) {
          refundedQuantity += Math.abs(line.quantity);
          refunded += Math.abs(centsOf(line.total));
        }
    const subtotal = centsOf(item.subtotal);
    const discount = subtotal - centsOf(item.total);
    const variation = item.variation_id !== 0;
    const productName = variation && item.parent_name ? item.parent_name : item.name;
    const categories = [
      ...new Set((store.product(item.product_id)?.categories ?? []).map(([, n]) => decodeEntities(n))),
    ];
    return {
      line_id: String(item.id),
      ...(item.product_id ? { product_id: String(item.product_id) } : {}),
      ...(variation ? { variant_id: String(item.variation_id) } : {}),
      ...(item.sku ? { sku: item.sku } : {}),
      product_name: productName,
      ...(variation && item.name.startsWith(`${productName} - `)
        ? { variant_name: item.name.slice(productName.length + 3) }
        : {}),
      categories: item.product_id ? categories : [],
      quantity: item.quantity,
      subtotal: money(subtotal),
      discount: money(discount),
      refunded_quantity: Math.min(refundedQuantity, item.quantity),
      refunded_amount: money(Math.min(refunded, subtotal - discount)),
    };
  });
}

export const countedOrders = (store: FakeWooCommerce) =>
  store.allOrders().filter((o) => o.currency === 'EUR');

const ALL_METRICS =
  'orders,items_sold,gross_sales,net_revenue,average_order_value,taxes,shipping,unique_customers,new_customers,returning_customers';

/** Questions asked of both organizations: every metric, split every way, over the whole history. */
export const QUESTIONS = [
  `metrics=${ALL_METRICS}&from=2023-01-01&to=2026-12-31`,
  `metrics=${ALL_METRICS}&dimensions=date&from=2023-01-01&to=2026-12-31`,
  `metrics=${ALL_METRICS}&dimensions=store,country,customer_type,status&from=2023-01-01&to=2026-12-31`,
  `metrics=orders,net_revenue,new_customers&dimensions=customer_type&from=2026-01-01&to=2026-12-31&timezone=Europe/Paris`,
];

let round = 0;

/**
 * The API's answers for one key. Each call asks with a limit of its own, so that no answer comes
 * from the one-minute cache (C1) filled by an earlier call.
 */
export async function answers(
  service: Pick<TestService, 'get'>,
  key: string,
  variant?: number,
): Promise<unknown[]> {
  const limit = 100_000 - (variant ?? ++round);
  const bodies: unknown[] = [];
  for (const question of QUESTIONS) {
    const response = await service.get(`/api/reports/tabular?${question}&limit=${limit}`, key);
    assert.equal(response.status, 200, question);
    const body = (await response.json()) as { rows: unknown[]; totals?: unknown; rowCount?: number };
    bodies.push({ rows: body.rows, totals: body.totals ?? null, rowCount: body.rowCount ?? null });
  }
  return bodies;
}

/** Fails with the first row that differs, not two unreadable arrays. */
export function assertSameAnswers(actual: unknown[], expected: unknown[]): void {
  for (const [i, body] of expected.entries()) {
    const a = actual[i] as { rows: unknown[] };
    const e = body as { rows: unknown[] };
    for (const [j, row] of e.rows.entries()) assert.deepEqual(a.rows[j], row, `question ${i}, row ${j}`);
    assert.deepEqual(a, e, `question ${i}`);
  }
  assert.equal(actual.length, expected.length);
}

const NOT_READ: unique symbol = Symbol('not read');

/**
 * Polls until `ready` holds (or fails after timeoutMs, with the last value seen). A read the
 * database refuses for a moment (SERVICE_BUSY: every connection of the pool taken by the sync
 * workers of a busy machine, "réessayez dans quelques secondes") is tried again at the next poll.
 */
export async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  ready: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const tryRead = (): Promise<T | typeof NOT_READ> =>
    read().catch((error: unknown) => {
      if ((error as { code?: unknown }).code !== 'SERVICE_BUSY' || Date.now() > deadline) throw error;
      return NOT_READ;
    });
  let value = await tryRead();
  while (value === NOT_READ || !ready(value)) {
    if (Date.now() > deadline)
      assert.fail(
        `${what}: not reached in ${timeoutMs} ms (last: ${String(JSON.stringify(value, (k, v: unknown) => (k === 'credentials' || k === 'webhookSecret' ? undefined : v))).slice(0, 800)})`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await tryRead();
  }
  return value as T;
}
