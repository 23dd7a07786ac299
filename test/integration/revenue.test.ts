// The web application's Revenue report against the public API (S3): same orders, same period,
// same figures to the cent, whatever the settings. Figures below were worked out by hand.
//
// Every stored amount has two decimals (numeric(16,2)), so every exact sum is a whole number of
// cents and round(…, 2) never meets a half cent: what can break "to the cent" is adding the
// daily figures as binary floats instead of summing exactly. The fixture makes that visible:
// 30.30 + 100.30 + 94.03 + 19.99 + 1.00 + 0.30 in JS floats is 245.92000000000002, and ten
// orders of 0.10 add up to 0.9999999999999999, while the exact sums are 245.92 and 1.00.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEDUCTIONS, type Deduction } from '../../src/catalog.js';
import type { Queryable } from '../../src/db/database.js';
import { findOrganization, updateReportSettings, type Organization } from '../../src/domain/organizations.js';
import { isAppError } from '../../src/errors.js';
import { revenueCsv } from '../../src/metrics/revenue-csv.js';
import { SqlReportEngine, type ReportEngine } from '../../src/metrics/engine.js';
import { revenueReport, type RevenueDay, type RevenueReport } from '../../src/metrics/revenue.js';
import {
  GRANULARITIES,
  addDays,
  bucketStart,
  earliestFrom,
  nextBucketStart,
  type Granularity,
} from '../../src/query/dates.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { tenantTablesWithoutFilter } from '../helpers/tenancy.js';

const A = 'https://a.example';
const B = 'https://b.example';
const order = (
  id: string,
  store: string,
  created_at: string,
  status: string,
  total: string,
  extra: Record<string, string> = {},
) => ({ store, id, created_at, status, items: 1, total, ...extra });

