// A Shopify order (Admin GraphQL `Order`) as an import line (SPEC section 12). Pure. The README's
// "Shopify field by field" table says the same, with the reasons:
//   external id     legacyResourceId (the number the Shopify admin shows in its order address)
//   created_at      processedAt (when the order was placed; an imported order keeps its date)
//   status          'cancelled' when cancelledAt is set, else displayFinancialStatus in lower case
//                   (paid, pending, authorized, partially_paid, partially_refunded, refunded,
//                   voided, expired); test orders (test: true) are never imported
//   billing_country billingAddress.countryCodeV2
//   customer_email  email (only its keyed hash is kept, U1)
//   items           the sum of lineItems' quantity
//   total           totalPriceSet.shopMoney
//   tax_total       totalTaxSet.shopMoney
//   shipping_total  totalShippingPriceSet.shopMoney, less the shipping lines' taxes when
//                   taxesIncluded (our shipping excludes its tax, as WooCommerce's does)
//   fee_total       originalTotalDutiesSet + originalTotalAdditionalFeesSet (0 when absent)
//   refund_total    totalRefundedSet.shopMoney
//   refund_tax      the refunds' line items' totalTaxSet and shipping lines' taxAmountSet
//   refund_shipping the refunds' shipping lines' subtotalAmountSet
//   lines           lineItems with the refunds' refundLineItems (SPEC section 15, lines.ts)
// with refund_shipping ≤ refund_total and refund_tax ≤ refund_total − refund_shipping.
// Amounts are the shop's currency (shopMoney), never the customer's (presentment) one.
import type { OrderLine, UnmappedOrder } from '../connector.js';
import { cents, decimalText } from '../woocommerce/mapping.js';
import { soldLines } from './lines.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `nodes` of a connection, or the items of a list. */
export const nodesOf = (value: unknown): Json[] => {
  const items = isObject(value) ? value.nodes : value;
  return Array.isArray(items) ? items.filter(isObject) : [];
};

/** Exact cents of a MoneyBag's shopMoney ({ shopMoney: { amount: "12.30" } }); 0 when absent. */
export function shopCents(bag: unknown): bigint | undefined {
  if (bag === null || bag === undefined) return 0n;
  if (!isObject(bag) || !isObject(bag.shopMoney)) return undefined;
  return cents(bag.shopMoney.amount);
}

const sum = (values: readonly (bigint | undefined)[]): bigint | undefined =>
  values.reduce<bigint | undefined>((s, v) => (s === undefined || v === undefined ? undefined : s + v), 0n);

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const abs = (value: bigint): bigint => (value < 0n ? -value : value);

/** The refunds' tax and shipping parts (a list of Refund objects, connections as `nodes`). */
function refundParts(refunds: readonly Json[]): { tax: bigint; shipping: bigint } | undefined {
  let tax = 0n;
  let shipping = 0n;
  for (const refund of refunds) {
    const shippingLines = nodesOf(refund.refundShippingLines);
    const lineTax = sum(nodesOf(refund.refundLineItems).map((item) => shopCents(item.totalTaxSet)));
    const shippingTax = sum(shippingLines.map((line) => shopCents(line.taxAmountSet)));
    const shippingAmount = sum(shippingLines.map((line) => shopCents(line.subtotalAmountSet)));
    if (lineTax === undefined || shippingTax === undefined || shippingAmount === undefined) return undefined;
    tax += abs(lineTax) + abs(shippingTax);
    shipping += abs(shippingAmount);
  }
  return { tax, shipping };
}

/** The status SPEC 12 keeps: Shopify's financial status in lower case, or cancelled. */
function statusOf(order: Json): string {
  if (order.cancelledAt !== null && order.cancelledAt !== undefined) return 'cancelled';
  const financial = order.displayFinancialStatus;
  // No financial status (an order without any payment yet): counted as pending.
  return typeof financial === 'string' && financial !== '' ? financial.toLowerCase() : 'pending';
}

const PROCESSED_AT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)$/;

/**
 * The order's line; `{ gone }` for a test order (never counted); or why it cannot be one. The
 * order's `lineItems` and `refunds` must be complete (the connector reads the rest first).
 */
export function orderLine(
  order: Json,
  currency: string,
): { line: OrderLine } | { gone: true } | UnmappedOrder {
  const id = String(order.legacyResourceId ?? '');
  const fail = (message: string): UnmappedOrder => ({ id, message });
  if (!/^\d{1,19}$/.test(id)) return fail('identifiant de commande (legacyResourceId) manquant');
  if (order.test === true) return { gone: true };
  if (typeof order.currencyCode === 'string' && order.currencyCode !== currency) {
    return fail(
      `devise ${order.currencyCode.slice(0, 8)} différente de celle de l’organisation (${currency})`,
    );
  }
  const processed = order.processedAt;
  if (typeof processed !== 'string' || !PROCESSED_AT.test(processed) || Number.isNaN(Date.parse(processed))) {
    return fail('processedAt manquant ou illisible');
  }
  const items = nodesOf(order.lineItems);
  const quantities = items.map((item) => item.quantity);
  if (!quantities.every((q) => Number.isSafeInteger(q))) return fail('quantité d’article illisible');
  const shippingTax = sum(
    nodesOf(order.shippingLines).flatMap((line) => nodesOf(line.taxLines).map((t) => shopCents(t.priceSet))),
  );
  const [total, tax, shippingPrice, duties, fees, refunded] = [
    order.totalPriceSet,
    order.totalTaxSet,
    order.totalShippingPriceSet,
    order.originalTotalDutiesSet,
    order.originalTotalAdditionalFeesSet,
    order.totalRefundedSet,
  ].map(shopCents);
  const refunds = Array.isArray(order.refunds) ? order.refunds.filter(isObject) : [];
  const parts = refundParts(refunds);
  const lines = soldLines(items, refunds, order.taxesIncluded === true);
  if (typeof lines === 'string') return fail(lines);
  if (
    [total, tax, shippingPrice, duties, fees, refunded, shippingTax].some((a) => a === undefined) ||
    !parts
  ) {
    return fail('montant illisible');
  }
  const refundTotal = abs(refunded!);
  const shipping = order.taxesIncluded === true ? shippingPrice! - shippingTax! : shippingPrice!;
  const refundShipping = min(parts.shipping, refundTotal);
  const billing = isObject(order.billingAddress) ? order.billingAddress : {};
  const line: OrderLine = {
    id,
    created_at: new Date(Date.parse(processed)).toISOString(),
    status: statusOf(order),
    billing_country: typeof billing.countryCodeV2 === 'string' ? billing.countryCodeV2 : null,
    customer_email: typeof order.email === 'string' && order.email !== '' ? order.email : null,
    items: (quantities as number[]).reduce((s, q) => s + q, 0),
    total: decimalText(total!),
    tax_total: decimalText(tax!),
    shipping_total: decimalText(shipping > 0n ? shipping : 0n),
    fee_total: decimalText(duties! + fees!),
    refund_total: decimalText(refundTotal),
    refund_tax: decimalText(min(parts.tax, refundTotal - refundShipping)),
    refund_shipping: decimalText(refundShipping),
    lines,
  };
  return { line };
}
