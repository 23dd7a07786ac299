// The demo orders' lines (SPEC section 15, L1), drawn from the store's catalogue for the units an
// order was priced with (src/demo/generate.ts), so that they agree with the order: `items` is the
// sum of their quantities, their net sales taxes excluded are the goods the total paid for, a
// promotion shows as a discount on each line, and refunds are those of the order (a returned unit,
// a goodwill gesture, or everything). A PRNG of their own: the orders stay what they were.
import type { DemoProduct } from './catalogue.js';

export interface DemoLine {
  line_id: string;
  product_id: string;
  variant_id?: string;
  sku: string;
  product_name: string;
  variant_name?: string;
  categories: string[];
  quantity: number;
  subtotal: string;
  discount: string;
  refunded_quantity: number;
  refunded_amount: string;
}

/** What an order's goods were: unit prices taxes included (cents), its VAT rate, its refund. */
export interface PricedGoods {
  readonly unitPrices: readonly number[];
  /** Basis points. */
  readonly vat: number;
  /** `all`: refunded whole; `first`: its first unit returned; a number: that many cents back (taxes included) on the goods. */
  readonly refund?: 'all' | 'first' | number;
}

type Rng = () => number;

/** The VAT included in a tax-inclusive amount, to the nearest cent, in integers. */
export function includedVat(amount: number, rate: number): number {
  return Math.floor((2 * amount * rate + 10_000 + rate) / (2 * (10_000 + rate)));
}

export function cents(amount: number): string {
  return `${Math.floor(amount / 100)}.${String(amount % 100).padStart(2, '0')}`;
}

/** Cumulative weights of a catalogue, for a draw in O(log n). */
const cumulative = new WeakMap<readonly DemoProduct[], number[]>();

function pickProduct(rng: Rng, products: readonly DemoProduct[]): DemoProduct {
  let sums = cumulative.get(products);
  if (sums === undefined) {
    let sum = 0;
    sums = products.map((p) => (sum += p.weight));
    cumulative.set(products, sums);
  }
  const r = rng() * sums[sums.length - 1]!;
  let [low, high] = [0, sums.length - 1];
  while (low < high) {
    const mid = (low + high) >> 1;
    if (sums[mid]! > r) high = mid;
    else low = mid + 1;
  }
  return products[low]!;
}

interface Drawn {
  product: DemoProduct;
  variant: number;
  quantity: number;
  /** Cents, taxes excluded. */
  paid: number;
  refundedQuantity: number;
  refunded: number;
}

/** The order's lines; `orderId` names them (`1042-1`, `1042-2`…). */
export function demoLines(
  rng: Rng,
  products: readonly DemoProduct[],
  orderId: string,
  goods: PricedGoods,
): DemoLine[] {
  const drawn: Drawn[] = [];
  goods.unitPrices.forEach((price, unit) => {
    const product = pickProduct(rng, products);
    const variant = product.variants.length === 0 ? -1 : Math.floor(rng() * product.variants.length);
    const paid = price - includedVat(price, goods.vat);
    const returned = goods.refund === 'first' && unit === 0;
    // A second unit of the same product and variant adds to its line (quantity 2, 3…).
    const same = drawn.find((d) => d.product === product && d.variant === variant);
    const line = same ?? { product, variant, quantity: 0, paid: 0, refundedQuantity: 0, refunded: 0 };
    if (same === undefined) drawn.push(line);
    line.quantity++;
    line.paid += paid;
    if (returned) [line.refundedQuantity, line.refunded] = [line.refundedQuantity + 1, line.refunded + paid];
  });
  // A promotion code now and then (10 or 15 %): the prices paid are what is left after it.
  const promotion = rng() < 0.12 ? (rng() < 0.6 ? 10 : 15) : 0;
  const gesture = typeof goods.refund === 'number' ? goods.refund - includedVat(goods.refund, goods.vat) : 0;
  return drawn.map((d, k) => {
    const subtotal = promotion === 0 ? d.paid : Math.round((d.paid * 100) / (100 - promotion));
    const whole = goods.refund === 'all';
    const variant = d.variant === -1 ? undefined : d.product.variants[d.variant];
    return {
      line_id: `${orderId}-${k + 1}`,
      product_id: d.product.id,
      ...(variant === undefined ? {} : { variant_id: variant.id }),
      sku: variant?.sku ?? d.product.sku,
      product_name: d.product.name,
      ...(variant === undefined ? {} : { variant_name: variant.name }),
      categories: [...d.product.categories],
      quantity: d.quantity,
      subtotal: cents(subtotal),
      discount: cents(subtotal - d.paid),
      refunded_quantity: whole ? d.quantity : d.refundedQuantity,
      // A goodwill gesture on a single item goes on its only line.
      refunded_amount: cents(whole ? d.paid : d.refunded + (k === 0 ? Math.min(gesture, d.paid) : 0)),
    };
  });
}