// Period 2026-03-01 … 2026-03-10 (UTC days). Default settings: excluded pending, failed,
// cancelled, checkout-draft; deductions refunds, taxes, shipping. Days 1, 4, 7 and 8 have no
// counted order. Per day: orders | gross | refunds | taxes | shipping | fees | net.
const FIXTURE = [
  order('r0', A, '2026-02-28T23:59:59Z', 'completed', '7.00'), // before the period (T1)
  // 2 March: 2 | 30.30 | 0 | 5.05 | 4.90 | 0.30 | 8.42 + 11.93 = 20.35
  order('r1', A, '2026-03-02T08:00:00Z', 'completed', '10.10', { tax_total: '1.68' }), // net 8.42
  // 23:30Z on 2 March written with an offset: a 2 March order in UTC.
  order('r2', B, '2026-03-03T00:30:00+01:00', 'completed', '20.20', {
    tax_total: '3.37',
    shipping_total: '4.90',
    fee_total: '0.30',
  }), // net 20.20 − 3.37 − 4.90 = 11.93
  order('r3', A, '2026-03-02T12:00:00Z', 'pending', '500.00', { tax_total: '83.33' }), // S1: nowhere
  // 3 March: 3 | 100.30 | 100.00 | 20.00 | 0 | 0 | 0.30
  order('r4', A, '2026-03-03T09:00:00Z', 'completed', '0.10'),
  order('r5', A, '2026-03-03T10:00:00Z', 'completed', '0.20'),
  // Fully refunded: 100 − 100 − (20 − 20) = 0, the refunded tax deducted once (S2).
  order('r6', B, '2026-03-03T11:00:00Z', 'refunded', '100.00', {
    tax_total: '20.00',
    refund_total: '100.00',
    refund_tax: '20.00',
  }),
  order('r7', A, '2026-03-03T12:00:00Z', 'failed', '77.77', { fee_total: '7.77' }), // S1
  // 5 March: 3 | 94.03 | 15.00 | 15.55 | 7.22 | 2.44 | 37.50 + 25.56 + 0.70 = 63.76
  order('r8', A, '2026-03-05T00:00:00Z', 'completed', '60.00', {
    tax_total: '10.00',
    shipping_total: '5.00',
    fee_total: '1.45',
    refund_total: '15.00',
    refund_tax: '2.50',
    refund_shipping: '5.00',
  }), // net 60 − 15 − (10 − 2.50) − (5 − 5) = 37.50
  order('r9', B, '2026-03-05T13:00:00Z', 'processing', '33.33', {
    tax_total: '5.55',
    shipping_total: '2.22',
    fee_total: '0.99',
  }), // net 33.33 − 5.55 − 2.22 = 25.56
  order('r10', B, '2026-03-05T14:00:00Z', 'on-hold', '0.70'), // counted until on-hold is excluded
  // 6 March, last second: 1 | 19.99 | 0.01 | 3.33 | 0.01 | 0.01 | 19.99 − 0.01 − 3.33 − 0.01 = 16.64
  order('r11', A, '2026-03-06T23:59:59Z', 'completed', '19.99', {
    tax_total: '3.33',
    shipping_total: '0.01',
    fee_total: '0.01',
    refund_total: '0.01',
  }),
  order('r12', B, '2026-03-08T10:00:00Z', 'cancelled', '1000.00'), // S1: 8 March stays empty
  // 9 March: ten orders of 0.10 (tax 0.01, shipping 0.02, fee 0.03):
  // 10 | 1.00 | 0 | 0.10 | 0.20 | 0.30 | 1.00 − 0.10 − 0.20 = 0.70
  ...Array.from({ length: 10 }, (_, i) =>
    order(
      `s${i}`,
      i % 2 === 0 ? A : B,
      `2026-03-09T${String(i + 8).padStart(2, '0')}:00:00Z`,
      i % 2 === 0 ? 'completed' : 'processing',
      '0.10',
      { tax_total: '0.01', shipping_total: '0.02', fee_total: '0.03' },
    ),
  ),
  // 10 March, last millisecond: 1 | 0.30 | 0 | 0 | 0 | 0 | 0.30
  order('r13', A, '2026-03-10T23:59:59.999Z', 'completed', '0.30'),
  order('r14', A, '2026-03-10T05:00:00Z', 'checkout-draft', '5.00'), // S1
  order('r15', A, '2026-03-11T00:00:00Z', 'completed', '7.00'), // after the period (T1)
];

// Totals: orders 2 + 3 + 3 + 1 + 10 + 1 = 20; gross 30.30 + 100.30 + 94.03 + 19.99 + 1.00 + 0.30
// = 245.92; refunds 115.01; taxes 44.03; shipping 12.33; fees 0.30 + 2.44 + 0.01 + 0.30 = 3.05;
// net 20.35 + 0.30 + 63.76 + 16.64 + 0.70 + 0.30 = 102.05, which is also
// 245.92 − 115.01 − (44.03 − 22.50) − (12.33 − 5.00) with the refunded tax and shipping.
const EXPECTED_TOTALS = {
  orders: 20,
  grossSales: 245.92,
  refunds: 115.01,
  taxes: 44.03,
  shipping: 12.33,
  fees: 3.05,
  netRevenue: 102.05,
};

const FROM = '2026-03-01';
const TO = '2026-03-10';
const ZERO = { orders: 0, grossSales: 0, refunds: 0, taxes: 0, shipping: 0, fees: 0, netRevenue: 0 };

