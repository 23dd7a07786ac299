// A year of orders in several stores for the client tests of issue 10 (warehouse, notebook,
// typed client): thousands of orders, nights around both of Paris's 2025 DST changes, offsets
// other than Z, refunds that make some days' net revenue negative (a refund that does not say
// which part was tax or shipping leaves those deducted too, S2), countries missing, empty or in
// lower case (`Unknown`, section 5), excluded statuses (S1) and orders just outside the year (T1).
// Made from the order's index by a seeded generator, so the same every run; `yearTotals` sums
// them independently of the service, in integer cents.
import { mulberry32 } from './seeded-random.js';

export const YEAR_FROM = '2025-01-01';
export const YEAR_TO = '2025-12-31';
export const YEAR_STORES = [
  'https://atelier-lyon.example.fr',
  'https://boutique.example.fr',
  'https://shop.example.com',
  'https://store.example.de',
] as const;

const COUNTRIES_SENT = ['FR', 'FR', 'BE', 'de', 'US', '', undefined, 'CH'] as const;
const STATUSES = ['completed', 'completed', 'completed', 'processing', 'refunded', 'pending', 'cancelled'];
const EXCLUDED = new Set(['pending', 'failed', 'cancelled', 'checkout-draft']); // S1 defaults
const DAY_MS = 86_400_000;
const YEAR_START_MS = Date.parse(`${YEAR_FROM}T00:00:00Z`);
/** Instants around Paris's DST changes (UTC): 30 March 01:00Z and 26 October 01:00Z. */
const DST_NIGHTS_MS = [Date.parse('2025-03-29T21:00:00Z'), Date.parse('2025-10-25T21:00:00Z')];
/** T1: the last instant before the year and the first after it; never counted. */
const OUTSIDE = ['2024-12-31T23:59:59Z', '2026-01-01T00:00:00Z', '2026-01-01T00:30:00+01:00'];

const money = (cents: number) => (cents / 100).toFixed(2);

/** The instant written as the store would, sometimes with Paris's offset of that day. */
function written(ms: number, withOffset: boolean): string {
  if (!withOffset) return `${new Date(ms).toISOString().slice(0, 19)}Z`;
  const summer = ms >= Date.parse('2025-03-30T01:00:00Z') && ms < Date.parse('2025-10-26T01:00:00Z');
  const hours = summer ? 2 : 1;
  return `${new Date(ms + hours * 3_600_000).toISOString().slice(0, 19)}+0${hours}:00`;
}

export function yearOfOrders(count = 3000, seed = 2025): Record<string, unknown>[] {
  const random = mulberry32(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const orders: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const createdMs =
      i < OUTSIDE.length
        ? Date.parse(OUTSIDE[i] as string)
        : i % 25 === 0
          ? pick(DST_NIGHTS_MS) + Math.floor(random() * 6 * 3600) * 1000
          : YEAR_START_MS + Math.floor(random() * 365 * 86_400) * 1000;
    const total = 1500 + Math.floor(random() * 30_000);
    const tax = Math.round(total / 6);
    const shipping = random() < 0.3 ? 0 : 490;
    const status = pick(STATUSES);
    const country = pick(COUNTRIES_SENT);
    const refund =
      status === 'refunded'
        ? random() < 0.5
          ? { refund_total: total, refund_tax: tax, refund_shipping: shipping } // nets 0
          : { refund_total: total, refund_tax: 0, refund_shipping: 0 } // nets −(tax + shipping)
        : random() < 0.05
          ? { refund_total: 250, refund_tax: 0, refund_shipping: 0 }
          : {};
    orders.push({
      store: pick(YEAR_STORES),
      id: `year-${i}`,
      created_at: i < OUTSIDE.length ? OUTSIDE[i] : written(createdMs, random() < 0.3),
      status,
      ...(country === undefined ? {} : { billing_country: country }),
      ...(random() < 0.8 ? { customer_email: `client${Math.floor(random() * 600)}@example.com` } : {}),
      items: 1 + Math.floor(random() * 4),
      total: money(total),
      tax_total: money(tax),
      shipping_total: money(shipping),
      ...Object.fromEntries(Object.entries(refund).map(([field, cents]) => [field, money(cents)])),
    });
  }
  return orders;
}

export interface StoreTotals {
  orders: number;
  grossCents: number;
  netCents: number;
}

const cents = (value: unknown) => (value === undefined ? 0 : Math.round(Number(value) * 100));

/** Orders, gross sales and net revenue per store over the year, from the orders themselves
 *  (T1 period, S1 default exclusions, S2 default deductions: refunds, taxes, shipping). */
export function yearTotals(orders: readonly Record<string, unknown>[]): Map<string, StoreTotals> {
  const start = YEAR_START_MS;
  const end = Date.parse(`${YEAR_TO}T00:00:00Z`) + DAY_MS;
  const totals = new Map<string, StoreTotals>();
  for (const order of orders) {
    const at = Date.parse(String(order.created_at));
    if (at < start || at >= end || EXCLUDED.has(String(order.status))) continue;
    const refund = cents(order.refund_total);
    const net =
      cents(order.total) -
      refund -
      (cents(order.tax_total) - cents(order.refund_tax)) -
      (cents(order.shipping_total) - cents(order.refund_shipping));
    const store = String(order.store);
    const sum = totals.get(store) ?? { orders: 0, grossCents: 0, netCents: 0 };
    totals.set(store, {
      orders: sum.orders + 1,
      grossCents: sum.grossCents + cents(order.total),
      netCents: sum.netCents + net,
    });
  }
  return totals;
}
