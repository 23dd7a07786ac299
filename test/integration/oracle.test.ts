// The API against an independent oracle (test/helpers/oracle.ts, written from SPEC.md only) on
// ~1,650 generated orders full of edge cases, for hundreds of random queries and several Report
// settings. About 40 % of the queries use section 14's parameters (F1 filters, G2 granularity,
// O1 offset), and some of those are asked again as CSV (V1). Deterministic: the seed is printed;
// ORACLE_SEED=<n> replays another one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseCsv } from 'csv-parse/sync';
import { updateReportSettings } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { startSqlEngineApp, startTestService, type TestService } from '../helpers/service.js';
import {
  DEFAULT_SETTINGS,
  DIMENSION_IDS,
  FILTER_DIMENSIONS,
  GRANULARITIES,
  METRIC_IDS,
  MAX_OFFSET,
  addDays,
  csvCells,
  currentOrders,
  earliestFrom,
  freezeLines,
  oracle,
  queryFromSearch,
  resolveIds,
  rfc4180Violation,
  type DimensionId,
  type Filters,
  type Granularity,
  type MetricId,
  type OracleAnswer,
  type RawOrder,
  type ReportSettings,
} from '../helpers/oracle.js';
import { mulberry32 } from '../helpers/seeded-random.js';

const SEED = Number(process.env.ORACLE_SEED ?? 20261122) >>> 0;

// ---------------------------------------------------------------------------------------------
// Seeded PRNG (mulberry32) and helpers

const random = mulberry32(SEED);
const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const chance = (p: number) => random() < p;
function pick<T>(items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}
function weighted<T>(entries: readonly (readonly [T, number])[]): T {
  const total = entries.reduce((s, [, w]) => s + w, 0);
  let r = random() * total;
  for (const [value, w] of entries) {
    r -= w;
    if (r < 0) return value;
  }
  return entries[entries.length - 1]![0];
}
function shuffle<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Instants

const DAY_MS = 86_400_000;
const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const FIRST_DAY = '2023-01-01';
const LAST_DAY = '2026-12-31';
const randomDay = (first = FIRST_DAY, last = LAST_DAY) =>
  dayOf(dayMs(first) + int(0, (dayMs(last) - dayMs(first)) / DAY_MS) * DAY_MS);

const offsetFormats = new Map<string, Intl.DateTimeFormat>();
/** The zone's UTC offset at an instant, in minutes. */
function zoneOffsetMinutes(zone: string, ms: number): number {
  let f = offsetFormats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    offsetFormats.set(zone, f);
  }
  const name = f.formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}
/** The instant of 00:00 local time on `day` in `zone` (or the first instant after a skipped midnight). */
function localMidnight(zone: string, day: string): number {
  let ms = dayMs(day);
  for (let i = 0; i < 3; i++) ms = dayMs(day) - zoneOffsetMinutes(zone, ms) * 60_000;
  return ms;
}

const MIDNIGHT_ZONES = [
  'Europe/Paris',
  'America/New_York',
  'Asia/Kolkata',
  'Pacific/Auckland',
  'Asia/Kathmandu',
  'Pacific/Kiritimati',
  'America/Los_Angeles',
  'Pacific/Chatham',
  'America/St_Johns',
  'Australia/Lord_Howe',
];
const DST_DAYS = [
  // Europe
  '2024-03-31',
  '2024-10-27',
  '2025-03-30',
  '2025-10-26',
  '2026-03-29',
  '2026-10-25',
  // United States
  '2024-03-10',
  '2024-11-03',
  '2025-03-09',
  '2025-11-02',
  '2026-03-08',
  '2026-11-01',
  // New Zealand, Lord Howe
  '2024-04-07',
  '2024-09-29',
  '2025-04-06',
  '2025-09-28',
  '2025-10-05',
  '2026-04-05',
  '2026-09-27',
];
const OFFSETS = ['+00:00', '+01:00', '+02:00', '-05:00', '-04:00', '+05:30', '+05:45', '-08:00', '+14:00'];
const RARE_OFFSETS = ['-12:00', '+12:45', '-03:30', '+13:00', '-09:30', '+0530', '-0800'];

/** An instant, in whole milliseconds plus sub-millisecond digits for the text. */
interface Instant {
  ms: number;
  subMs: string; // 0 to 6 extra digits after the milliseconds
}

function generateInstant(): Instant {
  const kind = weighted([
    ['uniform', 30],
    ['utc-midnight', 25],
    ['local-midnight', 25],
    ['dst', 12],
    ['year-end', 8],
  ] as const);
  let ms: number;
  switch (kind) {
    case 'uniform':
      ms = dayMs(FIRST_DAY) + Math.floor(random() * (dayMs(LAST_DAY) - dayMs(FIRST_DAY)));
      break;
    case 'utc-midnight':
      ms = dayMs(randomDay()) + nearZero();
      break;
    case 'local-midnight': {
      const day = chance(0.3) ? pick(DST_DAYS) : randomDay();
      ms = localMidnight(pick(MIDNIGHT_ZONES), addDays(day, int(0, 1))) + nearZero();
      break;
    }
    case 'dst':
      ms = dayMs(pick(DST_DAYS)) + int(-6 * 3600, 30 * 3600) * 1000 + int(0, 999);
      break;
    case 'year-end':
      ms = dayMs(pick(['2024-01-01', '2025-01-01', '2026-01-01', '2024-03-01', '2025-03-01'])) + nearZero();
      break;
  }
  let subMs = '';
  if (chance(0.15)) subMs = String(int(0, 999)).padStart(3, '0');
  // Digits beyond the microsecond never round up past the millisecond here (see the sub-µs test).
  if (chance(0.05) && ms % 1000 !== 999) subMs = String(int(0, 999_999)).padStart(6, '0');
  return { ms, subMs };
}