// G2: orders from November 2025 to April 2026, across a year change, for the wider buckets. Default
// settings; p0, p15 lie outside every period below, p9 is pending (S1). Per order: gross.
const SEASONS = [
  order('p0', A, '2025-11-14T23:59:59Z', 'completed', '1000.00'),
  order('p1', A, '2025-11-15T00:00:00Z', 'completed', '10.10', { tax_total: '1.01' }),
  order('p2', A, '2025-12-22T10:00:00Z', 'completed', '20.20'), // Monday of ISO week 52
  order('p3', B, '2025-12-24T09:00:00Z', 'completed', '30.30', { tax_total: '5.05' }),
  order('p4', A, '2025-12-28T23:59:59Z', 'completed', '0.10'), // Sunday: still week 52
  order('p5', A, '2025-12-29T00:00:00Z', 'completed', '0.20'), // Monday of ISO week 1 of 2026
  order('p6', B, '2026-01-01T12:00:00Z', 'refunded', '40.40', { refund_total: '10.00' }),
  order('p7', A, '2026-01-11T23:59:59Z', 'processing', '0.30'), // Sunday of the week of 5 January
  order('p8', A, '2026-01-12T00:00:00Z', 'completed', '50.50', { shipping_total: '5.00' }),
  order('p9', A, '2026-01-14T10:00:00Z', 'pending', '99.99'), // S1
  order('p10', B, '2026-01-15T08:00:00Z', 'completed', '60.60'),
  order('p11', A, '2026-02-28T08:00:00Z', 'completed', '70.70', { fee_total: '0.70' }),
  order('p12', A, '2026-03-31T23:59:59Z', 'completed', '80.80', { tax_total: '13.47' }),
  order('p13', B, '2026-04-01T00:00:00Z', 'completed', '0.01'),
  order('p14', A, '2026-04-10T23:59:59Z', 'completed', '90.90'),
  order('p15', A, '2026-04-11T00:00:00Z', 'completed', '5000.00'),
];

let service: TestService;
let org: Organization;
let key: string;
let seasons: Organization;

async function tabular(query: string): Promise<Record<string, unknown>[]> {
  const response = await service.get(`/api/reports/tabular?${query}`, key);
  const body = (await response.json()) as { rows: Record<string, unknown>[] };
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.rows;
}

/** The report with the organization's current settings, as the web application would run it. */
async function report(
  from = FROM,
  to = TO,
  engine: ReportEngine = service.app.reportEngine,
  granularity: Granularity = 'day',
  of: Organization = org,
): Promise<RevenueReport> {
  return revenueReport(engine, await findOrganization(service.db, of.slug), from, to, granularity);
}

type FigureName = keyof typeof ZERO;
const FIGURE_NAMES = Object.keys(ZERO) as FigureName[];

/**
 * G2: the buckets follow one another from the one holding `from` to the one holding `to`, and each
 * holds exactly the sum of its days in the day report, worked in cents; the totals are the same.
 */
function assertBucketsAreSumsOfDays(daily: RevenueReport, grouped: RevenueReport): void {
  const g = grouped.granularity;
  const label = `${g} ${grouped.from}…${grouped.to}`;
  const starts: string[] = [];
  for (let start = bucketStart(daily.from, g); start <= daily.to; start = nextBucketStart(start, g))
    starts.push(start);
  assert.deepEqual(
    grouped.days.map((d) => d.date),
    starts,
    `${label}: every bucket, in order`,
  );
  const sums = new Map(starts.map((start) => [start, { ...ZERO }]));
  for (const day of daily.days) {
    const sum = sums.get(bucketStart(day.date, g));
    assert.ok(sum, `${label}: ${day.date} falls in a bucket`);
    for (const name of FIGURE_NAMES) sum[name] += name === 'orders' ? day[name] : Math.round(day[name] * 100);
  }
  for (const bucket of grouped.days) {
    const cents = sums.get(bucket.date) ?? ZERO;
    const expected = Object.fromEntries(
      FIGURE_NAMES.map((name) => [name, name === 'orders' ? cents[name] : cents[name] / 100]),
    );
    assert.deepEqual(
      bucket,
      { date: bucket.date, ...expected },
      `${label}: ${bucket.date} = sum of its days`,
    );
  }
  assert.deepEqual(grouped.totals, daily.totals, `${label}: totals as per day`);
}

const apiFigures = (r: Pick<RevenueDay, 'orders' | 'grossSales' | 'netRevenue' | 'taxes' | 'shipping'>) => ({
  orders: r.orders,
  gross_sales: r.grossSales,
  net_revenue: r.netRevenue,
  taxes: r.taxes,
  shipping: r.shipping,
});

