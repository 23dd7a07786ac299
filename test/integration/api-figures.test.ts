// Every figure below was worked out by hand from FIXTURE (see the comments beside each order).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { updateReportSettings } from '../../src/domain/organizations.js';
import { REFERENCE_FIELDS } from '../helpers/oracle.js';
import { startTestService, type TestService } from '../helpers/service.js';

const A = 'https://a.example';
const B = 'https://b.example';
const order = (
  id: string,
  store: string,
  created_at: string,
  status: string,
  extra: Record<string, unknown>,
) => ({
  store,
  id,
  created_at,
  status,
  items: 1,
  total: '0',
  ...extra,
});

// March 2026 (UTC). Counted in March: o1 o2 o3 o4 o5 o9 o10 o13.
const FIXTURE = [
  order('o1', A, '2026-03-01T10:00:00Z', 'completed', {
    billing_country: 'FR',
    customer_email: 'alice@example.com',
    items: 2,
    total: '120.00',
    tax_total: '20.00',
  }),
  // 23:30Z: 1 March in UTC, 2 March in Paris (UTC+1).
  order('o2', A, '2026-03-01T23:30:00Z', 'completed', {
    billing_country: 'fr',
    customer_email: 'bob@example.com',
    total: '50.00',
    tax_total: '8.33',
    shipping_total: '5.00',
    fee_total: '1.00',
  }),
  // Same instant as o2, written with an offset; alice again, spelled differently (U1).
  order('o3', B, '2026-03-02T00:30:00+01:00', 'completed', {
    billing_country: 'BE',
    customer_email: ' Alice@Example.COM ',
    items: 3,
    total: '30.00',
    tax_total: '5.00',
    shipping_total: '4.90',
  }),
  // Fully refunded: nets 0 with the default deductions (S2).
  order('o4', B, '2026-03-05T12:00:00Z', 'refunded', {
    billing_country: 'DE',
    customer_email: 'carol@example.com',
    total: '100.00',
    tax_total: '20.00',
    refund_total: '100.00',
    refund_tax: '20.00',
  }),
  order('o5', A, '2026-03-10T09:00:00Z', 'completed', { items: 4, total: '10.01', tax_total: '1.67' }), // anonymous, no country
  order('o6', A, '2026-03-10T10:00:00Z', 'pending', {
    billing_country: 'FR',
    customer_email: 'dave@example.com',
    total: '999.99',
  }), // S1 excluded
  order('o7', A, '2026-02-10T10:00:00Z', 'completed', {
    billing_country: 'FR',
    customer_email: 'bob@example.com',
    total: '10.00',
  }), // bob's first order
  order('o8', B, '2026-02-20T10:00:00Z', 'cancelled', { customer_email: 'erin@example.com', total: '10.00' }), // excluded: not erin's first
  order('o9', B, '2026-03-15T10:00:00Z', 'completed', {
    billing_country: 'FR',
    customer_email: 'erin@example.com',
    total: '20.00',
    tax_total: '3.33',
  }),
  // Partial refund: 15.00 of which 2.50 tax and 5.00 shipping.
  order('o10', A, '2026-03-20T10:00:00Z', 'completed', {
    billing_country: 'CH',
    customer_email: 'alice@example.com',
    total: '60.00',
    tax_total: '10.00',
    shipping_total: '5.00',
    refund_total: '15.00',
    refund_tax: '2.50',
    refund_shipping: '5.00',
  }),
  order('o11', A, '2026-04-01T00:00:00Z', 'completed', { total: '7.00' }), // first instant after 31 March
  order('o12', A, '2026-02-28T23:59:59Z', 'completed', {
    customer_email: 'frank@example.com',
    total: '7.00',
  }), // last instant before
  order('o13', B, '2026-03-25T08:00:00Z', 'processing', {
    billing_country: 'GB',
    customer_email: 'not-an-email',
    items: 2,
    total: '33.33',
  }),
];

const MARCH = 'from=2026-03-01&to=2026-03-31';
let service: TestService;
let key: string;
let orgId: string;

