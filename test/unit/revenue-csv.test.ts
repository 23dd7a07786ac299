import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RevenueReport } from '../../src/metrics/revenue.js';
import { REVENUE_CSV_HEADER, csvAmount, revenueCsv } from '../../src/metrics/revenue-csv.js';

const zero = { orders: 0, grossSales: 0, refunds: 0, taxes: 0, shipping: 0, fees: 0, netRevenue: 0 };

const REPORT: RevenueReport = {
  from: '2026-03-01',
  to: '2026-03-03',
  granularity: 'day',
  days: [
    {
      date: '2026-03-01',
      orders: 2,
      grossSales: 12.5,
      refunds: 0,
      taxes: 2.08,
      shipping: 4.9,
      fees: 0.3,
      netRevenue: 5.52,
    },
    { date: '2026-03-02', ...zero },
    {
      date: '2026-03-03',
      orders: 1,
      grossSales: 100,
      refunds: 100,
      taxes: 20,
      shipping: 0,
      fees: 1.05,
      netRevenue: -1.05,
    },
  ],
  // As revenueReport gives them: from the exact sums, not added here.
  totals: {
    orders: 3,
    grossSales: 112.5,
    refunds: 100,
    taxes: 22.08,
    shipping: 4.9,
    fees: 1.35,
    netRevenue: 4.47,
  },
};

test('revenueCsv: header, a line per day, the total line, CRLF line ends, two decimals', () => {
  assert.equal(
    revenueCsv(REPORT),
    'date,orders,gross_sales,refunds,taxes,shipping,fees,net_revenue\r\n' +
      '2026-03-01,2,12.50,0.00,2.08,4.90,0.30,5.52\r\n' +
      '2026-03-02,0,0.00,0.00,0.00,0.00,0.00,0.00\r\n' +
      '2026-03-03,1,100.00,100.00,20.00,0.00,1.05,-1.05\r\n' +
      'total,3,112.50,100.00,22.08,4.90,1.35,4.47\r\n',
  );
  assert.equal(REVENUE_CSV_HEADER, 'date,orders,gross_sales,refunds,taxes,shipping,fees,net_revenue');
});

test('revenueCsv: every cell is a date, an integer or an amount; nothing a spreadsheet could run', () => {
  const days = Array.from({ length: 40 }, (_, i) => ({
    date: `2026-01-${String((i % 28) + 1).padStart(2, '0')}`,
    orders: i * 3,
    grossSales: i * 1.1,
    refunds: i * 0.1,
    taxes: i * 0.07,
    shipping: -i * 0.01,
    fees: 0.1 + 0.2,
    netRevenue: -i * 1.01,
  }));
  const csv = revenueCsv({ from: '2026-01-01', to: '2026-02-09', granularity: 'day', days, totals: zero });
  assert.ok(csv.endsWith('\r\n'));
  const lines = csv.slice(0, -2).split('\r\n');
  assert.equal(lines.length, 42);
  assert.ok(!csv.replace(/\r\n/g, '').includes('\n') && !csv.replace(/\r\n/g, '').includes('\r'));
  for (const [n, line] of lines.slice(1).entries()) {
    const cells = line.split(',');
    assert.equal(cells.length, 8, line);
    assert.match(cells[0] ?? '', n === 40 ? /^total$/ : /^\d{4}-\d{2}-\d{2}$/);
    assert.match(cells[1] ?? '', /^\d+$/);
    for (const cell of cells.slice(2)) assert.match(cell, /^-?\d+\.\d{2}$/, line);
    assert.doesNotMatch(line, /(^|,)[=+@\t\r"]/);
  }
  assert.equal(lines[4], '2026-01-04,9,3.30,0.30,0.21,-0.03,0.30,-3.03', 'binary noise is not printed');
});

test('csvAmount: exactly two decimals, a dot, no -0.00, no binary noise', () => {
  const cases: [number, string][] = [
    [0, '0.00'],
    [-0, '0.00'],
    [12.5, '12.50'],
    [0.1 + 0.2, '0.30'],
    [245.92000000000002, '245.92'],
    [3.0499999999999994, '3.05'],
    [-3.05, '-3.05'],
    [-0.001, '0.00'],
    [1234567.89, '1234567.89'],
    [9_999_999_999_999.99, '9999999999999.99'],
  ];
  for (const [value, text] of cases) assert.equal(csvAmount(value), text, String(value));
});

test('revenueCsv refuses values that are not figures rather than writing them', () => {
  const bad = (patch: Record<string, unknown>): RevenueReport =>
    ({ ...REPORT, days: [{ ...REPORT.days[0], ...patch }] }) as RevenueReport;
  assert.throws(() => revenueCsv(bad({ date: '=HYPERLINK("http://x")' })), RangeError);
  assert.throws(() => revenueCsv(bad({ grossSales: Number.NaN })), RangeError);
  assert.throws(() => revenueCsv(bad({ netRevenue: Infinity })), RangeError);
  assert.throws(() => revenueCsv(bad({ orders: 1.5 })), RangeError);
});

test('revenueCsv, G2: a line per bucket dated by its first day, which may precede the period', () => {
  const month = (date: string, orders: number, grossSales: number) => ({
    ...zero,
    date,
    orders,
    grossSales,
    netRevenue: grossSales,
  });
  const csv = revenueCsv({
    from: '2026-01-15',
    to: '2026-03-02',
    granularity: 'month',
    days: [month('2026-01-01', 1, 10.1), month('2026-02-01', 0, 0), month('2026-03-01', 2, 0.2)],
    totals: { ...zero, orders: 3, grossSales: 10.3, netRevenue: 10.3 },
  });
  assert.deepEqual(csv.split('\r\n'), [
    REVENUE_CSV_HEADER,
    '2026-01-01,1,10.10,0.00,0.00,0.00,0.00,10.10',
    '2026-02-01,0,0.00,0.00,0.00,0.00,0.00,0.00',
    '2026-03-01,2,0.20,0.00,0.00,0.00,0.00,0.20',
    'total,3,10.30,0.00,0.00,0.00,0.00,10.30',
    '',
  ]);
});
