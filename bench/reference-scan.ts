// The physical reference of bench:reports (issue 9): the same orders as typed arrays in this
// process, sorted by time, and for each reference query a plain scan that computes exactly its
// answer: the query's metrics, the organization's default settings (S1 excluded statuses, S2
// deductions), first orders (U2), customer types (U3), distinct customers per row (U4) and local
// days in the query's zone. The engines are held to its time, and their answers to its figures:
// it shares no code with the service, so it is also the independent computation of the figures.
import type { DemoOrder } from '../src/demo/generate.js';

// The defaults of a new organization (migration 001, SPEC S1 and S2).
const EXCLUDED = new Set(['pending', 'failed', 'cancelled', 'checkout-draft']);

/** Money as whole cents, from the import format's decimal text. */
const cents = (text: string | undefined): number => Math.round(Number(text ?? '0') * 100);

/** U1: the trimmed, lower-cased e-mail, or undefined when it is not usable. */
function customerOf(email: string | undefined): string | undefined {
  const candidate = email?.trim().toLowerCase();
  if (!candidate || /\s/.test(candidate)) return undefined;
  const parts = candidate.split('@');
  if (parts.length !== 2 || parts[0] === '' || !parts[1]!.includes('.')) return undefined;
  return candidate;
}

export interface ReferenceRow {
  date?: string;
  orders: number;
  items_sold: number;
  gross_sales: number;
  net_revenue: number;
  average_order_value: number;
  taxes: number;
  shipping: number;
  unique_customers: number;
  new_customers: number;
  returning_customers: number;
}

export class ReferenceOrders {
  private count = 0;
  private seconds: Float64Array;
  private readonly excluded: Uint8Array;
  private readonly items: Int32Array;
  private readonly total: Int32Array;
  private readonly tax: Int32Array;
  private readonly shipping: Int32Array;
  /** S2 with the default deductions: total − refund − (tax − refunded tax) − (shipping − refunded shipping). */
  private readonly net: Int32Array;
  /** Dense customer id, -1 for an anonymous order. */
  private customer: Int32Array;
  private readonly customers = new Map<string, number>();

  constructor(capacity: number) {
    this.seconds = new Float64Array(capacity);
    this.excluded = new Uint8Array(capacity);
    this.items = new Int32Array(capacity);
    this.total = new Int32Array(capacity);
    this.tax = new Int32Array(capacity);
    this.shipping = new Int32Array(capacity);
    this.net = new Int32Array(capacity);
    this.customer = new Int32Array(capacity);
  }

  get orders(): number {
    return this.count;
  }

  get customerCount(): number {
    return this.customers.size;
  }

  add(order: DemoOrder): void {
    const i = this.count++;
    if (i >= this.seconds.length) throw new Error('more orders than the reference holds');
    this.seconds[i] = Math.floor(Date.parse(order.created_at) / 1000);
    this.excluded[i] = EXCLUDED.has(order.status) ? 1 : 0;
    this.items[i] = order.items;
    this.total[i] = cents(order.total);
    this.tax[i] = cents(order.tax_total);
    this.shipping[i] = cents(order.shipping_total);
    this.net[i] =
      cents(order.total) -
      cents(order.refund_total) -
      (cents(order.tax_total) - cents(order.refund_tax)) -
      (cents(order.shipping_total) - cents(order.refund_shipping));
    const email = customerOf(order.customer_email);
    let id = email === undefined ? -1 : this.customers.get(email);
    if (id === undefined) this.customers.set(email as string, (id = this.customers.size));
    this.customer[i] = id;
  }

  /** Puts the orders in time order (once, before any query): a customer's days then only grow. */
  sortByTime(): void {
    const n = this.count;
    const order = Int32Array.from({ length: n }, (_, i) => i).sort(
      (a, b) => this.seconds[a]! - this.seconds[b]! || a - b,
    );
    const apply = <T extends Float64Array | Int32Array | Uint8Array>(column: T): void => {
      const copy = column.slice(0, n);
      for (let k = 0; k < n; k++) column[k] = copy[order[k]!]!;
    };
    for (const column of [this.seconds, this.excluded, this.items, this.total, this.tax, this.shipping])
      apply(column);
    apply(this.net);
    apply(this.customer);
  }