/** S3: totals equal the API's totals row, each day with orders its date row, other days zero. */
async function assertAgreesWithApi(result: RevenueReport, label: string): Promise<void> {
  const period = `from=${result.from}&to=${result.to}`;
  const metrics = 'metrics=orders,gross_sales,net_revenue,taxes,shipping';
  const [totals] = await tabular(`${metrics}&${period}`);
  assert.deepEqual(apiFigures(result.totals), totals, `${label}: totals`);
  const grouping = `granularity=${result.granularity}`;
  const rows = await tabular(`${metrics}&dimensions=date&${period}&${grouping}&limit=100000`);
  const byDate = new Map(rows.map((row) => [String(row.date), row]));
  for (const day of result.days) {
    const row = byDate.get(day.date);
    if (row === undefined) assert.deepEqual(day, { date: day.date, ...ZERO }, `${label}: ${day.date} empty`);
    else assert.deepEqual({ date: day.date, ...apiFigures(day) }, row, `${label}: ${day.date}`);
  }
  assert.deepEqual(
    result.days.filter((d) => d.orders > 0).map((d) => d.date),
    rows.map((row) => row.date),
    `${label}: the days with orders are the API's dates`,
  );
}

describe('Revenue report (web application) against the API', () => {
  before(async () => {
    service = await startTestService({ RATE_LIMIT_MAX: '100000' });
    ({ org, key } = await service.addOrganization('Revenus', FIXTURE));
    // Another organization's orders on the same days must never show (tenancy).
    await service.addOrganization('Voisine', [
      order('n1', A, '2026-03-01T12:00:00Z', 'completed', '999.99'),
      order('n2', A, '2026-03-05T12:00:00Z', 'completed', '123.45', { fee_total: '1.00' }),
    ]);
    ({ org: seasons } = await service.addOrganization('Saisons', SEASONS));
  });
  after(() => service.cleanup());

  test('hand-worked figures: every day of the period, zeros on empty days, totals from exact sums', async () => {
    const result = await report();
    assert.equal(result.from, FROM);
    assert.equal(result.to, TO);
    assert.deepEqual(
      result.days.map((d) => d.date),
      Array.from({ length: 10 }, (_, i) => addDays(FROM, i)),
    );
    const expectedDays: Record<string, Omit<RevenueDay, 'date'>> = {
      '2026-03-02': {
        orders: 2,
        grossSales: 30.3,
        refunds: 0,
        taxes: 5.05,
        shipping: 4.9,
        fees: 0.3,
        netRevenue: 20.35,
      },
      '2026-03-03': {
        orders: 3,
        grossSales: 100.3,
        refunds: 100,
        taxes: 20,
        shipping: 0,
        fees: 0,
        netRevenue: 0.3,
      },
      '2026-03-05': {
        orders: 3,
        grossSales: 94.03,
        refunds: 15,
        taxes: 15.55,
        shipping: 7.22,
        fees: 2.44,
        netRevenue: 63.76,
      },
      '2026-03-06': {
        orders: 1,
        grossSales: 19.99,
        refunds: 0.01,
        taxes: 3.33,
        shipping: 0.01,
        fees: 0.01,
        netRevenue: 16.64,
      },
      '2026-03-09': {
        orders: 10,
        grossSales: 1,
        refunds: 0,
        taxes: 0.1,
        shipping: 0.2,
        fees: 0.3,
        netRevenue: 0.7,
      },
      '2026-03-10': {
        orders: 1,
        grossSales: 0.3,
        refunds: 0,
        taxes: 0,
        shipping: 0,
        fees: 0,
        netRevenue: 0.3,
      },
    };
    for (const day of result.days) {
      assert.deepEqual(day, { date: day.date, ...(expectedDays[day.date] ?? ZERO) }, day.date);
    }
    assert.deepEqual(result.totals, EXPECTED_TOTALS);
    // The fixture would catch totals added from the daily figures in JS floats.
    const floatSum = (field: keyof typeof ZERO) => result.days.reduce((sum, d) => sum + d[field], 0);
    assert.notEqual(floatSum('grossSales'), result.totals.grossSales);
    assert.notEqual(floatSum('fees'), result.totals.fees);
  });

  test('S3: the totals and every day equal the API figures to the cent', async () => {
    await assertAgreesWithApi(await report(), 'default settings');
  });

  test('the CSV of the report carries the exact totals', async () => {
    const csv = revenueCsv(await report());
    const lines = csv.split('\r\n');
    assert.equal(lines.length, 13); // header, 10 days, total, and the empty string after the last CRLF
    assert.equal(lines[1], '2026-03-01,0,0.00,0.00,0.00,0.00,0.00,0.00');
    assert.equal(lines[9], '2026-03-09,10,1.00,0.00,0.10,0.20,0.30,0.70');
    assert.equal(lines[11], 'total,20,245.92,115.01,44.03,12.33,3.05,102.05');
  });

  test('S2/S4: after each change of deductions, the report and the API still agree', async () => {
    // Hand-worked totals: no deduction nets the gross sales; fees alone take 3.05 off them;
    // all four take 3.05 off the default 102.05; refunds and taxes: 245.92 − 115.01 − 21.53.
    const expected = new Map<string, number>([
      ['', 245.92],
      ['fees', 242.87],
      ['refunds,taxes', 109.38],
      ['refunds,taxes,shipping', 102.05],
      ['refunds,taxes,shipping,fees', 99],
    ]);
    for (let mask = 0; mask < 1 << DEDUCTIONS.length; mask++) {
      const deductions: Deduction[] = DEDUCTIONS.filter((_, i) => mask & (1 << i));
      await updateReportSettings(service.db, org.id, { deductions });
      const result = await report();
      const label = deductions.join(',');
      await assertAgreesWithApi(result, label || 'no deduction');
      const net = expected.get(label);
      if (net !== undefined) assert.equal(result.totals.netRevenue, net, label);
      assert.equal(result.totals.grossSales, 245.92, 'deductions change only net revenue');
    }
    await updateReportSettings(service.db, org.id, { deductions: ['refunds', 'taxes', 'shipping'] });
  });

  test('S1: an excluded status counts nowhere, in the report as in the API', async () => {
    await updateReportSettings(service.db, org.id, {
      excludedStatuses: ['pending', 'failed', 'cancelled', 'checkout-draft', 'on-hold'],
    });
    const result = await report();
    // r10 (on-hold, 0.70 on 5 March) leaves: 5 March has 2 orders, 93.33 gross, 63.06 net.
    const march5 = result.days.find((d) => d.date === '2026-03-05');
    assert.deepEqual(march5 && [march5.orders, march5.grossSales, march5.netRevenue], [2, 93.33, 63.06]);
    assert.deepEqual(
      [result.totals.orders, result.totals.grossSales, result.totals.netRevenue],
      [19, 245.22, 101.35],
    );
    await assertAgreesWithApi(result, 'on-hold excluded');
    // Counting every status brings back r3, r7, r12 and r14.
    await updateReportSettings(service.db, org.id, { excludedStatuses: [], deductions: ['fees'] });
    const everything = await report();
    // 245.92 + 500.00 + 77.77 + 1000.00 + 5.00 = 1 828.69; fees 3.05 + 7.77 = 10.82.
    assert.deepEqual(
      [everything.totals.orders, everything.totals.grossSales, everything.totals.netRevenue],
      [24, 1828.69, 1817.87],
    );
    await assertAgreesWithApi(everything, 'nothing excluded');
    await updateReportSettings(service.db, org.id, {
      excludedStatuses: ['pending', 'failed', 'cancelled', 'checkout-draft'],
      deductions: ['refunds', 'taxes', 'shipping'],
    });
  });

  test('periods: one day, a period without orders, the two-year cap; a wider period still agrees', async () => {
    const one = await report('2026-03-05', '2026-03-05');
    assert.deepEqual(
      one.days.map((d) => [d.date, d.orders, d.netRevenue]),
      [['2026-03-05', 3, 63.76]],
    );
    assert.deepEqual(one.totals, omitDate(one.days[0]));
    await assertAgreesWithApi(one, 'one day');

    const empty = await report('2026-04-01', '2026-04-03');
    assert.deepEqual(empty.days, [
      { date: '2026-04-01', ...ZERO },
      { date: '2026-04-02', ...ZERO },
      { date: '2026-04-03', ...ZERO },
    ]);
    assert.deepEqual(empty.totals, ZERO);

    const capped = await report('2020-01-01', TO);
    assert.equal(capped.from, earliestFrom(TO)); // P4, as the API does
    assert.equal(capped.from, '2024-03-11');
    assert.equal(capped.days.length, 730);
    assert.ok(capped.days.every((d, i) => d.date === addDays(capped.from, i)));
    // r0 (7.00 on 28 February, no tax) is in the longer period: 21 orders, 252.92 gross, 109.05 net.
    assert.deepEqual(capped.totals, {
      ...EXPECTED_TOTALS,
      orders: 21,
      grossSales: 252.92,
      netRevenue: 109.05,
    });
    await assertAgreesWithApi(capped, 'two years');
  });

  test('bad periods are refused as INVALID_PARAMETER', async () => {
    for (const [from, to] of [
      ['2026-03-10', '2026-03-01'],
      ['2026-02-30', '2026-03-01'],
      ['2026-03-01', '10/03/2026'],
    ] as const) {
      await assert.rejects(report(from, to), (e) => isAppError(e) && e.code === 'INVALID_PARAMETER');
    }
  });

  test('G2 weeks of the March period: partial first and last ISO weeks, orders outside the period left out', async () => {
    const weeks = await report(FROM, TO, undefined, 'week');
    assert.equal(weeks.granularity, 'week');
    assert.deepEqual([weeks.from, weeks.to], [FROM, TO], 'the period itself is unchanged');
    // 1 March 2026 is a Sunday: its week starts on 23 February, where r0 (28 February) stays out;
    // the week of 9 March holds the 9th and 10th only, r15 (11 March) stays out.
    assert.deepEqual(
      weeks.days.map((d) => [d.date, d.orders, d.grossSales, d.netRevenue]),
      [
        ['2026-02-23', 0, 0, 0],
        ['2026-03-02', 9, 244.62, 101.05],
        ['2026-03-09', 11, 1.3, 1],
      ],
    );
    assert.deepEqual(weeks.totals, EXPECTED_TOTALS);
    assertBucketsAreSumsOfDays(await report(), weeks);
    await assertAgreesWithApi(weeks, 'weeks');
    for (const g of ['month', 'quarter', 'year'] as const) {
      const one = await report(FROM, TO, undefined, g);
      assert.deepEqual(
        one.days,
        [{ date: bucketStart(FROM, g), ...EXPECTED_TOTALS }],
        `${g}: one partial bucket holding the whole period`,
      );
      await assertAgreesWithApi(one, g);
    }
  });

  test('G2 weeks across a year change: ISO weeks from Monday 22 December 2025 to Monday 12 January 2026', async () => {
    const from = '2025-12-24';
    const to = '2026-01-14';
    const weeks = await report(from, to, undefined, 'week', seasons);
    // p2 (22 December) is before the period and p10 (15 January) after it: their weeks are partial.
    assert.deepEqual(
      weeks.days.map((d) => [d.date, d.orders, d.grossSales]),
      [
        ['2025-12-22', 2, 30.4],
        ['2025-12-29', 2, 40.6],
        ['2026-01-05', 1, 0.3],
        ['2026-01-12', 1, 50.5],
      ],
    );
    assert.deepEqual([weeks.totals.orders, weeks.totals.grossSales], [6, 121.8]);
    assertBucketsAreSumsOfDays(await report(from, to, undefined, 'day', seasons), weeks);
  });

  test('G2 months, quarters and years: partial first and last buckets, each the sum of its days, totals as per day', async () => {
    const from = '2025-11-15';
    const to = '2026-04-10';
    const daily = await report(from, to, undefined, 'day', seasons);
    assert.deepEqual([daily.totals.orders, daily.totals.grossSales], [13, 455.11]);
    const expected: Record<Exclude<Granularity, 'day' | 'week'>, [string, number, number][]> = {
      month: [
        ['2025-11-01', 1, 10.1], // from the 15th: p0 (14 November) stays out
        ['2025-12-01', 4, 50.8],
        ['2026-01-01', 4, 151.8], // p9 pending
        ['2026-02-01', 1, 70.7],
        ['2026-03-01', 1, 80.8],
        ['2026-04-01', 2, 90.91], // to the 10th: p15 (11 April) stays out
      ],
      quarter: [
        ['2025-10-01', 5, 60.9],
        ['2026-01-01', 6, 303.3],
        ['2026-04-01', 2, 90.91],
      ],
      year: [
        ['2025-01-01', 5, 60.9],
        ['2026-01-01', 8, 394.21],
      ],
    };
    for (const [g, buckets] of Object.entries(expected) as [Granularity, [string, number, number][]][]) {
      const grouped = await report(from, to, undefined, g, seasons);
      assert.deepEqual(
        grouped.days.map((d) => [d.date, d.orders, d.grossSales]),
        buckets,
        g,
      );
      assertBucketsAreSumsOfDays(daily, grouped);
    }
  });

  test('G2 and S3: every granularity, through the SQL engine and the application’s, equals the API', async () => {
    const sql = new SqlReportEngine(service.db);
    for (const [of, from, to] of [
      [org, FROM, TO],
      [seasons, '2025-11-15', '2026-04-10'],
      [seasons, '2020-01-01', '2026-04-10'], // P4: from moved up to 2024-04-11, a partial first bucket
    ] as const) {
      const daily = await report(from, to, undefined, 'day', of);
      for (const g of GRANULARITIES) {
        const grouped = await report(from, to, undefined, g, of);
        assert.deepEqual(await report(from, to, sql, g, of), grouped, `${g}: both engines`);
        assertBucketsAreSumsOfDays(daily, grouped);
        if (of === org) await assertAgreesWithApi(grouped, `${g} ${from}…${to}`);
      }
    }
  });

  test('through the SQL engine: bound parameters only, filtered by organization', async () => {
    const statements: { sql: string; params: readonly unknown[] }[] = [];
    const recording: Queryable = {
      query: (sql, params = []) => (statements.push({ sql, params }), service.db.query(sql, params)),
    };
    const hostile = { id: org.id, settings: { excludedStatuses: ["x') OR true --"], deductions: [] } };
    await revenueReport(new SqlReportEngine(recording), hostile, FROM, TO);
    await report(FROM, TO, new SqlReportEngine(recording));
    assert.equal(statements.length, 6); // per report: by day, net of refunds alone, net of fees alone
    for (const { sql, params } of statements) {
      assert.deepEqual(tenantTablesWithoutFilter(sql), [], sql);
      assert.match(sql, /o\.organization_id = \$1/);
      assert.equal(params[0], org.id);
      assert.ok(!sql.includes(FROM) && !sql.includes(TO) && !sql.includes("x')"), 'values are parameters');
    }
  });
});

function omitDate(day: RevenueDay | undefined): Omit<RevenueDay, 'date'> | undefined {
  if (day === undefined) return undefined;
  const figures: Partial<RevenueDay> = { ...day };
  delete figures.date;
  return figures as Omit<RevenueDay, 'date'>;
}
