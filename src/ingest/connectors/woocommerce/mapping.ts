// A WooCommerce order (REST API v3 resource) as an import line (SPEC section 12). Pure. The
// README's "WooCommerce field by field" table says the same, with the reasons:
//   created_at      date_created_gmt, read as UTC
//   status          status, unchanged (WooCommerce's own words: completed, processing, refunded…)
//   billing_country billing.country ('' is missing)
//   customer_email  billing.email (only its keyed hash is kept, U1)
//   items           the sum of line_items[].quantity
//   total           total (what the customer paid: taxes, shipping and fees included, discounts off)
//   tax_total       total_tax (cart, shipping and fee taxes)
//   shipping_total  shipping_total (without its tax, which is in tax_total: deducted once)
//   fee_total       the sum of fee_lines[].total, 0 when negative (a negative fee is a discount,
//                   already out of total)
//   refund_total    the sum of the refunds' amount
//   refund_tax      the tax of the refunds' line items, shipping and fees
//   refund_shipping the refunds' shipping lines, without their tax
//   lines           line_items (SPEC section 15, src/ingest/connectors/woocommerce/lines.ts)
// Money is read as exact decimal text; more than two decimals are rounded half away from zero.
import type { OrderLine, UnmappedOrder } from '../connector.js';
import { cents, decimalText, isObject, list } from './json.js';
import { soldLines, type CategoriesOf } from './lines.js';

export { cents, decimalText } from './json.js';

type Json = Record<string, unknown>;

const sumCents = (lines: Json[], field: string): bigint | undefined =>
  lines.reduce<bigint | undefined>((sum, line) => {
    const value = cents(line[field] ?? '0');
    return sum === undefined || value === undefined ? undefined : sum + value;
  }, 0n);

const abs = (value: bigint): bigint => (value < 0n ? -value : value);
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);

interface RefundParts {
  total: bigint;
  tax: bigint;
  shipping: bigint;
}

/** The refunds' amounts and their tax and shipping parts, or a message when unreadable. */
export function refundParts(refunds: readonly unknown[]): RefundParts | string {
  const parts = { total: 0n, tax: 0n, shipping: 0n };
  for (const refund of refunds.filter(isObject)) {
    const amount = cents(refund.amount);
    const shippingLines = list(refund.shipping_lines);
    const taxed = [...list(refund.line_items), ...shippingLines, ...list(refund.fee_lines)];
    const tax = sumCents(taxed, 'total_tax');
    const shipping = sumCents(shippingLines, 'total');
    if (amount === undefined || tax === undefined || shipping === undefined) {
      return `remboursement ${String(refund.id)} illisible`;
    }
    parts.total += abs(amount);
    parts.tax += abs(tax);
    parts.shipping += abs(shipping);
  }
  // A refund typed as an amount only has no parts; parts beyond the amount (a hand-edited refund)
  // are cut so that refund_tax + refund_shipping ≤ refund_total holds (SPEC 12).
  parts.shipping = min(parts.shipping, parts.total);
  parts.tax = min(parts.tax, parts.total - parts.shipping);
  return parts;
}

/** The order's line, or why it cannot be one. `refunds` is the order's refunds resource list. */
export function orderLine(
  order: Json,
  refunds: readonly unknown[],
  currency: string,
  categoriesOf: CategoriesOf = () => [],
): { line: OrderLine } | UnmappedOrder {
  const id = String(order.id ?? '');
  const fail = (message: string): UnmappedOrder => ({ id, message });
  if (!/^\d{1,19}$/.test(id)) return fail('identifiant de commande manquant');
  if (typeof order.currency === 'string' && order.currency !== '' && order.currency !== currency) {
    return fail(`devise ${order.currency.slice(0, 8)} différente de celle de l’organisation (${currency})`);
  }
  const created = order.date_created_gmt;
  if (typeof created !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(created)) {
    return fail('date_created_gmt manquante ou illisible');
  }
  const billing = isObject(order.billing) ? order.billing : {};
  const quantities = list(order.line_items).map((item) => item.quantity);
  if (!quantities.every((q) => Number.isSafeInteger(q))) return fail('quantité d’article illisible');
  const fees = sumCents(list(order.fee_lines), 'total');
  const amounts = [order.total, order.total_tax, order.shipping_total].map(cents);
  const refunded = refundParts(refunds);
  if (typeof refunded === 'string') return fail(refunded);
  if (fees === undefined || amounts.some((a) => a === undefined)) return fail('montant illisible');
  const [total, tax, shipping] = amounts as [bigint, bigint, bigint];
  const lines = soldLines(list(order.line_items), refunds.filter(isObject), categoriesOf);
  if (typeof lines === 'string') return fail(lines);
  const line: OrderLine = {
    id,
    created_at: `${created}Z`,
    status: order.status,
    billing_country: typeof billing.country === 'string' ? billing.country : null,
    customer_email: typeof billing.email === 'string' ? billing.email : null,
    items: (quantities as number[]).reduce((sum, q) => sum + q, 0),
    total: decimalText(total),
    tax_total: decimalText(tax),
    shipping_total: decimalText(shipping),
    fee_total: decimalText(fees > 0n ? fees : 0n),
    refund_total: decimalText(refunded.total),
    refund_tax: decimalText(refunded.tax),
    refund_shipping: decimalText(refunded.shipping),
    lines,
  };
  return { line };
}
