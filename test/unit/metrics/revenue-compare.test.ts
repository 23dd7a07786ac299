// PC1 on the Revenue page, the pure parts: buckets matched by index, each figure's change by
// PC1's rule, and the compared CSV (PC1's column order, empty cells for null).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RevenueDay, RevenueReport } from '../../../src/metrics/revenue.js';
import { comparedFigures, matchBuckets, type ComparedReports } from '../../../src/metrics/revenue-compare.js';
import { COMPARED_CSV_HEADER, comparedRevenueCsv, csvChange } from '../../../src/metrics/revenue-csv.js';

const zero = { orders: 0, grossSales: 0, refunds: 0, taxes: 0, shipping: 0, fees: 0, netRevenue: 0 };
const day = (date: string, netRevenue = 0, orders = 0): RevenueDay => ({
  ...zero,
  date,
  orders,
  grossSales: netRevenue,
  netRevenue,
});
const report = (days: RevenueDay[]): RevenueReport => ({
  from: days[0]?.date ?? '2024-01-01',
  to: days.at(-1)?.date ?? '2024-01-01',
  granularity: 'day',
  days,
  totals: { ...zero, orders: days.reduce((n, d) => n + d.orders, 0) },
});

test('PC1: bucket k of the main period is matched with bucket k of the comparison', () => {
  const main = [day('2024-02-27'), day('2024-02-28'), day('2024-02-29')];
  const previous = [day('2023-02-27'), day('2023-02-28')];
  const matched = matchBuckets(main, previous);
  assert.deepEqual(
    matched.map((b) => [b.main.date, b.previous?.date]),
    [
      ['2024-02-27', '2023-02-27'],
      ['2024-02-28', '2023-02-28'],
      ['2024-02-29', undefined], // PC1: no k-th comparison bucket, date_previous null
    ],
  );
  // Comparison buckets past the main count are left out.
  assert.deepEqual(
    matchBuckets(previous, main).map((b) => b.previous?.date),
    ['2024-02-27', '2024-02-28'],
  );
  assert.deepEqual(matchBuckets([], main), []);
});

test('PC1: each figure against its previous value; null previous gives null change, 0 gives null', () => {
  const now = { ...zero, orders: 3, grossSales: 35.1, netRevenue: -5, refunds: 2 };
  const before = { ...zero, orders: 2, grossSales: 40, netRevenue: 10, refunds: 0 };
  const figures = comparedFigures(now, before);
  assert.deepEqual(figures.orders, { value: 3, previous: 2, change: 50 });
  assert.deepEqual(figures.grossSales, { value: 35.1, previous: 40, change: -12.3 }); // −12.25, half away
  assert.deepEqual(figures.netRevenue, { value: -5, previous: 10, change: -150 });
  assert.deepEqual(figures.refunds, { value: 2, previous: 0, change: null });
  assert.deepEqual(comparedFigures(now, undefined).orders, { value: 3, previous: null, change: null });
});

test('PC1: the compared CSV has PC1’s columns in order, empty cells for null, each change written as the API’s CSV writes it', () => {
  assert.equal(
    COMPARED_CSV_HEADER,
    'date,date_previous,orders,gross_sales,refunds,taxes,shipping,fees,net_revenue,' +
      'orders_previous,gross_sales_previous,refunds_previous,taxes_previous,shipping_previous,fees_previous,net_revenue_previous,' +
      'orders_change,gross_sales_change,refunds_change,taxes_change,shipping_change,fees_change,net_revenue_change',
  );
  const main = report([day('2024-03-04', 12.5, 1), day('2024-03-11', 0, 0)]);
  const previous = report([day('2024-02-26', 10, 2)]);
  const compared: ComparedReports = {
    main,
    previous,
    comparison: { mode: 'previous_period', from: '2024-02-26', to: '2024-03-03' },
    buckets: matchBuckets(main.days, previous.days),
  };
  assert.deepEqual(comparedRevenueCsv(compared).split('\r\n'), [
    COMPARED_CSV_HEADER,
    '2024-03-04,2024-02-26,1,12.50,0.00,0.00,0.00,0.00,12.50,2,10.00,0.00,0.00,0.00,0.00,10.00,-50,25,,,,,25',
    '2024-03-11,,0,0.00,0.00,0.00,0.00,0.00,0.00,,,,,,,,,,,,,,',
    'total,,1,0.00,0.00,0.00,0.00,0.00,0.00,2,0.00,0.00,0.00,0.00,0.00,0.00,-50,,,,,,',
    '',
  ]);
  assert.equal(csvChange(null), '');
  assert.equal(csvChange(0), '0');
  assert.equal(csvChange(-0), '0', 'no -0, as JSON writes it');
  assert.equal(csvChange(-21.4), '-21.4');
  assert.equal(csvChange(1234.5), '1234.5');
  assert.throws(() => csvChange(Number.NaN), RangeError);
});