  /**
   * The rows of a query over [from, to] (UTC days, T1): one totals row, or one per local day of
   * `days` when it is given; all ten metrics, or only orders and gross sales (`lean`).
   */
  scan(from: string, to: string, days: LocalDays | undefined, lean = false): ReferenceRow[] {
    const start = Date.parse(`${from}T00:00:00Z`) / 1000;
    const end = Date.parse(`${to}T00:00:00Z`) / 1000 + 86_400;
    const rows = days ? days.labels.length : 1;
    const orders = new Float64Array(rows);
    const items = new Float64Array(rows);
    const gross = new Float64Array(rows);
    const net = new Float64Array(rows);
    const taxes = new Float64Array(rows);
    const shipping = new Float64Array(rows);
    const unique = new Float64Array(rows);
    const returning = new Float64Array(rows);
    const { seconds, excluded, customer } = this;
    // U2: each customer's first counted order, whatever the period (the orders are in time order).
    const first = new Float64Array(lean ? 0 : this.customers.size).fill(Infinity);
    const seenIn = new Int32Array(lean ? 0 : this.customers.size).fill(-1);
    if (!lean) {
      for (let i = 0; i < this.count; i++) {
        const c = customer[i]!;
        if (c >= 0 && excluded[i] === 0 && first[c] === Infinity) first[c] = seconds[i]!;
      }
    }
    const hourZero = days?.hourZero ?? 0;
    const dayOfHour = days?.dayOfHour ?? new Int32Array(1);
    for (let i = 0; i < this.count; i++) {
      const t = seconds[i]!;
      if (t < start || t >= end || excluded[i] === 1) continue;
      const row = days ? dayOfHour[Math.floor(t / 3600) - hourZero]! : 0;
      orders[row]! += 1;
      gross[row]! += this.total[i]!;
      if (lean) continue;
      items[row]! += this.items[i]!;
      net[row]! += this.net[i]!;
      taxes[row]! += this.tax[i]!;
      shipping[row]! += this.shipping[i]!;
      const c = customer[i]!;
      if (c >= 0 && seenIn[c] !== row) {
        seenIn[c] = row;
        unique[row]! += 1;
        if (first[c]! < start) returning[row]! += 1; // U3
      }
    }
    const out: ReferenceRow[] = [];
    for (let r = 0; r < rows; r++) {
      if (days && orders[r] === 0) continue; // T2: a row per combination that has orders
      out.push({
        ...(days ? { date: days.labels[r]! } : {}),
        orders: orders[r]!,
        items_sold: items[r]!,
        gross_sales: gross[r]! / 100,
        net_revenue: net[r]! / 100,
        average_order_value: orders[r] === 0 ? 0 : halfAwayFromZero(net[r]!, orders[r]!) / 100,
        taxes: taxes[r]! / 100,
        shipping: shipping[r]! / 100,
        unique_customers: unique[r]!,
        new_customers: unique[r]! - returning[r]!,
        returning_customers: returning[r]!,
      });
    }
    return out;
  }
}

/** M1: cents / orders rounded half away from zero, in integers. */
function halfAwayFromZero(numerator: number, divisor: number): number {
  const magnitude = Math.abs(numerator);
  const quotient = Math.floor(magnitude / divisor);
  const rounded = 2 * (magnitude - quotient * divisor) >= divisor ? quotient + 1 : quotient;
  return numerator < 0 ? -rounded : rounded;
}

/** The local days of a period in a zone whose offsets are whole hours, hour by hour (from Intl). */
export interface LocalDays {
  readonly labels: string[];
  /** dayOfHour[h − hourZero]: the label index of the UTC hour h (epoch hours). */
  readonly dayOfHour: Int32Array;
  readonly hourZero: number;
}

export function localDays(from: string, to: string, zone: string): LocalDays {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  });
  const hourZero = Date.parse(`${from}T00:00:00Z`) / 3_600_000;
  const hours = Date.parse(`${to}T00:00:00Z`) / 3_600_000 + 24 - hourZero;
  const labels: string[] = [];
  const dayOfHour = new Int32Array(hours);
  for (let h = 0; h < hours; h++) {
    const label = format.format(new Date((hourZero + h) * 3_600_000));
    if (labels[labels.length - 1] !== label) labels.push(label);
    dayOfHour[h] = labels.length - 1;
  }
  return { labels, dayOfHour, hourZero };
}

/** The six line metrics of SPEC L3 for one row, money in currency units. */
export interface ReferenceLineRow {
  product: string;
  units_sold: number;
  units_refunded: number;
  product_gross_sales: number;
  product_discounts: number;
  product_refunds: number;
  product_net_sales: number;
}

/**
 * The same orders' lines (SPEC section 15) as typed arrays, one entry a line: its order's instant
 * and whether its status is excluded (L3: a line is counted when its order is), its product name
 * (L2 `product`, `Unknown` when empty) as a dense id, and its counts and amounts in cents.
 */