async function table(query: string, k = key) {
  const response = await service.get(`/api/reports/tabular?${query}`, k);
  const body = (await response.json()) as {
    rows: Record<string, unknown>[];
    rowCount: number;
    [k: string]: unknown;
  };
  assert.equal(response.status, 200, JSON.stringify(body));
  return { response, body, rows: body.rows };
}

describe('tabular figures on hand-worked fixture orders', () => {
  before(async () => {
    service = await startTestService();
    const created = await service.addOrganization('Alpha', FIXTURE);
    key = created.key;
    orgId = created.org.id;
  });
  after(() => service.cleanup());

  test('T2/T5: totals row for March with every metric; M1 exact sums rounded once; S2 default deductions', async () => {
    const { body } = await table(
      `metrics=orders,items_sold,gross_sales,net_revenue,average_order_value,taxes,shipping,unique_customers,new_customers,returning_customers&${MARCH}`,
    );
    assert.deepEqual(Object.keys(body), REFERENCE_FIELDS);
    assert.deepEqual(body.dimensions, []);
    assert.equal(body.from, '2026-03-01');
    assert.equal(body.to, '2026-03-31');
    assert.equal(body.timezone, 'UTC');
    assert.equal(body.rowCount, 1);
    assert.deepEqual(body.rows, [
      {
        orders: 8,
        items_sold: 15,
        gross_sales: 423.34,
        net_revenue: 252.61, // 100 + 36.67 + 20.10 + 0 + 8.34 + 16.67 + 37.50 + 33.33
        average_order_value: 31.58, // 252.61 / 8 = 31.57625
        taxes: 68.33,
        shipping: 14.9,
        unique_customers: 4, // alice, bob, carol, erin
        new_customers: 3, // alice, carol, erin (erin's cancelled February order does not count, U2)
        returning_customers: 1, // bob ordered in February
      },
    ]);
  });

  test('T3/T4: one row per UTC day with orders, chronological; U5 a customer counts on each day', async () => {
    const { rows } = await table(`metrics=orders,net_revenue,unique_customers&dimensions=date&${MARCH}`);
    assert.deepEqual(rows, [
      { date: '2026-03-01', orders: 3, net_revenue: 156.77, unique_customers: 2 },
      { date: '2026-03-05', orders: 1, net_revenue: 0, unique_customers: 1 },
      { date: '2026-03-10', orders: 1, net_revenue: 8.34, unique_customers: 0 },
      { date: '2026-03-15', orders: 1, net_revenue: 16.67, unique_customers: 1 },
      { date: '2026-03-20', orders: 1, net_revenue: 37.5, unique_customers: 1 },
      { date: '2026-03-25', orders: 1, net_revenue: 33.33, unique_customers: 0 },
    ]);
  });

  test('T1/P5: timezone moves orders near midnight to another day but never changes which orders count', async () => {
    const { body, rows } = await table(
      `metrics=orders,net_revenue&dimensions=date&${MARCH}&timezone=Europe/Paris`,
    );
    assert.equal(body.timezone, 'Europe/Paris');
    assert.deepEqual(rows.slice(0, 2), [
      { date: '2026-03-01', orders: 1, net_revenue: 100 },
      { date: '2026-03-02', orders: 2, net_revenue: 56.77 },
    ]);
    assert.equal(
      rows.reduce((n, r) => n + (r.orders as number), 0),
      8,
      'o12 (1 March in Paris) stays out',
    );
    const eastern = await table(`metrics=orders&dimensions=date&${MARCH}&timezone=US/Eastern`);
    assert.equal(eastern.body.timezone, 'US/Eastern', 'an alias is echoed, not renamed');
  });

  test('store dimension: addresses sorted by code point; U5 alice counts in both stores', async () => {
    const { rows } = await table(
      `dimensions=store&metrics=orders,gross_sales,net_revenue,unique_customers&${MARCH}`,
    );
    assert.deepEqual(rows, [
      { store: A, orders: 4, gross_sales: 240.01, net_revenue: 182.51, unique_customers: 2 },
      { store: B, orders: 4, gross_sales: 183.33, net_revenue: 70.1, unique_customers: 3 },
    ]);
  });

  test('country dimension: upper-cased, Unknown when missing, sorted by code point', async () => {
    const { rows } = await table(`dimensions=country&metrics=orders&${MARCH}`);
    assert.deepEqual(rows, [
      { country: 'BE', orders: 1 },
      { country: 'CH', orders: 1 },
      { country: 'DE', orders: 1 },
      { country: 'FR', orders: 3 },
      { country: 'GB', orders: 1 },
      { country: 'Unknown', orders: 1 },
    ]);
  });

  test('U3/U4: customer types for the period; new + returning = unique in every row', async () => {
    const { rows } = await table(
      `dimensions=customer_type&metrics=orders,unique_customers,new_customers,returning_customers&${MARCH}`,
    );
    assert.deepEqual(
      rows,
      [
        {
          customer_type: 'anonymous',
          orders: 2,
          unique_customers: 0,
          new_customers: 0,
          returning_customers: 0,
        },
        { customer_type: 'new', orders: 5, unique_customers: 3, new_customers: 3, returning_customers: 0 },
        {
          customer_type: 'returning',
          orders: 1,
          unique_customers: 1,
          returning_customers: 1,
          new_customers: 0,
        },
      ].map((r) => ({
        customer_type: r.customer_type,
        orders: r.orders,
        unique_customers: r.unique_customers,
        new_customers: r.new_customers,
        returning_customers: r.returning_customers,
      })),
    );
  });

  test('U3: customer type is relative to the period: alice is returning from 2 March on', async () => {
    const { rows } = await table(
      'dimensions=customer_type&metrics=orders,unique_customers&from=2026-03-02&to=2026-03-31',
    );
    assert.deepEqual(rows, [
      { customer_type: 'anonymous', orders: 2, unique_customers: 0 },
      { customer_type: 'new', orders: 2, unique_customers: 2 }, // carol, erin
      { customer_type: 'returning', orders: 1, unique_customers: 1 }, // alice (o10)
    ]);
  });

  test('status dimension: as sent, excluded statuses absent (S1)', async () => {
    const { rows } = await table(`dimensions=status&metrics=orders&${MARCH}`);
    assert.deepEqual(rows, [
      { status: 'completed', orders: 6 },
      { status: 'processing', orders: 1 },
      { status: 'refunded', orders: 1 },
    ]);
  });

  test('T3: several dimensions sort by the first, then the second', async () => {
    const { rows } = await table(`dimensions=store,country&metrics=orders&${MARCH}`);
    assert.deepEqual(
      rows.map((r) => `${r.store} ${r.country}`),
      [`${A} CH`, `${A} FR`, `${A} Unknown`, `${B} BE`, `${B} DE`, `${B} FR`, `${B} GB`],
    );
  });

  test('T6: limit keeps the first rows; X-Rows-Truncated only when rows were cut off', async () => {
    const cut = await table(`dimensions=date&metrics=orders&${MARCH}&limit=2`);
    assert.equal(cut.body.rowCount, 2);
    assert.deepEqual(
      cut.rows.map((r) => r.date),
      ['2026-03-01', '2026-03-05'],
    );
    assert.equal(cut.response.headers.get('x-rows-truncated'), 'true');
    const exact = await table(`dimensions=date&metrics=orders&${MARCH}&limit=6`);
    assert.equal(exact.body.rowCount, 6);
    assert.equal(exact.response.headers.get('x-rows-truncated'), null);
  });

  test('T5: no dimension and no order gives one row of zeros', async () => {
    const { rows } = await table(
      'metrics=orders,net_revenue,average_order_value,unique_customers&from=2020-01-01&to=2020-01-31',
    );
    assert.deepEqual(rows, [{ orders: 0, net_revenue: 0, average_order_value: 0, unique_customers: 0 }]);
  });

  test('T1: the period boundaries are 00:00Z inclusive and the next midnight exclusive', async () => {
    const feb28 = await table('metrics=orders&from=2026-02-28&to=2026-02-28');
    assert.equal(feb28.rows[0]?.orders, 1); // o12 at 23:59:59Z
    const apr1 = await table('metrics=orders&from=2026-04-01&to=2026-04-01');
    assert.equal(apr1.rows[0]?.orders, 1); // o11 at 00:00:00Z
  });

  test('S2/S4: each deduction setting changes net revenue, a refund deducted once, on the next request', async () => {
    const expectations: [string[], number][] = [
      [[], 423.34],
      [['refunds'], 308.34], // 423.34 − 100 − 15
      [['taxes'], 355.01], // 423.34 − 68.33
      [['taxes', 'shipping'], 340.11], // − 14.90
      [['refunds', 'taxes'], 262.51], // − 115 − (68.33 − 22.50)
      [['refunds', 'taxes', 'shipping', 'fees'], 251.61], // 252.61 − 1.00
      [['refunds', 'taxes', 'shipping'], 252.61],
    ];
    for (const [deductions, net] of expectations) {
      await updateReportSettings(service.db, orgId, { deductions });
      const { rows } = await table(`metrics=net_revenue,gross_sales&${MARCH}`);
      assert.deepEqual(rows[0], { net_revenue: net, gross_sales: 423.34 }, deductions.join(','));
    }
  });

  test('S1/U2: excluding a status removes its orders and recomputes first orders', async () => {
    // Counting cancelled orders makes erin's February order her first: she becomes returning.
    await updateReportSettings(service.db, orgId, { excludedStatuses: ['pending'] });
    const counted = await table(`metrics=orders,new_customers,returning_customers&${MARCH}`);
    assert.deepEqual(counted.rows[0], { orders: 8, new_customers: 2, returning_customers: 2 });
    // Excluding refunded removes carol's only order.
    await updateReportSettings(service.db, orgId, {
      excludedStatuses: ['pending', 'failed', 'cancelled', 'checkout-draft', 'refunded'],
    });
    const { rows } = await table(`metrics=orders,gross_sales,unique_customers,new_customers&${MARCH}`);
    assert.deepEqual(rows[0], { orders: 7, gross_sales: 323.34, unique_customers: 3, new_customers: 2 });
    await updateReportSettings(service.db, orgId, {
      excludedStatuses: ['pending', 'failed', 'cancelled', 'checkout-draft'],
    });
  });
});

