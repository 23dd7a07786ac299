// A Shopify order's lineItems as the import's lines (SPEC section 15, L1). Pure. docs/connectors.md
// ("Shopify order lines") says the same, with the reasons:
//   line_id            the line item's number (the end of its gid)
//   product_id         product.id's number (none: a custom line, or a product deleted since)
//   variant_id         variant.id's number, only when variantTitle is set (a product without
//                      variants has one default variant, which is no variant to a user)
//   sku                sku ('' is absent)
//   product_name       title (the product's title at the time of sale)
//   variant_name       variantTitle
//   categories         product.productType, when set (Shopify gives a product one type)
//   quantity           quantity
//   subtotal, discount originalTotalSet and the discountAllocations' allocatedAmountSet summed,
//                      taxes excluded: when the order's taxesIncluded, both carry the line's tax;
//                      its taxLines give the tax of what was paid, so the net is exact
//                      (original − discounts − tax) and the tax is split between subtotal and
//                      discount in proportion (the same rate on both; the decision in
//                      docs/decisions.md)
//   refunded_quantity  the refunds' refundLineItems naming this line item: quantity summed
//   refunded_amount    their subtotalSet summed, less their totalTaxSet when taxesIncluded
// At most LINE_BOUNDS.lines lines an order (L1): the first ones, in Shopify's order; amounts cut
// to what L1 allows (a refund beyond its line, a discount beyond its subtotal).
import { LINE_BOUNDS } from '../../order-line.js';
import { cents, decimalText } from '../woocommerce/json.js';
import { lineText } from '../line-text.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): Json[] => {
  const items = isObject(value) ? value.nodes : value;
  return Array.isArray(items) ? items.filter(isObject) : [];
};
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const max0 = (a: bigint): bigint => (a < 0n ? 0n : a);

/** Exact cents of a MoneyBag's shopMoney; 0 when absent; undefined when unreadable. */
const shopCents = (bag: unknown): bigint | undefined =>
  bag === null || bag === undefined
    ? 0n
    : isObject(bag) && isObject(bag.shopMoney)
      ? cents(bag.shopMoney.amount)
      : undefined;

const sumOf = (values: readonly (bigint | undefined)[]): bigint | undefined =>
  values.reduce<bigint | undefined>((s, v) => (s === undefined || v === undefined ? undefined : s + v), 0n);

/** The number at the end of a gid (gid://shopify/LineItem/123 → 123). */
const gidNumber = (value: unknown): string | undefined =>
  typeof value === 'string' ? /\/(\d{1,19})$/.exec(value)?.[1] : undefined;

// Shopify's texts are trimmed (a title of blanks is no title).
const text = (value: unknown, bound: number): string | undefined =>
  lineText(typeof value === 'string' ? value.replaceAll('\u0000', '').trim() : value, bound);

interface Refunded {
  quantity: number;
  amount: bigint;
}

/** What the refunds gave back for each line item, by its gid; a string when unreadable. */
function refundedByItem(refunds: readonly Json[], taxesIncluded: boolean): Map<string, Refunded> | string {
  const byItem = new Map<string, Refunded>();
  for (const refund of refunds) {
    for (const item of list(refund.refundLineItems)) {
      const target = isObject(item.lineItem) ? item.lineItem.id : undefined;
      if (typeof target !== 'string') continue; // a refund of a line the order no longer has
      const subtotal = shopCents(item.subtotalSet);
      const tax = shopCents(item.totalTaxSet);
      if (subtotal === undefined || tax === undefined || !Number.isSafeInteger(item.quantity)) {
        return 'remboursement d’article illisible';
      }
      const sum = byItem.get(target) ?? { quantity: 0, amount: 0n };
      sum.quantity += Math.abs(item.quantity as number);
      sum.amount += max0(taxesIncluded ? subtotal - tax : subtotal);
      byItem.set(target, sum);
    }
  }
  return byItem;
}

/**
 * Subtotal and discount taxes excluded. `original` and `discount` carry the tax when the prices
 * include it; `tax` is the tax of what was paid (original − discount); `rate` the line's summed
 * tax rates, used only when nothing was paid (then there is no tax to split).
 */
