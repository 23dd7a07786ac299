// A WooCommerce order's line_items as the import's lines (SPEC section 15, L1). Pure.
//   line_id            the line item's id
//   product_id         product_id (0, a product since deleted or a custom line: absent)
//   variant_id         variation_id (0 is no variant: absent)
//   sku                sku ('' is absent)
//   product_name       parent_name for a variation when WooCommerce gives it, else name
//   variant_name       for a variation, what name adds after the product's (« T-shirt - M » → M)
//   categories         the product's categories' names (read once per product, woocommerce.ts)
//   quantity           quantity
//   subtotal, discount subtotal (before coupons), subtotal − total: taxes excluded, as
//                      WooCommerce keeps both whatever its prices_include_tax
//   refunded_quantity  the refunds' line items that refund this one (their _refunded_item_id,
//   refunded_amount    else the same product and variation): −quantity and −total summed
// Refunded figures are cut to what L1 allows (a hand-edited refund can exceed the line).
import { cents, decimalText, list } from './json.js';
import { lineText } from '../line-text.js';
import { LINE_BOUNDS } from '../../order-line.js';

type Json = Record<string, unknown>;
/** The names of a product's categories, as read from the store (empty when unknown). */
export type CategoriesOf = (productId: string) => readonly string[];

const idText = (value: unknown): string | undefined =>
  (typeof value === 'number' || typeof value === 'string') && /^[1-9]\d{0,18}$/.test(String(value))
    ? String(value)
    : undefined;

/** The order item a refund's line item refunds: its `_refunded_item_id`, if WooCommerce gives it. */
function refundedItemId(item: Json): string | undefined {
  const meta = list(item.meta_data).find((m) => m.key === '_refunded_item_id');
  return meta === undefined ? undefined : idText(meta.value);
}

interface Refunded {
  quantity: number;
  amount: bigint;
}

/** What the refunds took back from each order item, by its id. */
function refundedByItem(items: Json[], refunds: Json[]): Map<string, Refunded> | string {
  const byId = new Map<string, Refunded>();
  for (const refund of refunds) {
    for (const line of list(refund.line_items)) {
      const target =
        refundedItemId(line) ??
        items.find((i) => i.product_id === line.product_id && i.variation_id === line.variation_id)?.id;
      const id = idText(target);
      const amount = cents(line.total ?? '0');
      const quantity = Number(line.quantity ?? 0);
      if (id === undefined) continue; // a refund of an item the order no longer has
      if (amount === undefined || !Number.isSafeInteger(quantity)) return 'remboursement illisible';
      const sum = byId.get(id) ?? { quantity: 0, amount: 0n };
      sum.quantity += Math.abs(quantity);
      sum.amount += amount < 0n ? -amount : amount;
      byId.set(id, sum);
    }
  }
  return byId;
}

/** What a variation's name adds to its product's: « T-shirt - M » after « T-shirt » is « M ». */
function variantName(item: Json, productName: string): string | undefined {
  const name = typeof item.name === 'string' ? item.name : '';
  if (name.startsWith(`${productName} - `)) return name.slice(productName.length + 3);
  const attributes = list(item.meta_data)
    .filter((m) => typeof m.key === 'string' && !m.key.startsWith('_') && typeof m.display_value === 'string')
    .map((m) => String(m.display_value));
  return attributes.length > 0 ? attributes.join(', ') : undefined;
}

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);

/** The order's lines, or why they cannot be read. */
export function soldLines(items: Json[], refunds: Json[], categoriesOf: CategoriesOf): Json[] | string {
  const refunded = refundedByItem(items, refunds);
  if (typeof refunded === 'string') return refunded;
  const lines: Json[] = [];
  for (const [k, item] of items.entries()) {
    // WooCommerce always numbers its line items; a line without one is named by its place.
    const id = idText(item.id) ?? `ligne-${k + 1}`;
    const subtotal = cents(item.subtotal ?? '0');
    const total = cents(item.total ?? '0');
    const quantity = item.quantity;
    if (subtotal === undefined || total === undefined) return 'montant d’article illisible';
    if (!Number.isSafeInteger(quantity) || (quantity as number) < 1) continue; // nothing sold on it
    const productId = idText(item.product_id);
    const variantId = idText(item.variation_id);
    const parent =
      typeof item.parent_name === 'string' && item.parent_name !== '' ? item.parent_name : undefined;
    const productName =
      lineText(
        (variantId !== undefined ? parent : undefined) ?? String(item.name ?? ''),
        LINE_BOUNDS.product_name,
      ) ?? '';
    const gross = subtotal < 0n ? 0n : subtotal;
    const discount = min(gross, total < 0n ? gross : gross - min(total, gross));
    const back = refunded.get(id) ?? { quantity: 0, amount: 0n };
    const variant =
      variantId === undefined
        ? undefined
        : lineText(variantName(item, productName), LINE_BOUNDS.variant_name);
    const sku = lineText(item.sku, LINE_BOUNDS.sku);
    lines.push({
      line_id: id,
      ...(productId === undefined ? {} : { product_id: productId }),
      ...(variantId === undefined ? {} : { variant_id: variantId }),
      ...(sku === undefined ? {} : { sku }),
      product_name: productName === '' ? `Produit ${productId ?? id}` : productName,
      ...(variant === undefined ? {} : { variant_name: variant }),
      categories: productId === undefined ? [] : [...categoriesOf(productId)],
      quantity,
      subtotal: decimalText(gross),
      discount: decimalText(discount),
      refunded_quantity: Math.min(back.quantity, quantity as number),
      refunded_amount: decimalText(min(back.amount, gross - discount)),
    });
  }
  return lines;
}

/** The product ids an order's line items name (for reading their categories once). */
export function productIdsOf(order: Json): string[] {
  return list(order.line_items).flatMap((item) => idText(item.product_id) ?? []);
}
