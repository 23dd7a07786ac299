import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateDemoOrders, type DemoOrder } from '../../../src/demo/generate.js';
import { validateLines } from '../../../src/ingest/order-line.js';
import type { FieldError } from '../../../src/ingest/field-checks.js';

const END_DATE = '2026-06-30';
const DAY_MS = 86_400_000;
// Generated once: every check below reads the default two years (about 46,000 orders).
const orders = [...generateDemoOrders({ endDate: END_DATE, seed: 42 })];

function cents(amount: string): number {
  assert.match(amount, /^\d+\.\d{2}$/, `amount "${amount}" is not a non-negative decimal with 2 decimals`);
  return Number(amount.replace('.', ''));
}

/** U1: the customer behind an order, or undefined when it is anonymous. */
function customerOf(order: DemoOrder): string | undefined {
  const email = order.customer_email?.trim().toLowerCase();
  return email && /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) ? email : undefined;
}

function countBy<T>(values: Iterable<T>): Map<T, number> {
  const counts = new Map<T, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

test('the same seed gives the same orders, another seed other orders', () => {
  const options = { endDate: '2025-03-31', days: 60, seed: 7 };
  const first = JSON.stringify([...generateDemoOrders(options)]);
  assert.equal(JSON.stringify([...generateDemoOrders(options)]), first);
  assert.notEqual(JSON.stringify([...generateDemoOrders({ ...options, seed: 8 })]), first);
});

test('every order passes the import rules of SPEC section 12', () => {
  const periodStart = Date.parse('2024-07-01T00:00:00Z'); // END_DATE − 729 days
  const periodEnd = Date.parse(`${END_DATE}T00:00:00Z`) + DAY_MS;
  const idsByStore = new Map<string, Set<string>>();
  for (const order of orders) {
    for (const field of ['store', 'id', 'created_at', 'status'] as const) {
      assert.ok(typeof order[field] === 'string' && order[field].length > 0, `${field} is required`);
    }
    assert.match(order.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$/);
    const at = Date.parse(order.created_at);
    assert.ok(at >= periodStart && at < periodEnd, `${order.created_at} is outside the period (T1)`);
    assert.ok(Number.isInteger(order.items) && order.items >= 0);
    assert.ok(order.billing_country === undefined || /^([A-Z]{2})?$/.test(order.billing_country));
    assert.ok(order.customer_email === undefined || typeof order.customer_email === 'string');
    const total = cents(order.total);
    const [tax, shipping, fee] = [
      cents(order.tax_total),
      cents(order.shipping_total),
      cents(order.fee_total),
    ];
    const [refund, refundTax, refundShipping] = [
      order.refund_total,
      order.refund_tax,
      order.refund_shipping,
    ].map(cents) as [number, number, number];
    assert.ok(tax + shipping + fee <= total, `order ${order.id}: parts exceed the total`);
    assert.ok(refundTax + refundShipping <= refund, `order ${order.id}: refund parts exceed refund_total`);
    assert.ok(refund <= total && refundTax <= tax && refundShipping <= shipping);
    const ids = idsByStore.get(order.store) ?? new Set<string>();
    assert.ok(!ids.has(order.id), `id ${order.id} repeated in ${order.store}`);
    idsByStore.set(order.store, ids.add(order.id));
  }
});

test('three stores of different sizes', () => {
  const sizes = [...countBy(orders.map((o) => o.store)).values()].sort((a, b) => b - a);
  assert.equal(sizes.length, 3);
  assert.ok(sizes[0]! > sizes[1]! * 1.3 && sizes[1]! > sizes[2]! * 1.3, `sizes ${sizes.join(', ')}`);
});

test('customers come back, across months and stores (U2, U3)', () => {
  const months = new Map<string, Set<string>>();
  const stores = new Map<string, Set<string>>();
  for (const order of orders) {
    const customer = customerOf(order);
    if (!customer) continue;
    months.set(customer, (months.get(customer) ?? new Set()).add(order.created_at.slice(0, 7)));
    stores.set(customer, (stores.get(customer) ?? new Set()).add(order.store));
  }
  const loyal = [...months.values()].filter((m) => m.size >= 3).length;
  assert.ok(loyal > 100, `${loyal} customers ordered in 3 different months or more`);
  assert.ok(
    [...stores.values()].some((s) => s.size >= 2),
    'some customer orders from two stores',
  );
  assert.ok(months.size < orders.length * 0.7, 'many orders come from returning customers');
});

test('anonymous orders and e-mails to normalize exist (U1)', () => {
  const anonymous = orders.filter((o) => customerOf(o) === undefined);
  assert.ok(anonymous.length > orders.length * 0.03);
  assert.ok(anonymous.some((o) => o.customer_email === undefined));
  assert.ok(anonymous.some((o) => o.customer_email !== undefined && o.customer_email.trim() !== ''));
  assert.ok(orders.some((o) => o.customer_email !== o.customer_email?.trim().toLowerCase() && customerOf(o)));
});

test('several statuses, countries and time-zone notations', () => {
  const statuses = countBy(orders.map((o) => o.status));
  for (const status of ['completed', 'processing', 'refunded', 'cancelled', 'failed', 'pending', 'on-hold']) {
    assert.ok(statuses.has(status), status);
  }
  assert.ok(statuses.get('completed')! > orders.length / 2);
  const countries = countBy(orders.map((o) => o.billing_country || 'Unknown'));
  assert.ok(countries.size >= 8 && countries.has('Unknown'));
  assert.ok(countries.get('FR')! > orders.length / 2);
  assert.ok(
    orders.some((o) => o.created_at.endsWith('Z')) && orders.some((o) => o.created_at.endsWith(':00')),
  );
});

test('refunded orders are refunded in full, some completed ones in part', () => {
  for (const order of orders.filter((o) => o.status === 'refunded')) {
    assert.equal(order.refund_total, order.total);
    assert.equal(order.refund_tax, order.tax_total);
    assert.equal(order.refund_shipping, order.shipping_total);
  }
  const partial = orders.filter((o) => o.status === 'completed' && cents(o.refund_total) > 0);
  assert.ok(partial.length > 0 && partial.every((o) => cents(o.refund_total) < cents(o.total)));
  assert.ok(orders.some((o) => cents(o.fee_total) > 0) && orders.some((o) => cents(o.shipping_total) === 0));
});

test('French orders carry 20 % VAT included in their total', () => {
  for (const order of orders.filter((o) => o.billing_country === 'FR').slice(0, 2000)) {
    const taxable = cents(order.total) - cents(order.fee_total);
    assert.ok(Math.abs(cents(order.tax_total) - taxable / 6) <= 1, `order ${order.id}`);
  }
});

test('seasons: December above spring, weekends above weekdays, evenings above nights', () => {
  const months = countBy(orders.map((o) => o.created_at.slice(0, 7)));
  assert.ok(months.get('2024-12')! > months.get('2025-04')! * 1.3, 'December 2024 vs April 2025');
  assert.ok(months.get('2025-08')! < months.get('2025-06')!, 'summer dip');
  const utc = orders.map((o) => new Date(o.created_at));
  const weekdays = countBy(utc.map((d) => d.getUTCDay()));
  assert.ok(weekdays.get(0)! > weekdays.get(2)! * 1.15, 'Sunday vs Tuesday');
  const hours = countBy(utc.map((d) => d.getUTCHours()));
  assert.ok(hours.get(19)! > hours.get(4)! * 5, 'evening vs night');
  assert.ok(hours.get(23)! > 0 && hours.get(0)! > 0, 'orders near midnight UTC');
});

test('the two years are covered, day by day, with a growth trend', () => {
  const days = new Set(orders.map((o) => new Date(o.created_at).toISOString().slice(0, 10)));
  assert.equal(days.size, 730);
  assert.ok(days.has('2024-07-01') && days.has(END_DATE));
  const firstYear = orders.filter((o) => Date.parse(o.created_at) < Date.parse('2025-07-01T00:00:00Z'));
  assert.ok(orders.length - firstYear.length > firstYear.length * 1.05, 'the second year sells more');
});

test('invalid options are refused', () => {
  assert.throws(() => generateDemoOrders({ endDate: '2026-02-30' }).next(), RangeError);
  assert.throws(() => generateDemoOrders({ endDate: '2026-06-30', days: 0 }).next(), RangeError);
  assert.throws(() => generateDemoOrders({ endDate: '2026-06-30', stores: [] }).next(), RangeError);
});

// Issue 27: the demo's lines, from each store's catalogue, agree with their order.
const withLines = [...generateDemoOrders({ endDate: END_DATE, days: 120, seed: 42, lines: true })];

test('issue 27, L1: demo lines pass L1, their quantities make the order`s items, and the orders are the same as without lines', () => {
  const without = [...generateDemoOrders({ endDate: END_DATE, days: 120, seed: 42 })];
  assert.deepEqual(
    withLines.map(({ lines: _, ...order }) => order),
    without,
  );
  for (const order of withLines) {
    const errors: FieldError[] = [];
    const lines = validateLines(order.lines, errors);
    assert.deepEqual(errors, [], `order ${order.id}`);
    assert.equal(
      lines!.reduce((sum, l) => sum + l.quantity, 0),
      order.items,
      `order ${order.id}: items = Σ quantity`,
    );
  }
});

test('issue 27: demo refunds agree with the order: all lines of a refunded order, some of a partly refunded one, none otherwise', () => {
  let partial = 0;
  for (const order of withLines) {
    const lines = order.lines!;
    const refunded = lines.reduce((sum, l) => sum + cents(l.refunded_amount), 0);
    if (order.status === 'refunded') {
      for (const l of lines) assert.equal(l.refunded_quantity, l.quantity);
      assert.equal(
        refunded,
        lines.reduce((sum, l) => sum + cents(l.subtotal) - cents(l.discount), 0),
      );
    } else if (cents(order.refund_total) > 0) {
      partial++;
      assert.ok(refunded > 0 && refunded <= cents(order.refund_total), `order ${order.id}`);
    } else assert.equal(refunded, 0, `order ${order.id}`);
  }
  assert.ok(partial > 20, `${partial} partly refunded orders`);
  const products = new Set(withLines.flatMap((o) => o.lines!.map((l) => l.product_id)));
  const multi = withLines.some((o) => o.lines!.some((l) => l.categories.length > 1));
  const discounted = withLines.filter((o) => o.lines!.some((l) => l.discount !== '0.00')).length;
  assert.ok(products.size >= 36, `${products.size} products sold`);
  assert.ok(multi, 'some products are in several categories (L5)');
  assert.ok(discounted > withLines.length / 20, `${discounted} orders with a discount`);
});

test('issue 27, item 6: about 2.5 lines an order, the size the product reports are measured at', () => {
  const lines = withLines.reduce((sum, o) => sum + o.lines!.length, 0);
  const perOrder = lines / withLines.length;
  assert.ok(perOrder > 2.35 && perOrder < 2.65, `${perOrder.toFixed(2)} lines an order`);
});

test('issue 30, item 7: no demo order after `until`; the orders before it are those of a whole day', () => {
  const until = Date.parse(`${END_DATE}T09:30:00Z`);
  const cut = [...generateDemoOrders({ endDate: END_DATE, days: 3, seed: 42, until })];
  const whole = [...generateDemoOrders({ endDate: END_DATE, days: 3, seed: 42 })];
  assert.ok(cut.every((o) => Date.parse(o.created_at) <= until));
  assert.deepEqual(cut, whole.slice(0, cut.length));
  assert.ok(whole.length > cut.length && cut.some((o) => o.created_at.startsWith(END_DATE)));
});