describe('rounding and isolation between organizations', () => {
  let other: { key: string };
  before(async () => {
    service = await startTestService();
    await service.addOrganization('Alpha', FIXTURE);
    other = await service.addOrganization('Beta', [
      order('b1', 'https://beta.example', '2026-03-03T12:00:00Z', 'completed', {
        total: '0.01',
        customer_email: 'zoe@example.com',
      }),
      order('b2', 'https://beta.example', '2026-03-03T13:00:00Z', 'completed', {
        total: '0.02',
        customer_email: 'alice@example.com',
      }),
      order('b3', 'https://beta.example', '2026-03-04T13:00:00Z', 'completed', { total: '0.10' }),
      order('b4', 'https://beta.example', '2026-03-04T14:00:00Z', 'completed', { total: '0.10' }),
      order('b5', 'https://beta.example', '2026-03-04T15:00:00Z', 'completed', { total: '0.10' }),
    ]);
  });
  after(() => service.cleanup());

  test('M1: a half cent rounds away from zero after exact division; 0.1 + 0.1 + 0.1 is exactly 0.3', async () => {
    const { rows } = await table(
      'metrics=net_revenue,average_order_value&dimensions=date&from=2026-03-03&to=2026-03-04',
      other.key,
    );
    assert.deepEqual(rows, [
      { date: '2026-03-03', net_revenue: 0.03, average_order_value: 0.02 }, // 0.03 / 2 = 0.015
      { date: '2026-03-04', net_revenue: 0.3, average_order_value: 0.1 },
    ]);
  });

  test('tenancy: a key reads only its own organization; customers are per organization (U1)', async () => {
    const { rows } = await table(`dimensions=store&metrics=orders,new_customers&${MARCH}`, other.key);
    assert.deepEqual(rows, [{ store: 'https://beta.example', orders: 5, new_customers: 2 }]); // alice is new here
  });
});