export class ReferenceLines {
  private count = 0;
  private seconds: Float64Array;
  private excluded: Uint8Array;
  private product: Int32Array;
  private quantity: Int32Array;
  private refundedQuantity: Int32Array;
  private subtotal: Float64Array;
  private discount: Float64Array;
  private refunded: Float64Array;
  private readonly products = new Map<string, number>();
  private readonly names: string[] = [];

  constructor(capacity: number) {
    this.seconds = new Float64Array(capacity);
    this.excluded = new Uint8Array(capacity);
    this.product = new Int32Array(capacity);
    this.quantity = new Int32Array(capacity);
    this.refundedQuantity = new Int32Array(capacity);
    this.subtotal = new Float64Array(capacity);
    this.discount = new Float64Array(capacity);
    this.refunded = new Float64Array(capacity);
  }

  get lines(): number {
    return this.count;
  }

  get productCount(): number {
    return this.products.size;
  }

  add(order: DemoOrder): void {
    const t = Math.floor(Date.parse(order.created_at) / 1000);
    const excluded = EXCLUDED.has(order.status) ? 1 : 0;
    for (const line of order.lines ?? []) {
      const i = this.count++;
      if (i >= this.seconds.length) this.growTo(2 * this.seconds.length);
      this.seconds[i] = t;
      this.excluded[i] = excluded;
      const name = line.product_name === '' ? 'Unknown' : line.product_name;
      let id = this.products.get(name);
      if (id === undefined) {
        this.products.set(name, (id = this.names.length));
        this.names.push(name);
      }
      this.product[i] = id;
      this.quantity[i] = line.quantity;
      this.refundedQuantity[i] = line.refunded_quantity;
      this.subtotal[i] = cents(line.subtotal);
      this.discount[i] = cents(line.discount);
      this.refunded[i] = cents(line.refunded_amount);
    }
  }

  private growTo(capacity: number): void {
    const grow = <T extends Float64Array | Int32Array | Uint8Array>(column: T): T => {
      const larger = new (column.constructor as new (n: number) => T)(capacity);
      larger.set(column);
      return larger;
    };
    this.seconds = grow(this.seconds);
    this.excluded = grow(this.excluded);
    this.product = grow(this.product);
    this.quantity = grow(this.quantity);
    this.refundedQuantity = grow(this.refundedQuantity);
    this.subtotal = grow(this.subtotal);
    this.discount = grow(this.discount);
    this.refunded = grow(this.refunded);
  }

  /** `product` × the six line metrics over [from, to] (UTC days, T1), one row a product sold. */
  byProduct(from: string, to: string): ReferenceLineRow[] {
    const start = Date.parse(`${from}T00:00:00Z`) / 1000;
    const end = Date.parse(`${to}T00:00:00Z`) / 1000 + 86_400;
    const n = this.products.size;
    const [lines, units, refundedUnits, gross, discounts, refunds] = Array.from(
      { length: 6 },
      () => new Float64Array(n),
    ) as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
    const { seconds, excluded, product } = this;
    for (let i = 0; i < this.count; i++) {
      const t = seconds[i]!;
      if (t < start || t >= end || excluded[i] === 1) continue;
      const p = product[i]!;
      lines[p]! += 1;
      units[p]! += this.quantity[i]! - this.refundedQuantity[i]!;
      refundedUnits[p]! += this.refundedQuantity[i]!;
      gross[p]! += this.subtotal[i]!;
      discounts[p]! += this.discount[i]!;
      refunds[p]! += this.refunded[i]!;
    }
    const rows: ReferenceLineRow[] = [];
    for (let p = 0; p < n; p++) {
      if (lines[p] === 0) continue; // L4: a row for each product with a counted line
      rows.push({
        product: this.names[p]!,
        units_sold: units[p]!,
        units_refunded: refundedUnits[p]!,
        product_gross_sales: gross[p]! / 100,
        product_discounts: discounts[p]! / 100,
        product_refunds: refunds[p]! / 100,
        product_net_sales: (gross[p]! - discounts[p]! - refunds[p]!) / 100,
      });
    }
    return rows;
  }

  /** The ten products of the largest net sales (L7: `sort=-product_net_sales&limit=10`). */
  topTen(from: string, to: string): ReferenceLineRow[] {
    return this.byProduct(from, to)
      .sort((a, b) => b.product_net_sales - a.product_net_sales)
      .slice(0, 10);
  }
}
