// What the Shopify connector should have made of a stand-in shop's orders (issue 21), computed
// apart from the connector's code, from the README's "Shopify field by field" table: the import
// lines a person would write by hand for the same orders (test orders left out).
import { orderTotals, type FakeShopify, type FakeShopifyOrder } from './fake-shopify.js';

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
    };
  });
}
