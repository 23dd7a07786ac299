// What the Shopify connector should have made of a stand-in shop's orders (issue 21), computed
// apart from the connector's code, from the README's "Shopify field by field" table: the import
// lines a person would write by hand for the same orders (test orders left out).
import assert from 'node:assert/strict';
import type { TestService } from './service.js';
import { FAST_SYNC_ENV } from './woocommerce-expectations.js';
import { lineItemId, orderTotals, type FakeShopify, type FakeShopifyOrder } from './fake-shopify.js';

const money = (cents: number): string => (cents / 100).toFixed(2);

export const countedShopifyOrders = (shop: FakeShopify): FakeShopifyOrder[] =>
  shop.allOrders().filter((o) => !o.test && o.currency === 'EUR');

export function expectedShopifyLines(shop: FakeShopify, store = shop.url): Record<string, unknown>[] {
  return countedShopifyOrders(shop).map((order) => {
    const totals = orderTotals(order);
    let refundTax = 0;
    let refundShipping = 0;
    for (const refund of order.refunds) {
      for (const line of refund.lines) refundTax += line.taxCents;
      for (const line of refund.shipping) {
        refundTax += line.taxCents;
        refundShipping += line.subtotalCents;
      }
    }
    refundShipping = Math.min(refundShipping, totals.refunded);
    refundTax = Math.min(refundTax, totals.refunded - refundShipping);
    return {
      store,
      id: String(order.id),
      created_at: order.processedAt.toISOString(),
      status: order.cancelledAt ? 'cancelled' : (order.financialStatus ?? 'pending').toLowerCase(),
      billing_country: order.country,
      customer_email: order.email,
      items: order.lines.reduce((sum, line) => sum + line.quantity, 0),
      total: money(totals.total),
      tax_total: money(totals.tax),
      shipping_total: money(totals.shipping - (order.taxesIncluded ? totals.shippingTax : 0)),
      fee_total: money((order.dutiesCents ?? 0) + (order.feesCents ?? 0)),
      refund_total: money(totals.refunded),
      refund_tax: money(refundTax),
      refund_shipping: money(refundShipping),
      lines: expectedShopifyOrderLines(order),
    };
  });
}

/**
 * SPEC section 15 as docs/connectors.md maps Shopify, in cents: a line per line item, taxes
 * excluded. A shop whose prices include taxes: the net paid less its tax is exact, and the tax is
 * split between subtotal and discount in proportion (subtotal = original × net ÷ paid, rounded).
 */
export function expectedShopifyOrderLines(order: FakeShopifyOrder): Record<string, unknown>[] {
  return order.lines.map((line, i) => {
    const original = line.quantity * line.unitCents;
    const discounted = line.discountCents ?? 0;
    const paid = original - discounted;
    const net = paid - line.taxCents;
    const subtotal = order.taxesIncluded ? Math.round((original * net) / paid) : original;
    const discount = order.taxesIncluded ? subtotal - net : discounted;
    let [refundedQuantity, refunded] = [0, 0];
    for (const refund of order.refunds)
      for (const back of refund.lines.filter((l) => l.line === i)) {
        refundedQuantity += back.quantity;
        refunded += back.subtotalCents - (order.taxesIncluded ? back.taxCents : 0);
      }
    const title = line.product?.title ?? `Article ${i + 1}`;
    return {
      line_id: String(lineItemId(order.id, i)),
      ...(line.product ? { product_id: String(line.product.id) } : {}),
      ...(line.variant ? { variant_id: String(line.variant.id) } : {}),
      ...(line.sku ? { sku: line.sku } : {}),
      product_name: title,
      ...(line.variant ? { variant_name: line.variant.title } : {}),
      categories: line.product?.productType ? [line.product.productType] : [],
      quantity: line.quantity,
      subtotal: money(subtotal),
      discount: money(discount),
      refunded_quantity: Math.min(refundedQuantity, line.quantity),
      refunded_amount: money(Math.min(refunded, subtotal - discount)),
    };
  });
}

