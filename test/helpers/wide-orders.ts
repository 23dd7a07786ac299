// Orders that make the widest answers (issue 26, item 6): 40 stores, 15 countries, 5 statuses,
// customers coming back, over 2024 and 2025, so that a report by date, store, country, customer
// type and status has about as many rows as orders, in each year (compare=previous_year).
import { mulberry32 } from './seeded-random.js';

const COUNTRIES = ['FR', 'DE', 'ES', 'IT', 'BE', 'NL', 'PT', 'AT', 'IE', 'PL', 'SE', 'DK', 'FI', 'CZ', 'GR'];
const STATUSES = ['completed', 'processing', 'on-hold', 'shipped', 'delivered'];

/** `count` orders, the same for the same count. */
export function wideOrders(count: number): Record<string, unknown>[] {
  const random = mulberry32(26);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const start = Date.UTC(2024, 0, 1);
  const span = Date.UTC(2026, 0, 1) - start;
  return Array.from({ length: count }, (_, i) => ({
    store: `https://store${i % 40}.example`,
    id: `w${i}`,
    created_at: new Date(start + Math.floor(random() * span)).toISOString(),
    status: pick(STATUSES),
    billing_country: pick(COUNTRIES),
    ...(i % 10 === 0 ? {} : { customer_email: `c${Math.floor(random() * count * 0.4)}@example.org` }),
    items: 1 + (i % 4),
    total: `${(10 + random() * 200).toFixed(2)}`,
    tax_total: '2.00',
    shipping_total: '4.90',
  }));
}

/** The widest answer: ten metrics by date, store, country, customer type and status (limit=100000). */
export const WIDEST =
  'metrics=orders,gross_sales,net_revenue,taxes,shipping,items_sold,average_order_value,unique_customers,new_customers,returning_customers' +
  '&dimensions=date,store,country,customer_type,status&from=2025-01-01&to=2025-12-31&limit=100000';
