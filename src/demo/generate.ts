// Demo orders in the import format of SPEC section 12, for `DEMO=1` and for tests: stores of
// different sizes, weekly and yearly seasonality, growth, repeat customers across stores, and the
// awkward inputs real stores send (unusable e-mails, missing countries, offsets, refunds).
// Deterministic: only the seeded PRNG below, exact operations and `Date` formatting are used, so
// the same options give the same orders on every run.
import { CATALOGUES } from './catalogue.js';
import { cents, demoLines, includedVat, type DemoLine, type PricedGoods } from './lines.js';

export interface DemoOptions {
  seed?: number; // default 1
  endDate: string; // the last day generated, YYYY-MM-DD (UTC), usually today
  days?: number; // UTC days ending at endDate, default 730
  stores?: readonly string[]; // store addresses, largest first, default DEFAULT_DEMO_STORES
  ordersPerDay?: number; // average across all stores before seasonality and growth, default 60
  /** No order after this instant (ms; issue 30, item 7: the demo is never in the future). */
  until?: number;
  /** Each order's lines from its store's catalogue (SPEC section 15); off by default. */
  lines?: boolean;
}

/** One order exactly as the import reads it; amounts are decimal strings with 2 decimals. */
export interface DemoOrder {
  store: string;
  id: string;
  created_at: string;
  status: string;
  billing_country?: string;
  customer_email?: string;
  items: number;
  total: string;
  tax_total: string;
  shipping_total: string;
  fee_total: string;
  refund_total: string;
  refund_tax: string;
  refund_shipping: string;
  lines?: DemoLine[];
}

export const DEFAULT_DEMO_STORES: readonly string[] = [
  'https://boutique-paris.example.fr',
  'https://atelier-lyon.example.fr',
  'https://epicerie-bordeaux.example.fr',
];

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const ITEM_PRICE_LEVELS = [2900, 4900, 1400]; // cents: a general shop, a premium workshop, a grocer

type Rng = () => number;
type Weighted<T> = readonly (readonly [T, number])[];