/** Within ±20 minutes of a boundary; exact boundary and the last instant before it often. */
function nearZero(): number {
  return weighted([
    [0, 10],
    [-1, 5],
    [-1000, 5],
    [int(-20 * 60_000, 20 * 60_000), 80],
  ] as const);
}

function renderInstant({ ms, subMs }: Instant): string {
  const offset = chance(0.35) ? 'Z' : chance(0.85) ? pick(OFFSETS) : pick(RARE_OFFSETS);
  let minutes = 0;
  if (offset !== 'Z') {
    const m = /([+-])(\d{2}):?(\d{2})/.exec(offset)!;
    minutes = (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  }
  const wall = new Date(ms + minutes * 60_000).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const millis = wall.slice(20, 23);
  let fraction = '';
  if (subMs !== '') fraction = `.${millis}${subMs}`;
  else if (millis !== '000') fraction = chance(0.5) ? `.${millis}` : `.${millis.replace(/0+$/, '')}`;
  else if (chance(0.1)) fraction = '.000';
  let clock = wall.slice(11, 19);
  if (fraction === '' && clock.endsWith(':00') && chance(0.3)) clock = clock.slice(0, 5); // hh:mm
  return `${wall.slice(0, 10)}T${clock}${fraction}${offset}`;
}

// ---------------------------------------------------------------------------------------------
// Orders

const STORES = [
  'https://boutique.example.fr',
  'https://atelier-lyon.example.fr',
  'https://shop.example.com',
  'https://outlet.example.de/fr',
];
function renderStore(store: string): string {
  if (store === 'https://shop.example.com' && chance(0.3)) return chance(0.8) ? `${store}/` : `${store}//`;
  if (store === 'https://outlet.example.de/fr' && chance(0.2)) return `${store}/`;
  return store;
}

const STATUSES = [
  ['completed', 40],
  ['processing', 12],
  ['Completed', 5],
  ['on-hold', 5],
  ['refunded', 6],
  ['pending', 6],
  ['Pending', 2],
  ['failed', 3],
  ['cancelled', 4],
  ['checkout-draft', 2],
  ['wc-completed', 2],
  ['expédiée', 2],
  ['Émise', 1],
  ['completed ', 1],
  ['📦 shipped', 1],
  ['ｆｕｌｆｉｌｌｅｄ', 1],
  // V1: text a spreadsheet would evaluate, with a comma and quotes.
  ['=HYPERLINK("https://x.example","x")', 1],
  ['-1', 1],
] as const;

const COUNTRIES = [
  ['FR', 25],
  ['fr', 6],
  ['Fr', 2],
  ['BE', 6],
  ['DE', 8],
  ['de', 2],
  ['US', 10],
  ['GB', 6],
  ['CH', 4],
  ['IN', 4],
  ['NZ', 4],
  ['', 6],
  [undefined, 10],
  [null, 2],
] as const;

const FIRST_NAMES = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy'];
const DOMAINS = ['example.com', 'mail.example.fr', 'exemple.de', 'post.example.co.uk'];
const CUSTOMERS: string[] = [];
for (let i = 0; i < 230; i++) CUSTOMERS.push(`${pick(FIRST_NAMES)}.${i}@${pick(DOMAINS)}`);
CUSTOMERS.push('élodie@example.fr', 'x@example.', 'y@.com', "o'brien+tag@example.ie");

const UNUSABLE_EMAILS = [
  'no-at-sign.example.com',
  'two@@example.com',
  'a@b@example.com',
  '@example.com',
  'user@localhost',
  'inner space@example.com',
  'tab\tinside@example.com',
  'alice.1@exa mple.com',
  '',
  '   ',
];

function renderEmail(email: string): string {
  let text = email;
  const c = random();
  if (c < 0.1) text = text.toUpperCase();
  else if (c < 0.25) text = [...text].map((ch) => (chance(0.5) ? ch.toUpperCase() : ch)).join('');
  if (chance(0.1)) text = ` ${text}  `;
  else if (chance(0.03)) text = `\t${text}\n`;
  return text;
}

function customerEmail(): string | null | undefined {
  const c = random();
  if (c < 0.1) return undefined;
  if (c < 0.12) return null;
  if (c < 0.2) return pick(UNUSABLE_EMAILS);
  // A few customers order often, most rarely.
  return renderEmail(CUSTOMERS[Math.floor(CUSTOMERS.length * random() ** 2)]!);
}

function renderAmount(cents: number, optional: boolean): string | number | undefined {
  if (optional && cents === 0 && chance(0.4)) return undefined;
  const text = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
  const c = random();
  if (c < 0.15) return Number(text);
  if (c < 0.3) return text.replace(/\.(\d*?)0+$/, '.$1').replace(/\.$/, '');
  return text;
}

function amounts(): Partial<RawOrder> & { total: string | number } {
  const kind = weighted([
    ['normal', 80],
    ['zero', 8],
    ['large', 4],
    ['odd', 8],
  ] as const);
  let total = kind === 'zero' ? 0 : kind === 'large' ? int(1e9, 5e11) : int(1, 60_000);
  let tax = Math.floor(total * random() * 0.2);
  let shipping = int(0, Math.min(1500, total - tax));
  const fee = chance(0.15) ? int(0, 400) : 0;
  if (kind === 'odd') {
    // A free order that still records tax or shipping: negative net revenue.
    total = int(0, 50);
    tax = int(0, 500);
    shipping = int(0, 900);
  }
  let refund = 0;
  let refundTax = 0;
  let refundShipping = 0;
  const r = random();
  if (r < 0.12) {
    refund = total;
    refundTax = Math.min(tax, refund);
    refundShipping = Math.min(shipping, refund - refundTax);
  } else if (r < 0.24 && total > 0) {
    refund = int(1, total);
    refundTax = int(0, Math.min(tax, refund));
    refundShipping = int(0, Math.min(shipping, refund - refundTax));
  }
  return {
    total: renderAmount(total, false)!,
    tax_total: renderAmount(tax, true),
    shipping_total: renderAmount(shipping, true),
    fee_total: renderAmount(fee, true),
    refund_total: renderAmount(refund, true),
    refund_tax: renderAmount(refundTax, true),
    refund_shipping: renderAmount(refundShipping, true),
  };
}

function withoutUndefined(order: Record<string, unknown>): RawOrder {
  for (const k of Object.keys(order)) if (order[k] === undefined) delete order[k];
  return order as unknown as RawOrder;
}

let nextId = 1000;
function generateOrder(store = pick(STORES), id?: string): RawOrder {
  return withoutUndefined({
    store: renderStore(store),
    id: id ?? `${chance(0.5) ? '#' : ''}${nextId++}`,
    created_at: renderInstant(generateInstant()),
    status: weighted(STATUSES),
    billing_country: weighted(COUNTRIES),
    customer_email: customerEmail(),
    items: chance(0.05) ? 0 : int(1, 12),
    ...amounts(),
  });
}

/** `count` lines; about 7 % of them replace an earlier line of the same batch (I2, last wins). */
function generateBatch(count: number, earlier: readonly RawOrder[] = []): RawOrder[] {
  const lines: RawOrder[] = [];
  while (lines.length < count) {
    const pool = [...earlier, ...lines];
    if (pool.length > 0 && chance(0.07)) {
      const old = pick(pool);
      const base = old.store.replace(/\/+$/, '');
      const replacement = generateOrder(base, old.id);
      if (chance(0.4)) replacement.created_at = old.created_at; // same instant, new content
      lines.push(replacement);
    } else if (lines.length > 0 && chance(0.04)) {
      // The same order id in another store is another order.
      const other = pick(lines);
      lines.push(generateOrder(pick(STORES.filter((s) => s !== other.store.replace(/\/+$/, ''))), other.id));
    } else {
      lines.push(generateOrder());
    }
  }
  return lines;
}

/** Customers whose first order is excluded (S1, U2): an early pending or failed order, then counted ones. */
function excludedFirstOrders(): RawOrder[] {
  const lines: RawOrder[] = [];
  for (let i = 0; i < 25; i++) {
    const email = `excluded-first.${i}@example.com`;
    const first = generateOrder();
    first.customer_email = renderEmail(email);
    first.status = pick(['pending', 'failed', 'cancelled', 'Pending', 'on-hold']);
    first.created_at = renderInstant({
      ms: dayMs(randomDay('2023-01-01', '2024-06-30')) + nearZero(),
      subMs: '',
    });
    lines.push(first);
    for (let k = int(1, 3); k > 0; k--) {
      const later = generateOrder();
      later.customer_email = renderEmail(email);
      lines.push(later);
    }
  }
  return lines;
}

/** Customers with unusual but usable addresses (U1): non-ASCII case, dot-ended domain, quote. */
function specialCustomers(): RawOrder[] {
  const lines: RawOrder[] = [];
  const spellings: [string, string[]][] = [
    ['élodie@example.fr', ['ÉLODIE@EXAMPLE.FR', 'Élodie@Example.fr', ' élodie@example.fr ']],
    ['x@example.', ['X@EXAMPLE.', 'x@example.']],
    ['y@.com', ['Y@.COM', 'y@.com']],
    ["o'brien+tag@example.ie", ["O'Brien+Tag@Example.IE", "o'brien+tag@example.ie"]],
  ];
  for (const [, texts] of spellings) {
    for (let k = 0; k < 6; k++) {
      const line = generateOrder();
      line.customer_email = pick(texts);
      line.status = chance(0.8) ? 'completed' : weighted(STATUSES);
      lines.push(line);
    }
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Queries

const TIME_ZONES = [
  'UTC',
  'Europe/Paris',
  'America/New_York',
  'Asia/Kolkata',
  'Pacific/Auckland',
  'Asia/Kathmandu',
  'Pacific/Kiritimati',
  'Pacific/Chatham',
  'America/St_Johns',
  'America/Los_Angeles',
  'Australia/Lord_Howe',
  'US/Eastern',
  'Etc/GMT+12',
];

interface GeneratedQuery {
  path: string;
  dimensions: DimensionId[];
  metrics: MetricId[];
  from: string;
  to: string;
  timezone: string;
  limit?: number;
  /** V1: the same query is also asked as CSV, by `format=csv` or by `Accept: text/csv`. */
  csv?: 'format' | 'accept';
}

function idParam(name: string, ids: readonly string[]): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%2C/g, ',');
  if (ids.length > 1 && chance(0.1)) {
    // P1: the parameter given twice.
    const cut = int(1, ids.length - 1);
    return `${name}=${enc(ids.slice(0, cut).join(','))}&${name}=${enc(ids.slice(cut).join(','))}`;
  }
  let items = [...ids];
  if (chance(0.15) && items.length > 0) {
    // P1: blanks, empty items and duplicates.
    items = items.map((id) => (chance(0.3) ? ` ${id} ` : id));
    items.splice(int(0, items.length), 0, '');
    items.push(pick(ids));
  }
  return `${name}=${enc(items.join(','))}`;
}

function generatePeriod(days: readonly string[]): { from: string; to: string } {
  const kind = weighted([
    ['one-day', 20],
    ['short', 25],
    ['medium', 18],
    ['long', 10],
    ['over-cap', 12],
    ['at-cap', 8],
    ['empty', 7],
  ] as const);
  // Periods often start or end on a day with orders near midnight.
  const anchor = () =>
    chance(0.6) ? addDays(pick(days), int(-1, 1)) : randomDay('2023-01-01', '2027-01-31');
  switch (kind) {
    case 'one-day': {
      const d = anchor();
      return { from: d, to: d };
    }
    case 'short': {
      const from = anchor();
      return { from, to: addDays(from, int(1, 14)) };
    }
    case 'medium': {
      const to = anchor();
      return { from: addDays(to, -int(15, 200)), to };
    }
    case 'long': {
      const to = randomDay('2024-06-01', '2027-01-31');
      return { from: addDays(to, -int(200, 720)), to };
    }
    case 'over-cap': {
      const to = randomDay('2025-01-01', '2027-06-30');
      return { from: addDays(to, -int(731, 2000)), to };
    }
    case 'at-cap': {
      const to = chance(0.3) ? pick(['2024-02-29', '2025-02-28', '2025-03-01', '2026-02-28']) : anchor();
      return { from: addDays(earliestFrom(to), int(-1, 1)), to };
    }
    case 'empty':
      return chance(0.5)
        ? { from: '2019-01-01', to: `2019-${pick(['01-01', '06-30', '12-31'])}` }
        : { from: '2031-03-01', to: '2031-04-30' };
  }
}

/**
 * F1: the values a filter draws from: values rows show, values no row shows (other case, other
 * spelling, a trailing slash, absent ones) and statuses S1 may exclude.
 */
const FILTER_VALUES: Record<(typeof FILTER_DIMENSIONS)[number], readonly string[]> = {
  store: [
    ...STORES,
    ...STORES,
    'https://absent.example',
    'https://shop.example.com/',
    'HTTPS://BOUTIQUE.EXAMPLE.FR',
  ],
  country: [
    ...['FR', 'BE', 'DE', 'US', 'GB', 'CH', 'IN', 'NZ', 'Unknown', 'Unknown', 'Unknown'],
    ...['fr', 'unknown', 'UNKNOWN', 'XX', 'Fr'],
  ],
  customer_type: ['new', 'returning', 'anonymous', 'new', 'returning', 'anonymous', 'New', 'guest'],
  status: [...STATUSES.map(([status]) => status), 'completed', 'processing', 'shipped', 'COMPLETED'],
};

const FILTER_COUNT = [
  [1, 60],
  [2, 30],
  [3, 8],
  [4, 2],
] as const;
const FILTER_VALUE_COUNT = [
  [1, 55],
  [2, 30],
  [3, 15],
] as const;

function generateFilters(): Filters {
  const filters: Filters = {};
  for (const id of shuffle(FILTER_DIMENSIONS).slice(0, weighted(FILTER_COUNT))) {
    const count = weighted(FILTER_VALUE_COUNT);
    filters[id] = Array.from({ length: count }, () => pick(FILTER_VALUES[id]));
  }
  return filters;
}

/** F1 parameters, sometimes with blanks, empty items, duplicates or the parameter given twice. */
function filterParams(filters: Filters): string[] {
  const enc = (s: string) => encodeURIComponent(s).replace(/%2C/g, ',');
  const params: string[] = [];
  for (const id of FILTER_DIMENSIONS) {
    const values = filters[id];
    if (values === undefined) continue;
    const name = `filter.${id}`;
    if (values.length > 1 && chance(0.15)) {
      const cut = int(1, values.length - 1);
      params.push(
        `${name}=${enc(values.slice(0, cut).join(','))}`,
        `${name}=${enc(values.slice(cut).join(','))}`,
      );
      continue;
    }
    let items = [...values];
    if (chance(0.2)) {
      items = items.map((v) => (chance(0.4) ? ` ${v} ` : v));
      items.splice(int(0, items.length), 0, '');
      if (chance(0.5)) items.push(pick(values));
    }
    params.push(`${name}=${enc(items.join(','))}`);
  }
  return params;
}

function generateQuery(
  lines: readonly RawOrder[],
  settings: ReportSettings,
  extendedShare = 0.4,
): GeneratedQuery {
  const dimensionCount = weighted([
    [0, 15],
    [1, 35],
    [2, 30],
    [3, 15],
    [4, 3],
    [5, 2],
  ] as const);
  const dimensions = shuffle(DIMENSION_IDS).slice(0, dimensionCount);
  if (dimensions.length > 0 && !dimensions.includes('date') && chance(0.3)) dimensions[0] = 'date';
  const metrics = shuffle(METRIC_IDS).slice(0, int(1, METRIC_IDS.length));
  const days = lines.map((l) => l.created_at.slice(0, 10));
  const { from, to } = generatePeriod(days);
  const timezone = chance(0.15) ? undefined : pick(TIME_ZONES);
  const base = { dimensions, metrics, from, to, timezone: timezone ?? 'UTC' };

  // Section 14 in about 40 % of the queries (extendedShare): filters, granularity and offset.
  const extended = chance(extendedShare);
  let filters: Filters | undefined;
  let granularity: Granularity | undefined;
  let offsetChoice = false;
  if (extended) {
    do {
      if (chance(0.55)) filters = generateFilters();
      if (chance(0.55)) granularity = pick(GRANULARITIES); // `day` given explicitly too
      offsetChoice = chance(0.45);
    } while (filters === undefined && granularity === undefined && !offsetChoice);
  }
  // T3 rows of the query before O1 and T6 (the oracle reads the cleaned filter values).
  const cleaned =
    filters && Object.fromEntries(Object.entries(filters).map(([id, v]) => [id, resolveIds(v)]));
  const total = oracle(lines, settings, { ...base, filters: cleaned, granularity }).totalRows;
  const offset = !offsetChoice
    ? undefined
    : weighted([
        [0, 10],
        [int(1, 3), 25],
        [total > 1 ? int(1, total - 1) : 1, 25],
        [Math.max(total - 1, 0), 10],
        [total, 10],
        [total + int(1, 20), 12],
        [MAX_OFFSET, 8],
      ] as const);
  const remaining = Math.max(total - (offset ?? 0), 0);
  const limit = weighted([
    [undefined, 40],
    [100_000, 8],
    [remaining > 1 ? int(1, remaining - 1) : 1, 27],
    [Math.max(remaining, 1), 10],
    [remaining + 1, 5],
    [int(1, 50), 10],
  ] as const);
  const params = [idParam('metrics', metrics)];
  if (dimensions.length > 0 || chance(0.05)) params.push(idParam('dimensions', dimensions));
  params.push(`from=${from}`, `to=${to}`);
  if (timezone !== undefined) params.push(`timezone=${encodeURIComponent(timezone)}`);
  if (limit !== undefined) params.push(`limit=${limit}`);
  if (filters) params.push(...filterParams(filters));
  if (granularity !== undefined) params.push(`granularity=${granularity}`);
  if (offset !== undefined) params.push(`offset=${offset}`);
  const csv = extended && chance(0.3) ? pick(['format', 'accept'] as const) : undefined;
  return {
    path: `/api/reports/tabular?${shuffle(params).join('&')}`,
    ...base,
    limit,
    ...(csv ? { csv } : {}),
  };
}

/**
 * PC1: a generated query with a comparison: the previous period, the same period a year earlier
 * (often over 29 February), or a custom period of another length (it may overlap the main one);
 * some main periods are replaced by the cases PC1 is most easily wrong on: weeks across a year
 * end, months of 28 to 31 days, a period starting or ending on 29 February.
 */
function withComparison(query: GeneratedQuery, lines: readonly RawOrder[]): GeneratedQuery {
  const url = new URL(query.path, 'http://x');
  const params = url.searchParams;
  const special: { from: string; to: string; granularity?: Granularity } | undefined = weighted([
    [undefined, 55],
    [{ from: '2025-12-22', to: `2026-01-${String(int(4, 18)).padStart(2, '0')}`, granularity: 'week' }, 12],
    [{ from: '2024-02-29', to: addDays('2024-02-29', int(0, 40)) }, 10],
    [{ from: addDays('2024-02-29', -int(0, 40)), to: '2024-02-29' }, 8],
    [{ from: '2025-03-01', to: '2025-05-31', granularity: 'month' }, 8],
    [{ from: '2025-10-01', to: '2026-03-31', granularity: pick(['quarter', 'month', 'year'] as const) }, 7],
  ] as const);
  if (special) {
    params.set('from', special.from);
    params.set('to', special.to);
    if (special.granularity) params.set('granularity', special.granularity);
    if (!(params.get('dimensions') ?? '').includes('date') && chance(0.7))
      params.set('dimensions', ['date', ...resolveIds(params.getAll('dimensions'))].join(','));
  }
  const mode = weighted([
    ['previous_period', 35],
    ['previous_year', 35],
    ['custom', 30],
  ] as const);
  params.set('compare', mode);
  if (mode === 'custom') {
    const days = lines.map((l) => l.created_at.slice(0, 10));
    const period = generatePeriod(days.filter((d) => d >= '2022-06-01'));
    params.set('compare_from', period.from);
    params.set('compare_to', period.to);
  }
  return { ...query, path: `${url.pathname}?${params.toString().replace(/%2C/g, ',')}` };
}

// ---------------------------------------------------------------------------------------------
// Comparison

/** What the comparisons need of a service: GET with a key. */
type Client = Pick<TestService, 'get'>;

/**
 * mismatch: undefined when the API answers exactly as the oracle; otherwise a readable
 * description. expected: the oracle's answer.
 */
async function compare(
  service: Client,
  key: string,
  lines: readonly RawOrder[],
  settings: ReportSettings,
  query: GeneratedQuery,
): Promise<{ mismatch: string | undefined; expected: OracleAnswer }> {
  // The oracle reads the request itself (P1 ids, defaults).
  const expected: OracleAnswer = oracle(
    lines,
    settings,
    queryFromSearch(new URL(query.path, 'http://x').searchParams),
  );
  return { mismatch: await differences(service, key, settings, query, expected), expected };
}

async function differences(
  service: Client,
  key: string,
  settings: ReportSettings,
  query: GeneratedQuery,
  expected: OracleAnswer,
): Promise<string | undefined> {
  const response = await service.get(query.path, key);
  const text = await response.text();
  const context = `query ${query.path}\n  settings ${JSON.stringify(settings)}`;
  if (response.status !== 200) return `${context}\n  status ${response.status}: ${text}`;
  const body = JSON.parse(text) as Record<string, unknown> & { rows: unknown[] };
  const problems: string[] = [];
  // T2's keys, and section 14's (granularity, filters, offset) only where they are not defaults.
  const keys = Object.keys(expected.body) as (keyof OracleAnswer['body'])[];
  if (JSON.stringify(Object.keys(body)) !== JSON.stringify(keys)) {
    problems.push(`T2 body keys: expected ${JSON.stringify(keys)}, got ${JSON.stringify(Object.keys(body))}`);
  }
  for (const field of keys.filter((k) => k !== 'rows')) {
    if (JSON.stringify(body[field]) !== JSON.stringify(expected.body[field])) {
      problems.push(
        `${field}: expected ${JSON.stringify(expected.body[field])}, got ${JSON.stringify(body[field])}`,
      );
    }
  }
  const header = response.headers.get('x-rows-truncated');
  if ((header === 'true') !== expected.truncated || (header !== null && header !== 'true')) {
    problems.push(`X-Rows-Truncated: expected ${expected.truncated ? 'true' : 'absent'}, got ${header}`);
  }
  const rows = Array.isArray(body.rows) ? body.rows : [];
  const n = Math.max(rows.length, expected.body.rows.length);
  for (let i = 0; i < n; i++) {
    // JSON text: values and key order (T2) both count.
    const want = JSON.stringify(expected.body.rows[i]);
    const got = JSON.stringify(rows[i]);
    if (want !== got) {
      problems.push(
        `first differing row #${i} (of ${expected.body.rows.length} expected, ${rows.length} returned):\n` +
          `    expected ${want}\n    actual   ${got}`,
      );
      break;
    }
  }
  try {
    assert.deepEqual(body, expected.body);
  } catch {
    if (problems.length === 0) problems.push('body differs (deepEqual)');
  }
  if (query.csv) problems.push(...(await compareCsv(service, key, query, expected)));
  return problems.length === 0 ? undefined : `${context}\n  ${problems.join('\n  ')}`;
}

/** V1: the same query as CSV has the oracle's cells, header line first, and the same T6 header. */
async function compareCsv(
  service: Client,
  key: string,
  query: GeneratedQuery,
  expected: OracleAnswer,
): Promise<string[]> {
  const response =
    query.csv === 'format'
      ? await service.get(`${query.path}&format=csv`, key)
      : await service.get(query.path, key, { accept: 'text/csv' });
  const text = await response.text();
  const how = query.csv === 'format' ? 'format=csv' : 'Accept: text/csv';
  if (response.status !== 200) return [`V1 (${how}) status ${response.status}: ${text}`];
  const problems: string[] = [];
  const type = response.headers.get('content-type');
  if (type !== 'text/csv; charset=utf-8') problems.push(`V1 (${how}) content-type ${type}`);
  const header = response.headers.get('x-rows-truncated');
  if ((header === 'true') !== expected.truncated) {
    problems.push(
      `V1 (${how}) X-Rows-Truncated: expected ${expected.truncated ? 'true' : 'absent'}, got ${header}`,
    );
  }
  if (!text.endsWith('\r\n')) problems.push(`V1 (${how}) the last line does not end with CRLF`);
  const grammar = rfc4180Violation(text);
  if (grammar !== undefined) problems.push(`V1 (${how}) not RFC 4180: ${grammar}`);
  let cells: string[][];
  try {
    cells = parseCsv(text, { record_delimiter: '\r\n' }) as string[][];
  } catch (error) {
    return [...problems, `V1 (${how}) not RFC 4180: ${(error as Error).message}`];
  }
  const want = csvCells(expected.body);
  const n = Math.max(cells.length, want.length);
  for (let i = 0; i < n; i++) {
    if (JSON.stringify(cells[i]) !== JSON.stringify(want[i])) {
      problems.push(
        `V1 (${how}) first differing line #${i} (of ${want.length} expected, ${cells.length} returned):\n` +
          `    expected ${JSON.stringify(want[i])}\n    actual   ${JSON.stringify(cells[i])}`,
      );
      break;
    }
  }
  return problems;
}

async function compareMany(
  t: { diagnostic(message: string): void },
  service: Client,
  key: string,
  lines: readonly RawOrder[],
  settings: ReportSettings,
  queries: readonly GeneratedQuery[],
): Promise<void> {
  const mismatches: string[] = [];
  let truncated = 0;
  let rows = 0;
  let extended = 0;
  let csv = 0;
  for (const query of queries) {
    const { mismatch, expected } = await compare(service, key, lines, settings, query);
    if (mismatch) mismatches.push(mismatch);
    if (expected.truncated) truncated++;
    rows += expected.body.rowCount;
    if (/[?&](filter\.|granularity=|offset=)/.test(query.path)) extended++;
    if (query.csv) csv++;
  }
  t.diagnostic(
    `seed ${SEED}: ${queries.length} queries compared (${rows} rows, ${truncated} truncated; ` +
      `${extended} with F1/G2/O1 parameters, ${csv} also as CSV), ` +
      `${mismatches.length} mismatches`,
  );
  assert.equal(
    mismatches.length,
    0,
    `seed ${SEED}: ${mismatches.length} of ${queries.length} queries differ from the oracle; the first:\n` +
      mismatches.slice(0, 3).join('\n---\n'),
  );
}

// ---------------------------------------------------------------------------------------------

const SETTINGS: ReportSettings[] = [
  { excludedStatuses: [], deductions: [] },
  {
    excludedStatuses: ['pending', 'Completed', 'on-hold', 'refunded'],
    deductions: ['refunds', 'taxes', 'shipping', 'fees'],
  },
  {
    excludedStatuses: ['completed', 'cancelled', 'failed', 'checkout-draft', 'pending'],
    deductions: ['taxes', 'shipping'],
  },
  { excludedStatuses: ['failed', 'Pending', '📦 shipped', 'expédiée'], deductions: ['fees', 'refunds'] },
  { excludedStatuses: DEFAULT_SETTINGS.excludedStatuses, deductions: ['shipping', 'refunds'] },
];

// One service for the whole file, each suite in its own organizations (starting another embedded
// database cost seconds for four orders).
let service: TestService;
before(async () => {
  service = await startTestService({ RATE_LIMIT_MAX: '100000' });
});
after(() => service?.cleanup());

describe(`oracle: API figures equal an independent implementation of the SPEC (seed ${SEED})`, () => {
  let key: string;
  let orgId: string;
  let otherKey: string;
  let lines: RawOrder[] = [];
  let otherLines: RawOrder[] = [];
  const defaultQueries: GeneratedQuery[] = [];

  before(async () => {
    const first = generateBatch(1_250);
    first.push(...excludedFirstOrders(), ...specialCustomers());
    // A second import: replacements of the first (earlier dates, other statuses) and new orders.
    const second = generateBatch(150, first).map((line) => {
      if (chance(0.5))
        line.created_at = renderInstant({ ms: dayMs(randomDay('2022-12-25', '2023-06-30')), subMs: '' });
      return line;
    });
    for (let i = 0; i < 60; i++) {
      const old = pick(first);
      second.push({ ...old, status: pick(['cancelled', 'completed', 'refunded', 'pending']) });
    }
    lines = [...first, ...second];

    // Tenancy: another organization with the same stores, customers and order ids, earlier orders.
    nextId = 1000;
    otherLines = generateBatch(300).map((line) => {
      if (chance(0.5))
        line.created_at = renderInstant({ ms: dayMs(randomDay('2022-06-01', '2024-12-31')), subMs: '' });
      return line;
    });

    const created = await service.addOrganization('Oracle', []);
    key = created.key;
    orgId = created.org.id;
    for (const batch of [first, second]) {
      const result = await importOrderRecords(service.db, orgId, batch);
      assert.equal(result.rejected, 0, JSON.stringify(result.errors.slice(0, 5)));
    }
    const other = await service.addOrganization('Oracle bis', []);
    otherKey = other.key;
    const result = await importOrderRecords(service.db, other.org.id, otherLines);
    assert.equal(result.rejected, 0, JSON.stringify(result.errors.slice(0, 5)));
    // Imported: from now on the oracle reads them only, and keeps their normalized orders.
    freezeLines(lines);
    freezeLines(otherLines);
  });

  test('default Report settings (S1, S2 defaults): 150 random queries, 40 % with F1/G2/O1 (V1 for some)', async (t) => {
    t.diagnostic(
      `seed ${SEED}: ${lines.length} lines imported for the organization, ${currentOrders(lines).length} ` +
        `orders after replacements (${otherLines.length} lines, ${currentOrders(otherLines).length} orders for the other)`,
    );
    for (let i = 0; i < 150; i++) defaultQueries.push(generateQuery(lines, DEFAULT_SETTINGS));
    await compareMany(t, service, key, lines, DEFAULT_SETTINGS, defaultQueries);
  });

  for (const [index, settings] of SETTINGS.entries()) {
    test(`Report settings #${index + 1} ${JSON.stringify(settings)}: 40 queries (S4)`, async (t) => {
      await updateReportSettings(service.db, orgId, settings);
      // The first ten default queries again: a settings change is never hidden by the cache.
      const queries = [...defaultQueries.slice(0, 10)];
      for (let i = 0; i < 30; i++) queries.push(generateQuery(lines, settings));
      await compareMany(t, service, key, lines, settings, queries);
    });
  }

  test('REPORT_ENGINE=sql: 50 queries on the SQL engine alone, 70 % with F1/G2/O1 (V1 for some)', async (t) => {
    await updateReportSettings(service.db, orgId, DEFAULT_SETTINGS);
    const sql = await startSqlEngineApp(service);
    try {
      const queries: GeneratedQuery[] = [];
      for (let i = 0; i < 50; i++) queries.push(generateQuery(lines, DEFAULT_SETTINGS, 0.7));
      await compareMany(t, sql, key, lines, DEFAULT_SETTINGS, queries);
    } finally {
      await sql.close();
    }
  });

  test('PC1: 70 random compared queries on the columnar engine, 40 on the SQL engine (V1 for some)', async (t) => {
    await updateReportSettings(service.db, orgId, DEFAULT_SETTINGS);
    const compared = (share: number) => withComparison(generateQuery(lines, DEFAULT_SETTINGS, share), lines);
    const queries = Array.from({ length: 70 }, () => compared(0.5));
    await compareMany(t, service, key, lines, DEFAULT_SETTINGS, queries);
    const sql = await startSqlEngineApp(service);
    try {
      await compareMany(
        t,
        sql,
        key,
        lines,
        DEFAULT_SETTINGS,
        Array.from({ length: 40 }, () => compared(0.6)),
      );
    } finally {
      await sql.close();
    }
  });

  test('tenancy: the other organization sees only its own orders (30 queries)', async (t) => {
    const queries: GeneratedQuery[] = [];
    for (let i = 0; i < 30; i++) queries.push(generateQuery(otherLines, DEFAULT_SETTINGS));
    await compareMany(t, service, otherKey, otherLines, DEFAULT_SETTINGS, queries);
  });
});

describe('oracle: created_at with digits beyond the microsecond (T1, dimension date)', () => {
  let key: string;
  // Each is an instant of 1 March 2026 (UTC) by its text; none is on 2 March.
  const LINES: RawOrder[] = [
    {
      store: 'https://a.example',
      id: 'n1',
      created_at: '2026-03-01T23:59:59.9999995Z',
      status: 'completed',
      items: 1,
      total: '10.00',
    },
    {
      store: 'https://a.example',
      id: 'n2',
      created_at: '2026-03-01T23:59:59.999999999+00:00',
      status: 'completed',
      items: 1,
      total: '20.00',
    },
    {
      store: 'https://a.example',
      id: 'n3',
      created_at: '2026-03-02T00:59:59.9999999+01:00',
      status: 'completed',
      items: 1,
      total: '40.00',
    },
    {
      store: 'https://a.example',
      id: 'n4',
      created_at: '2026-03-01T12:00:00.1234567Z',
      status: 'completed',
      items: 1,
      total: '80.00',
    },
  ];
  before(async () => {
    ({ key } = await service.addOrganization('Nanos', LINES as unknown as Record<string, unknown>[]));
  });

  test('orders stay on their day, in UTC and in Paris', async (t) => {
    const queries = ['UTC', 'Europe/Paris'].flatMap((timezone) =>
      [
        ['2026-03-01', '2026-03-01'],
        ['2026-03-02', '2026-03-02'],
        ['2026-02-28', '2026-03-03'],
      ].map(([from, to]) => ({
        path: `/api/reports/tabular?metrics=orders,gross_sales&dimensions=date&from=${from}&to=${to}&timezone=${timezone}`,
        dimensions: ['date'] as DimensionId[],
        metrics: ['orders', 'gross_sales'] as MetricId[],
        from: from!,
        to: to!,
        timezone,
      })),
    );
    await compareMany(t, service, key, LINES, DEFAULT_SETTINGS, queries);
  });
});