/** Product net sales (L3) by product name, in cents, over the orders S1 counts: Σ subtotal − discount − refunded. */
export function productNetSales(shop: FakeShopify): Map<string, number> {
  const byProduct = new Map<string, number>();
  // S1's default excluded statuses: pending (none given counts as pending) and cancelled.
  const counted = countedShopifyOrders(shop).filter(
    (o) => !o.cancelledAt && o.financialStatus !== null && o.financialStatus !== 'PENDING',
  );
  for (const order of counted)
    for (const line of expectedShopifyOrderLines(order)) {
      const name = String(line.product_name);
      const net = [line.subtotal, line.discount, line.refunded_amount].map((v) =>
        Math.round(Number(v) * 100),
      );
      byProduct.set(name, (byProduct.get(name) ?? 0) + net[0]! - net[1]! - net[2]!);
    }
  return byProduct;
}

const LINE_METRICS =
  'orders,units_sold,units_refunded,product_gross_sales,product_discounts,product_refunds,product_net_sales';
let lineRound = 0;

/**
 * The section 15 answer by product, variant, SKU and category over the stand-in's history
 * (2024 to now), in two periods: a period is at most two years (the API answers with its `from`).
 */
async function lineRows(service: Pick<TestService, 'get'>, key: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const period of ['from=2024-01-01&to=2025-12-31', 'from=2026-01-01&to=2026-12-31']) {
    // A limit of its own each call: no answer from the one-minute cache (C1).
    const limit = 90_000 - ++lineRound;
    const question = `metrics=${LINE_METRICS}&dimensions=product,variant,sku,category&${period}&limit=${limit}`;
    const response = await service.get(`/api/reports/tabular?${question}`, key);
    assert.equal(response.status, 200, await response.clone().text());
    const body = (await response.json()) as { from: string; rows: Record<string, unknown>[] };
    assert.equal(body.from, period.slice(5, 15));
    rows.push(...body.rows);
  }
  return rows;
}

/**
 * L1–L5: the synced organization's line rows equal those of its twin (the same orders imported
 * from a file), and product net sales by product equal the stand-in's own figures, to the cent.
 */
export async function assertSameProductFigures(
  service: Pick<TestService, 'get'>,
  key: string,
  twinKey: string,
  shop: FakeShopify,
): Promise<void> {
  const synced = await lineRows(service, key);
  assert.deepEqual(synced, await lineRows(service, twinKey));
  const byProduct = new Map<string, number>();
  for (const row of synced) {
    const name = String(row.product);
    byProduct.set(name, (byProduct.get(name) ?? 0) + Math.round(Number(row.product_net_sales) * 100));
  }
  assert.deepEqual(byProduct, productNetSales(shop));
}

/**
 * FAST_SYNC_ENV, with a look at a running bulk operation every 200 ms instead of every second
 * (SHOPIFY_BULK_POLL_MS: the tests' operations run for a second or two, not minutes), and a look
 * for due stores every 500 ms instead of 100: each look is a query (about 8 ms of CPU on the
 * embedded database) that every instance makes all the time, while a pass that ends starts the
 * next one at once and a webhook wakes its instance, so only a timed pass waits for it.
 */
export const SHOPIFY_SYNC_ENV = {
  ...FAST_SYNC_ENV,
  STORE_SYNC_POLL_MS: '500',
  SHOPIFY_BULK_POLL_MS: '200',
};

/**
 * `read`, a quarter of a second later: `eventually` (which waits 100 ms between reads) then looks
 * every 350 ms or so. Each look at a store's row is a query on the database the service works
 * with; a backfill takes seconds, so looking ten times a second only adds to its work.
 */
export const paced =
  <T>(read: () => Promise<T>, ms = 250): (() => Promise<T>) =>
  async () => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return read();
  };