/** mulberry32: a tiny 32-bit PRNG, plenty for demo data and identical on every platform. */
function mulberry32(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function pick<T>(rng: Rng, table: Weighted<T>): T {
  let total = 0;
  for (const [, weight] of table) total += weight;
  let r = rng() * total;
  for (const [value, weight] of table) {
    r -= weight;
    if (r < 0) return value;
  }
  return table[table.length - 1]![0];
}

function weighted<T>(values: readonly T[], weights: readonly number[]): Weighted<T> {
  return values.map((value, i) => [value, weights[i] ?? 0]);
}

function oneOf<T>(rng: Rng, values: readonly T[]): T {
  return values[Math.floor(rng() * values.length)]!;
}

interface Country {
  code: string;
  /** VAT rate in basis points; exports outside the EU are zero-rated. */
  vat: number;
  /** Shipping in cents, free from `freeAbove` cents of goods. */
  shipping: number;
  freeAbove: number;
}

const EU = (code: string, vat: number): Country => ({ code, vat, shipping: 990, freeAbove: 10_000 });
const WORLD = (code: string, shipping: number): Country => ({ code, vat: 0, shipping, freeAbove: Infinity });
const FRANCE: Country = { code: 'FR', vat: 2000, shipping: 490, freeAbove: 6000 };
const COUNTRIES: Weighted<Country> = [
  [FRANCE, 7200],
  [EU('BE', 2100), 800],
  [WORLD('CH', 1990), 500],
  [EU('DE', 1900), 300],
  [EU('ES', 2100), 250],
  [EU('IT', 2200), 250],
  [WORLD('GB', 1990), 200],
  [WORLD('US', 2490), 200],
  [WORLD('CA', 2490), 120],
  [EU('LU', 1700), 100],
  [EU('NL', 2100), 80],
];

const STATUSES = weighted(
  ['completed', 'processing', 'refunded', 'cancelled', 'failed', 'pending', 'on-hold', 'checkout-draft'],
  [780, 60, 40, 40, 30, 20, 20, 10],
);

// UTC hours: a lunch bump and an evening peak (19–22 h in Paris), with orders still coming in
// around midnight UTC so that the day shown depends on the time zone.
const HOUR_WEIGHTS = [
  3, 1.5, 1, 0.6, 0.6, 1, 2, 3.5, 4.5, 5, 5.5, 6, 6.5, 6, 5.5, 5.5, 6, 7, 8.5, 9.5, 9, 7.5, 5.5, 4,
];
const HOURS: Weighted<number> = HOUR_WEIGHTS.map((weight, hour) => [hour, weight]);
// Sunday first, as `getUTCDay`; then January to December: November/December peaks, summer dip.
const WEEKDAY_FACTOR = [1.3, 0.95, 0.95, 1, 1, 1.05, 1.15];
const MONTH_FACTOR = [1, 0.85, 0.9, 0.95, 0.95, 0.9, 0.8, 0.7, 0.95, 1, 1.35, 1.6];

// Unusable or missing e-mails make an order anonymous (U1); `undefined` omits the field.
const ANONYMOUS_EMAILS = weighted([undefined, '', 'n/a', 'client@localhost', 'aucun email'], [5, 2, 2, 1, 1]);
const FIRST_NAMES = 'camille lea manon chloe ines sarah julie emma lucas hugo paul louis alice theo'.split(
  ' ',
);
const LAST_NAMES = 'martin bernard dubois thomas robert richard petit durand moreau simon laurent'.split(' ');
// Reserved example domains (RFC 2606): no real mailbox is ever named.
const DOMAINS = weighted(
  ['example.fr', 'example.com', 'example.org', 'example.net', 'mail.example.fr'],
  [5, 4, 3, 2, 1],
);
// About 2.7 items an order, hence about 2.5 lines (issue 27, item 6: the size the benchmarks are judged at).
const ITEM_COUNTS = weighted([1, 2, 3, 4, 5, 6, 7, 8], [28, 27, 19, 12, 7, 4, 2, 1]);
const PAYMENT_FEES = weighted([150, 290], [3, 1]); // cash on delivery, payment in instalments

interface Customer {
  email: string;
  country: Country;
  homeStore: number;
}

/** Approximately normal noise around `expected` (Irwin–Hall), using only exact operations. */
function noisyCount(rng: Rng, expected: number): number {
  let z = -6;
  for (let i = 0; i < 12; i++) z += rng();
  return Math.max(0, Math.round(expected + Math.sqrt(expected) * z));
}

function dayFactor(dayMs: number): number {
  const date = new Date(dayMs);
  const [month, day, weekday] = [date.getUTCMonth(), date.getUTCDate(), date.getUTCDay()];
  let factor = WEEKDAY_FACTOR[weekday]! * MONTH_FACTOR[month]!;
  if (month === 10 && weekday === 5 && day >= 23 && day <= 29) factor *= 2.5; // Black Friday
  if (month === 11 && day >= 24 && day <= 26) factor *= 0.5; // Christmas: the rush is over
  return factor;
}

/** Europe/Paris offset in hours: summer time from the last Sunday of March to that of October. */
function parisOffset(ms: number): number {
  const year = new Date(ms).getUTCFullYear();
  const lastSunday = (month: number): number => {
    const last = Date.UTC(year, month + 1, 0);
    return last - new Date(last).getUTCDay() * DAY_MS + HOUR_MS;
  };
  return ms >= lastSunday(2) && ms < lastSunday(9) ? 2 : 1;
}

/** Some stores send UTC (`Z`), others Paris local time with its offset: both must import alike. */
function formatInstant(ms: number, withOffset: boolean): string {
  if (!withOffset) return `${new Date(ms).toISOString().slice(0, 19)}Z`;
  const offset = parisOffset(ms);
  return `${new Date(ms + offset * HOUR_MS).toISOString().slice(0, 19)}+0${offset}:00`;
}

function newCustomer(rng: Rng, index: number, storeWeights: Weighted<number>): Customer {
  // The index keeps e-mails unique, so each customer is one person across stores.
  const email = `${oneOf(rng, FIRST_NAMES)}.${oneOf(rng, LAST_NAMES)}${index}@${pick(rng, DOMAINS)}`;
  return { email, country: pick(rng, COUNTRIES), homeStore: pick(rng, storeWeights) };
}

/** A repeat buyer half the time from recent customers (they come back within weeks), else anyone. */
function pickCustomer(rng: Rng, customers: Customer[], storeWeights: Weighted<number>): Customer | undefined {
  if (rng() < 0.07) return undefined; // anonymous order
  const n = customers.length;
  if (n > 0 && rng() < 0.42) {
    const u = rng();
    return customers[rng() < 0.5 ? n - 1 - Math.floor(u * u * u * n) : Math.floor(u * n)];
  }
  const customer = newCustomer(rng, n + 1, storeWeights);
  customers.push(customer);
  return customer;
}

/** The e-mail as the store sent it: mostly clean, sometimes upper-cased with blanks (U1 normalizes). */
function emailAsSent(rng: Rng, customer: Customer | undefined): string | undefined {
  if (!customer) return pick(rng, ANONYMOUS_EMAILS);
  const u = rng();
  if (u < 0.04) return `  ${customer.email.toUpperCase()} `;
  if (u < 0.07) return customer.email[0]!.toUpperCase() + customer.email.slice(1);
  return customer.email;
}

function countryAsSent(rng: Rng, country: Country): string | undefined {
  const u = rng();
  return u < 0.02 ? undefined : u < 0.03 ? '' : country.code; // missing or empty: `Unknown`
}

type Amounts = Pick<DemoOrder, 'items' | 'total' | 'tax_total' | 'shipping_total' | 'fee_total'> &
  Pick<DemoOrder, 'refund_total' | 'refund_tax' | 'refund_shipping'>;

/**
 * Money in integer cents: tax-inclusive prices, shipping and a payment fee; refunds per status.
 * Also the goods themselves, from which the order's lines are drawn (src/demo/lines.ts).
 */
function priceOrder(
  rng: Rng,
  priceLevel: number,
  country: Country,
  status: string,
): { amounts: Amounts; goods: PricedGoods } {
  const items = pick(rng, ITEM_COUNTS);
  const unitPrices: number[] = [];
  for (let i = 0; i < items; i++) {
    // x.90 prices, spread from about a third to twice the store's level.
    unitPrices.push(Math.max(190, Math.round((priceLevel * (0.3 + rng() + rng())) / 100) * 100 - 10));
  }
  const goods = unitPrices.reduce((sum, price) => sum + price, 0);
  const shipping = goods >= country.freeAbove ? 0 : country.shipping;
  const fee = rng() < 0.08 ? pick(rng, PAYMENT_FEES) : 0;
  const tax = includedVat(goods, country.vat) + includedVat(shipping, country.vat);
  const total = goods + shipping + fee;
  let [refund, refundTax, refundShipping] = [0, 0, 0];
  let refunded: PricedGoods['refund'];
  if (status === 'refunded') {
    [refund, refundTax, refundShipping] = [total, tax, shipping];
    refunded = 'all';
  } else if (status === 'completed' && rng() < 0.03) {
    // A returned item, or a goodwill gesture on a single item; shipping refunded now and then, only
    // with enough goods back that refund_tax + refund_shipping stays within refund_total.
    const goodsBack = items > 1 ? unitPrices[0]! : Math.floor((goods * (20 + Math.floor(rng() * 31))) / 100);
    refunded = items > 1 ? 'first' : goodsBack;
    refundShipping = rng() < 0.2 && goodsBack >= shipping ? shipping : 0;
    refund = goodsBack + refundShipping;
    refundTax = includedVat(goodsBack, country.vat) + includedVat(refundShipping, country.vat);
  }
  const amounts = {
    items,
    total: cents(total),
    tax_total: cents(tax),
    shipping_total: cents(shipping),
    fee_total: cents(fee),
    refund_total: cents(refund),
    refund_tax: cents(refundTax),
    refund_shipping: cents(refundShipping),
  };
  return {
    amounts,
    goods: { unitPrices, vat: country.vat, ...(refunded === undefined ? {} : { refund: refunded }) },
  };
}

function firstDay(endDate: string, days: number): number {
  const end = /^\d{4}-\d{2}-\d{2}$/.test(endDate) ? Date.parse(`${endDate}T00:00:00Z`) : NaN;
  if (Number.isNaN(end) || new Date(end).toISOString().slice(0, 10) !== endDate) {
    throw new RangeError(`endDate must be a calendar day YYYY-MM-DD, got "${endDate}"`);
  }
  return end - (days - 1) * DAY_MS;
}

export function* generateDemoOrders(options: DemoOptions): Generator<DemoOrder> {
  const { seed = 1, days = 730, stores = DEFAULT_DEMO_STORES, ordersPerDay = 60 } = options;
  const until = options.until ?? Infinity;
  if (!Number.isInteger(days) || days < 1) throw new RangeError(`days must be a positive integer`);
  if (!(ordersPerDay > 0 && Number.isFinite(ordersPerDay))) throw new RangeError(`ordersPerDay must be > 0`);
  if (stores.length === 0) throw new RangeError('at least one store is needed');
  const start = firstDay(options.endDate, days);
  const rng = mulberry32(seed);
  const lineRng = mulberry32(seed ^ 0x5eed11e5); // the lines' own: the orders stay as they were
  // Each store is about half the size of the previous one.
  const storeWeights: Weighted<number> = stores.map((_, i) => [i, 0.55 ** i]);
  const nextId = stores.map((_, i) => 1000 * (i + 1));
  const customers: Customer[] = [];

  for (let day = 0; day < days; day++) {
    const dayStart = start + day * DAY_MS;
    const growth = 0.9 + (0.2 * day) / Math.max(1, days - 1); // about +22 % over the period
    const count = noisyCount(rng, ordersPerDay * growth * dayFactor(dayStart));
    const drafts: {
      at: number;
      store: number;
      order: Omit<DemoOrder, 'store' | 'id' | 'created_at'>;
      goods: PricedGoods;
    }[] = [];
    for (let i = 0; i < count; i++) {
      const at = dayStart + pick(rng, HOURS) * HOUR_MS + Math.floor(rng() * 3600) * 1000;
      const customer = pickCustomer(rng, customers, storeWeights);
      const store = customer && rng() < 0.85 ? customer.homeStore : pick(rng, storeWeights);
      const country = customer?.country ?? pick(rng, COUNTRIES);
      let status = pick(rng, STATUSES);
      // The last two days' orders are mostly not shipped yet.
      if (status === 'completed' && day >= days - 2 && rng() < 0.6) status = 'processing';
      const billingCountry = countryAsSent(rng, country);
      const email = emailAsSent(rng, customer);
      const { amounts, goods } = priceOrder(
        rng,
        ITEM_PRICE_LEVELS[store % ITEM_PRICE_LEVELS.length]!,
        country,
        status,
      );
      drafts.push({
        at,
        store,
        order: {
          status,
          ...(billingCountry === undefined ? {} : { billing_country: billingCountry }),
          ...(email === undefined ? {} : { customer_email: email }),
          ...amounts,
        },
        goods,
      });
    }
    // Ids grow with time within each store, as a store's order numbers do.
    drafts.sort((a, b) => a.at - b.at);
    for (const { at, store, order, goods } of drafts) {
      // Drawn all the same (every draw above happened), so that a day's orders do not depend on
      // the hour the demo is made; only those still to come are left out.
      if (at > until) break;
      nextId[store]! += 1;
      const id = String(nextId[store]);
      const created_at = formatInstant(at, store % 2 === 1);
      const lines =
        options.lines === true
          ? { lines: demoLines(lineRng, CATALOGUES[store % CATALOGUES.length]!, id, goods) }
          : {};
      yield { store: stores[store]!, id, created_at, ...order, ...lines };
    }
    if (dayStart + DAY_MS > until) return;
  }
}
