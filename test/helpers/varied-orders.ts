// A few hundred orders that reach every kind of value the API can show (issue 10, contract
// fuzzing): several stores, countries in either case, missing or empty, statuses that look like
// spreadsheet formulas (V1), excluded statuses (S1), anonymous and unusable e-mails (U1), returning
// customers across stores, refunds, offsets from UTC. Made from the order's index, so the same
// every run.
export const VARIED_STORES = [
  'https://boutique.example.fr',
  'https://shop.example.com',
  'https://marche.example.be',
] as const;
/** As sent: `de` is shown `DE`, the empty and the missing ones `Unknown` (section 5). */
const COUNTRIES_SENT = ['FR', 'BE', 'de', 'US', '', undefined, 'CH'] as const;
export const VARIED_COUNTRIES = ['FR', 'BE', 'DE', 'US', 'CH', 'Unknown'] as const;
export const VARIED_STATUSES = [
  'completed',
  'processing',
  'refunded',
  '=cmd',
  '+SUM(A1)',
  '-2+3',
  '@import',
  'on-hold',
  'pending', // S1: excluded by default
  'completed',
  'Completed',
] as const;
const OFFSETS = ['Z', '+02:00', '-05:00', '+05:30', '+01:00'] as const;
/** Orders spread over these days (UTC). */
export const VARIED_FIRST_DAY = '2025-01-01';
const SPREAD_DAYS = 690;

const money = (cents: number) => (cents / 100).toFixed(2);
const at = <T>(list: readonly T[], i: number): T => list[i % list.length] as T;

function email(i: number): string | undefined {
  if (i % 5 === 0) return undefined; // anonymous
  if (i % 5 === 1) return i % 10 === 1 ? 'pas-un-email' : ''; // unusable: anonymous too (U1)
  const customer = (i * 7) % 53;
  return i % 4 === 0 ? ` Client${customer}@Example.COM ` : `client${customer}@example.com`;
}

function createdAt(i: number): string {
  const day = new Date(Date.parse(`${VARIED_FIRST_DAY}T00:00:00Z`) + ((i * 37) % SPREAD_DAYS) * 86_400_000);
  const time = `${String((i * 5) % 24).padStart(2, '0')}:${String((i * 13) % 60).padStart(2, '0')}:00`;
  return `${day.toISOString().slice(0, 10)}T${time}${at(OFFSETS, i)}`;
}

function amounts(i: number): Record<string, string> {
  const total = 500 + ((i * 1373) % 40_000);
  const tax = Math.round(total / 6);
  const shipping = i % 4 === 0 ? 0 : 490;
  const fee = i % 9 === 0 ? 125 : 0;
  const refund =
    i % 10 === 3
      ? { refund_total: total, refund_tax: tax, refund_shipping: shipping } // fully refunded
      : i % 10 === 7
        ? { refund_total: 500, refund_tax: 83, refund_shipping: 0 } // partly refunded
        : { refund_total: 0, refund_tax: 0, refund_shipping: 0 };
  return {
    total: money(total),
    tax_total: money(tax),
    shipping_total: money(shipping),
    fee_total: money(fee),
    ...Object.fromEntries(Object.entries(refund).map(([field, cents]) => [field, money(cents)])),
  };
}

export function variedOrders(count = 360): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => {
    const country = at(COUNTRIES_SENT, i);
    const customer = email(i);
    return {
      store: at(VARIED_STORES, i),
      id: `contract-${i}`,
      created_at: createdAt(i),
      status: at(VARIED_STATUSES, i),
      ...(country === undefined ? {} : { billing_country: country }),
      ...(customer === undefined ? {} : { customer_email: customer }),
      items: i % 6,
      ...amounts(i),
    };
  });
}