export function withoutTax(
  original: bigint,
  discount: bigint,
  tax: bigint,
  rate: number,
): { subtotal: bigint; discount: bigint } {
  const paid = original - discount;
  if (paid <= 0n) {
    const scaled = rate > 0 ? BigInt(Math.round(Number(original) / (1 + rate))) : original;
    return { subtotal: scaled, discount: scaled };
  }
  const net = max0(paid - min(tax, paid));
  // original × net / paid, rounded half up, in exact integers.
  const subtotal = (2n * original * net + paid) / (2n * paid);
  return { subtotal, discount: subtotal - net };
}

/** One line item as an L1 line; undefined when it sold nothing; a string when unreadable. */
function soldLine(
  item: Json,
  taxesIncluded: boolean,
  refunded: Map<string, Refunded>,
): Json | string | undefined {
  const quantity = item.quantity;
  if (!Number.isSafeInteger(quantity) || (quantity as number) < 1) return undefined;
  const original = shopCents(item.originalTotalSet);
  const discounts = sumOf(
    (Array.isArray(item.discountAllocations) ? item.discountAllocations.filter(isObject) : []).map((d) =>
      shopCents(d.allocatedAmountSet),
    ),
  );
  const taxLines = list(item.taxLines);
  const tax = sumOf(taxLines.map((t) => shopCents(t.priceSet)));
  if (original === undefined || discounts === undefined || tax === undefined)
    return 'montant d’article illisible';
  const gross = max0(original);
  const discount = min(gross, max0(discounts));
  const rate = taxLines.reduce((s, t) => s + (typeof t.rate === 'number' && t.rate > 0 ? t.rate : 0), 0);
  const amounts = taxesIncluded
    ? withoutTax(gross, discount, max0(tax), rate)
    : { subtotal: gross, discount };
  const id = gidNumber(item.id);
  const back = (typeof item.id === 'string' ? refunded.get(item.id) : undefined) ?? {
    quantity: 0,
    amount: 0n,
  };
  const product = isObject(item.product) ? item.product : {};
  const productId = gidNumber(product.id);
  const variantName = text(item.variantTitle, LINE_BOUNDS.variant_name);
  const variantId =
    variantName === undefined ? undefined : gidNumber(isObject(item.variant) ? item.variant.id : undefined);
  const category = text(product.productType, LINE_BOUNDS.category);
  const sku = text(item.sku, LINE_BOUNDS.sku);
  return {
    line_id: id ?? '',
    ...(productId === undefined ? {} : { product_id: productId }),
    ...(variantId === undefined ? {} : { variant_id: variantId }),
    ...(sku === undefined ? {} : { sku }),
    product_name: text(item.title, LINE_BOUNDS.product_name) ?? `Produit ${productId ?? id ?? ''}`.trim(),
    ...(variantName === undefined ? {} : { variant_name: variantName }),
    categories: category === undefined ? [] : [category],
    quantity: Math.min(quantity as number, LINE_BOUNDS.quantity),
    subtotal: decimalText(amounts.subtotal),
    discount: decimalText(amounts.discount),
    refunded_quantity: Math.min(back.quantity, quantity as number),
    refunded_amount: decimalText(min(back.amount, amounts.subtotal - amounts.discount)),
  };
}

/** The order's lines (the first LINE_BOUNDS.lines that sold something), or why they cannot be read. */
export function soldLines(
  items: readonly Json[],
  refunds: readonly Json[],
  taxesIncluded: boolean,
): Json[] | string {
  const refunded = refundedByItem(refunds, taxesIncluded);
  if (typeof refunded === 'string') return refunded;
  const lines: Json[] = [];
  for (const [k, item] of items.entries()) {
    if (lines.length >= LINE_BOUNDS.lines) break;
    const line = soldLine(item, taxesIncluded, refunded);
    if (typeof line === 'string') return line;
    // Shopify always numbers its line items; a line without one is named by its place.
    if (line) lines.push(line.line_id === '' ? { ...line, line_id: `ligne-${k + 1}` } : line);
  }
  return lines;
}
