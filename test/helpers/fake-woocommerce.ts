// A stand-in for a WordPress site running WooCommerce's REST API v3, for the store connector's
// integration tests (issue 11). WooCommerce cannot run here, so this follows what WooCommerce and
// WordPress publish, read for each behaviour below:
// - WooCommerce REST API docs (woocommerce/woocommerce-rest-api-docs, wp-api-v3): introduction
//   (errors, pagination headers), orders, order refunds.
// - WooCommerce source (plugins/woocommerce/includes/…): class-wc-rest-authentication.php (who is
//   authenticated and with which error), rest-api/Controllers/Version3/class-wc-rest-crud-controller.php
//   (collection parameters, X-WP-Total/X-WP-TotalPages, prev/next links, 'Invalid ID.'),
//   Version2/class-wc-rest-orders-v2-controller.php and Version3/class-wc-rest-orders-controller.php
//   (order fields, status parameter), Version2/class-wc-rest-order-refunds-v2-controller.php (refund
//   fields), class-wc-webhook.php (delivery headers, payload, signature, ping).
// - WordPress source: WP_REST_Server (error shape, headers, parameters validated before the
//   permission check), WP_HTTP_Response::header (repeated Link values joined with ', '),
//   WP_Date_Query::build_mysql_datetime (how after/before strings are read), add_query_arg.
// Quirks of the real thing are kept on purpose and marked "As WooCommerce/WordPress does" below.
// Everything the fake adds of its own (control methods, faults, recording) is marked as such.
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import selfsigned from 'selfsigned';
import { mulberry32 } from './seeded-random.js';

// ---------------------------------------------------------------------------------------------
// Public types: the REST resources exactly as the fake serves them (snake_case, as JSON).

export interface FakeMeta {
  id: number;
  key: string;
  value: unknown;
  display_key?: string;
  display_value?: unknown;
}
export interface FakeItemTax {
  id: number;
  total: string;
  subtotal: string;
}
export interface FakeBilling {
  first_name: string;
  last_name: string;
  company: string;
  address_1: string;
  address_2: string;
  city: string;
  state: string;
  postcode: string;
  country: string;
  email: string;
  phone: string;
}
export type FakeShipping = Omit<FakeBilling, 'email'>;
export interface FakeLineItem {
  id: number;
  name: string;
  product_id: number;
  variation_id: number;
  quantity: number;
  tax_class: string;
  subtotal: string;
  subtotal_tax: string;
  total: string;
  total_tax: string;
  taxes: FakeItemTax[];
  meta_data: FakeMeta[];
  sku: string | null;
  price: number;
  image: { id: number; src: string };
  parent_name: string | null;
}
export interface FakeTaxLine {
  id: number;
  rate_code: string;
  rate_id: number;
  label: string;
  compound: boolean;
  tax_total: string;
  shipping_tax_total: string;
  rate_percent: number;
  meta_data: FakeMeta[];
}
export interface FakeShippingLine {
  id: number;
  method_title: string;
  method_id: string;
  instance_id: string;
  total: string;
  total_tax: string;
  taxes: FakeItemTax[];
  meta_data: FakeMeta[];
}
export interface FakeFeeLine {
  id: number;
  name: string;
  tax_class: string;
  tax_status: 'taxable' | 'none';
  total: string;
  total_tax: string;
  taxes: FakeItemTax[];
  meta_data: FakeMeta[];
}
export interface FakeCouponLine {
  id: number;
  code: string;
  discount: string;
  discount_tax: string;
  discount_type: string;
  nominal_amount: number;
  free_shipping: boolean;
  meta_data: FakeMeta[];
}
export type FakeLinks = Record<string, { href: string }[]>;
/** An order as GET /wc/v3/orders/{id} returns it. */
export interface FakeOrder {
  id: number;
  parent_id: number;
  number: string;
  order_key: string;
  created_via: string;
  version: string;
  status: string;
  currency: string;
  date_created: string;
  date_created_gmt: string;
  date_modified: string;
  date_modified_gmt: string;
  discount_total: string;
  discount_tax: string;
  shipping_total: string;
  shipping_tax: string;
  cart_tax: string;
  total: string;
  total_tax: string;
  prices_include_tax: boolean;
  customer_id: number;
  customer_ip_address: string;
  customer_user_agent: string;
  customer_note: string;
  billing: FakeBilling;
  shipping: FakeShipping;
  payment_method: string;
  payment_method_title: string;
  transaction_id: string;
  date_paid: string | null;
  date_paid_gmt: string | null;
  date_completed: string | null;
  date_completed_gmt: string | null;
  cart_hash: string;
  meta_data: FakeMeta[];
  line_items: FakeLineItem[];
  tax_lines: FakeTaxLine[];
  shipping_lines: FakeShippingLine[];
  fee_lines: FakeFeeLine[];
  coupon_lines: FakeCouponLine[];
  refunds: { id: number; reason: string; total: string }[];
  payment_url: string;
  is_editable: boolean;
  needs_payment: boolean;
  needs_processing: boolean;
  _links: FakeLinks;
}
/** A refund as GET /wc/v3/orders/{id}/refunds returns it: amounts of its lines are negative. */
export interface FakeRefund {
  id: number;
  date_created: string;
  date_created_gmt: string;
  amount: string;
  reason: string;
  refunded_by: number;
  refunded_payment: boolean;
  meta_data: FakeMeta[];
  line_items: FakeLineItem[];
  shipping_lines: FakeShippingLine[];
  tax_lines: FakeTaxLine[];
  fee_lines: FakeFeeLine[];
  _links: FakeLinks;
}

/** An amount in the store's currency: 12.5, '12.50' or '-3'. Kept in integer cents inside. */
export type Money = number | string;
export interface LineItemInput {
  quantity: number;
  /** The line's total after discounts, tax excluded. */
  total: Money;
  /** Default: total × the order's tax rate. */
  totalTax?: Money;
  /** Before discounts; default: total. A larger subtotal makes a coupon discount. */
  subtotal?: Money;
  subtotalTax?: Money;
  name?: string;
  productId?: number;
  variationId?: number;
  sku?: string;
}
export interface FeeInput {
  /** May be negative (a discount added as a fee). */
  total: Money;
  /** Default: total × the order's tax rate. */
  totalTax?: Money;
  name?: string;
}
export interface OrderInput {
  /** Without the 'wc-' prefix, as the REST API shows it: 'completed', 'on-hold', 'shipped'… */
  status: string;
  dateCreatedGmt: Date;
  /** Default: a few minutes after creation for paid statuses, else null. */
  datePaidGmt: Date | null;
  /** Default: an hour after creation for 'completed' and 'refunded', else null. */
  dateCompletedGmt: Date | null;
  /** '' is kept as ''. */
  billingEmail: string;
  /** '' is kept as ''. */
  billingCountry: string;
  billing: Partial<FakeBilling>;
  shipping: Partial<FakeShipping>;
  currency: string;
  customerId: number;
  lineItems: LineItemInput[];
  shippingTotal: Money;
  /** Default: shippingTotal × the order's tax rate. */
  shippingTax: Money;
  /** Default 'Flat rate'; with shippingTotal 0 and no method, the order has no shipping line. */
  shippingMethodTitle: string;
  fees: FeeInput[];
  /** Default: the billing country's usual VAT (FR 20, DE 19, US 7.25 …), 0 without a country. */
  taxRatePercent: number;
  paymentMethod: string;
  paymentMethodTitle: string;
  transactionId: string;
  pricesIncludeTax: boolean;
  createdVia: string;
  parentId: number;
  customerNote: string;
  metaData: { key: string; value: unknown }[];
}
export interface RefundInput {
  /** Default: the sum of the parts below (totals and taxes). */
  amount?: Money;
  /** Positive numbers; itemId defaults to the order's line item at the same position. */
  lineItems?: { itemId?: number; quantity: number; total: Money; totalTax?: Money }[];
  shipping?: { total: Money; totalTax?: Money };
  reason?: string;
  /** Whether the payment gateway refunded the money (refunded_payment). Default false. */
  refundedPayment?: boolean;
}

export type KeyPermissions = 'read' | 'write' | 'read_write';
export interface FakeWooCommerceOptions {
  /** HTTPS with a fresh self-signed certificate for localhost and 127.0.0.1 (default true). */
  tls?: boolean;
  /** Serve WordPress under a sub-path, e.g. '/shop'. */
  sitePath?: string;
  /** false: /wp-json/… answers a 404 HTML page (no REST API, or not WordPress). Default true. */
  restApi?: boolean;
  consumerKey?: string;
  consumerSecret?: string;
  /** The key's access level in WooCommerce > Settings > Advanced > REST API. Default 'read'. */
  keyPermissions?: KeyPermissions;
  /** The site's fixed UTC offset (Settings > General, "UTC+1"). Default 0. */
  timezoneOffsetMinutes?: number;
  /** An IANA zone ('Europe/Paris'), with its DST; takes precedence over timezoneOffsetMinutes. */
  timezone?: string;
  /** The store currency for orders that do not name one. Default 'EUR'. */
  currency?: string;
  /** The clock's start. Default: the real time. */
  now?: Date;
  /** Seed of the defaults addOrder fills in. Default 1. */
  seed?: number;
  /** Custom order statuses registered by plugins, without 'wc-'. Default ['shipped']. */
  customStatuses?: string[];
  wooCommerceVersion?: string;
  wordPressVersion?: string;
  siteName?: string;
  /** A certificate to use instead of generating one (see FakeWooCommerce.generateCertificate). */
  certificate?: { key: string; cert: string };
}

export interface RecordedRequest {
  /** The HTTP method as sent. */
  method: string;
  /** After WordPress's `_method` parameter or X-HTTP-Method-Override header. */
  effectiveMethod: string;
  /** Path and query as received. */
  url: string;
  /** Path as received (sitePath included). */
  path: string;
  /** The REST route ('/wc/v3/orders'), or null for requests outside the REST API. */
  route: string | null;
  /** The query string as sent, decoded: repeated names give arrays. Secrets are NOT redacted. */
  query: Record<string, string | string[]>;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** How credentials were presented: query-string consumer_key & consumer_secret, Basic, none. */
  auth: 'basic' | 'query' | 'none';
  /** Whether the key and secret matched. */
  authenticated: boolean;
  /** Real time of arrival. */
  time: Date;
  /** The fake store's clock at arrival. */
  storeTime: Date;
  /** Set once answered. */
  status?: number;
  /** Set when a fault (failNext/failPages) answered instead of the API. */
  fault?: number;
}

export interface FaultOptions {
  retryAfterSeconds?: number;
  /** Raw body; default a small HTML error page as a proxy or the web server would send. */
  body?: string;
  /** Default: application/json when body parses as JSON, else text/html. */
  contentType?: string;
  headers?: Record<string, string>;
}
export interface FaultSpec extends FaultOptions {
  status: number;
}
export interface PageRequestInfo {
  route: string | null;
  method: string;
  /** The page asked for (1 when absent), for collection routes. */
  page: number;
  query: Record<string, string | string[]>;
}
export type WebhookTopic = 'order.created' | 'order.updated' | 'order.deleted';
export interface DeliveryResult {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
  /** What was sent, for assertions. */
  sent: { headers: Record<string, string>; body: string };
}

// ---------------------------------------------------------------------------------------------
// Internal model (money in integer cents, times in epoch milliseconds, whole seconds).

interface StoredItem {
  id: number;
  name: string;
  productId: number;
  variationId: number;
  quantity: number;
  subtotal: number;
  subtotalTax: number;
  total: number;
  totalTax: number;
  sku: string;
}
interface StoredShipping {
  id: number;
  methodTitle: string;
  methodId: string;
  instanceId: string;
  total: number;
  totalTax: number;
}
interface StoredFee {
  id: number;
  name: string;
  total: number;
  totalTax: number;
}
interface StoredCoupon {
  id: number;
  code: string;
  discount: number;
  discountTax: number;
}
interface TaxRate {
  id: number;
  code: string;
  label: string;
  percent: number;
}
interface StoredRefundLine {
  id: number;
  metaId: number;
  refundedItemId: number;
  quantity: number;
  total: number;
  totalTax: number;
}
interface StoredRefund {
  id: number;
  created: number;
  amount: number;
  reason: string;
  refundedPayment: boolean;
  items: StoredRefundLine[];
  shipping: StoredRefundLine[];
  taxLineId: number;
}
interface StoredOrder {
  id: number;
  parentId: number;
  orderKey: string;
  createdVia: string;
  version: string;
  status: string;
  currency: string;
  pricesIncludeTax: boolean;
  created: number;
  modified: number;
  paid: number | null;
  completed: number | null;
  customerId: number;
  customerIp: string;
  customerUserAgent: string;
  customerNote: string;
  cartHash: string;
  billing: FakeBilling;
  shipping: FakeShipping;
  paymentMethod: string;
  paymentMethodTitle: string;
  transactionId: string;
  taxRate: TaxRate;
  taxLineId: number;
  items: StoredItem[];
  shippingLines: StoredShipping[];
  fees: StoredFee[];
  coupons: StoredCoupon[];
  meta: FakeMeta[];
  /** Oldest first. */
  refunds: StoredRefund[];
}

interface Reply {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}
class RestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** WP_Error data; WordPress takes the HTTP status from data.status when data is an array. */
    readonly data: unknown = { status },
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers.

const CORE_STATUSES = [
  'pending',
  'processing',
  'on-hold',
  'completed',
  'cancelled',
  'refunded',
  'failed',
  'checkout-draft',
] as const;
/** wc_get_is_paid_statuses(): these get a date_paid. */
const PAID_STATUSES = new Set(['processing', 'completed', 'refunded', 'shipped']);

/** PHP's json_encode with WordPress's default flags: '/' escaped as '\/', non-ASCII as \uXXXX. */
export function phpJsonEncode(value: unknown): string {
  return JSON.stringify(value)
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** base64(HMAC-SHA256(body, secret)), as WC_Webhook::generate_signature (secret entity-decoded). */
export function webhookSignature(body: string, secret: string): string {
  return crypto.createHmac('sha256', wpSpecialcharsDecode(secret)).update(body).digest('base64');
}

function wpSpecialcharsDecode(s: string): string {
  // wp_specialchars_decode( $secret, ENT_QUOTES ): only these entities, &amp; last.
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#0*39;|&#x0*27;/gi, "'")
    .replace(/&amp;/g, '&');
}

function toCents(m: Money): number {
  if (typeof m === 'number') return Math.round(m * 100);
  const s = m.trim();
  const exact = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(s);
  if (exact) {
    const cents = Number(exact[2]) * 100 + Number((exact[3] ?? '').padEnd(2, '0'));
    return exact[1] === '-' ? -cents : cents;
  }
  const n = Number(s);
  if (!Number.isFinite(n)) throw new Error(`not an amount: ${JSON.stringify(m)}`);
  return Math.round(n * 100);
}

/** wc_format_decimal( $amount, $dp ) for cents. */
function money(cents: number, dp = 2): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  if (dp === 2) return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
  const s = (abs / 100).toFixed(dp);
  return Number(s) === 0 ? s : `${sign}${s}`;
}

/** A tax amount as WooCommerce stores it in an item's taxes array: a plain decimal string. */
function rawAmount(cents: number): string {
  return String(cents / 100);
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** 'YYYY-MM-DDTHH:MM:SS' of a wall-clock time held as if it were UTC. */
function isoWall(wallMs: number): string {
  const d = new Date(wallMs);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

function wholeSeconds(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length) % list.length] as T;
}

function randomHex(bytes: number): string {
  return crypto.randomBytes(bytes).toString('hex');
}

/** PHP's urlencode. */
function phpUrlencode(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

function phpDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** $_GET as PHP builds it: name[] and name[k] make arrays, a repeated plain name keeps the last. */
function parsePhpQuery(raw: string): Map<string, string | string[]> {
  const out = new Map<string, string | string[]>();
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = phpDecode(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : phpDecode(part.slice(eq + 1));
    const bracket = /^([^[]+)\[([^\]]*)\]$/.exec(key);
    if (bracket) {
      const name = bracket[1] as string;
      const prev = out.get(name);
      const list = Array.isArray(prev) ? prev : [];
      list.push(value);
      out.set(name, list);
    } else {
      out.set(key, value);
    }
  }
  return out;
}

function rawQueryRecord(search: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of search) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** wp_parse_list: a list, or a string split on commas and whitespace. */
function wpParseList(v: string | string[]): string[] {
  if (Array.isArray(v)) return v;
  return v.split(/[\s,]+/).filter((s) => s !== '');
}

/** WordPress's "%l": 'a', 'a and b', 'a, b, and c'. */
function wpList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

// Realistic defaults.
const COUNTRIES: Record<string, { rate: number; label: string; places: [string, string, string][] }> = {
  FR: {
    rate: 20,
    label: 'TVA',
    places: [
      ['Lyon', '', '69002'],
      ['Paris', '', '75011'],
      ['Nantes', '', '44000'],
    ],
  },
  DE: {
    rate: 19,
    label: 'MwSt.',
    places: [
      ['Berlin', '', '10115'],
      ['München', '', '80331'],
    ],
  },
  BE: {
    rate: 21,
    label: 'TVA',
    places: [
      ['Liège', '', '4000'],
      ['Gent', '', '9000'],
    ],
  },
  NL: {
    rate: 21,
    label: 'BTW',
    places: [
      ['Utrecht', '', '3511'],
      ['Rotterdam', '', '3011'],
    ],
  },
  ES: {
    rate: 21,
    label: 'IVA',
    places: [
      ['Sevilla', 'SE', '41001'],
      ['Madrid', 'M', '28001'],
    ],
  },
  IT: {
    rate: 22,
    label: 'IVA',
    places: [
      ['Torino', 'TO', '10121'],
      ['Napoli', 'NA', '80121'],
    ],
  },
  GB: {
    rate: 20,
    label: 'VAT',
    places: [
      ['Leeds', '', 'LS1 4AP'],
      ['Bristol', '', 'BS1 5TR'],
    ],
  },
  US: {
    rate: 7.25,
    label: 'Tax',
    places: [
      ['Sacramento', 'CA', '95814'],
      ['Austin', 'TX', '73301'],
    ],
  },
  CH: {
    rate: 8.1,
    label: 'MWST',
    places: [
      ['Genève', 'GE', '1201'],
      ['Zürich', 'ZH', '8001'],
    ],
  },
};
const FIRST_NAMES = [
  'Camille',
  'Jonas',
  'Léa',
  'Emma',
  'Noah',
  'Zoë',
  'Mateo',
  'Anaïs',
  'Sam',
  'Ines',
  'Jan',
];
const LAST_NAMES = [
  'Martin',
  'Müller',
  'Peeters',
  'García',
  'Rossi',
  'Smith',
  "O'Brien",
  'Dubois',
  'Janssen',
];
const PRODUCTS: [number, string, string, number][] = [
  [101, 'Linen shirt', 'LIN-SHIRT', 4900],
  [102, 'Ceramic mug', 'MUG-01', 1250],
  [103, 'Café moulu 500 g', 'CAFE-500', 899],
  [104, 'Wool scarf', 'SCARF-W', 3500],
  [105, 'Notebook A5', 'NB-A5', 650],
  [106, 'Desk lamp', 'LAMP-D', 7990],
  [107, 'Gift card', '', 2500],
];
/**
 * The products' categories, as WordPress stores term names: `&` as `&amp;` (the REST API returns
 * them so). A product without a category is in WooCommerce's default one, « Non classé ».
 */
const PRODUCT_CATEGORIES: Record<number, [number, string][]> = {
  101: [
    [15, 'Vêtements'],
    [16, 'Lin'],
  ],
  102: [[17, 'Maison &amp; cuisine']],
  103: [
    [18, 'Épicerie'],
    [19, 'Café &amp; thé'],
  ],
  104: [[15, 'Vêtements']],
  105: [[20, 'Papeterie']],
  106: [
    [17, 'Maison &amp; cuisine'],
    [21, 'Éclairage'],
  ],
  107: [[1, 'Non classé']],
};

/** A product as the store keeps it: its name and categories (ids and stored names). */
export interface FakeProduct {
  name: string;
  sku: string;
  categories: [number, string][];
}

const GATEWAYS: [string, string][] = [
  ['stripe', 'Credit card (Stripe)'],
  ['paypal', 'PayPal'],
  ['bacs', 'Direct bank transfer'],
  ['cod', 'Cash on delivery'],
];

function countryRate(country: string): number {
  return COUNTRIES[country.toUpperCase()]?.rate ?? 0;
}

function emptyBilling(): FakeBilling {
  return {
    first_name: '',
    last_name: '',
    company: '',
    address_1: '',
    address_2: '',
    city: '',
    state: '',
    postcode: '',
    country: '',
    email: '',
    phone: '',
  };
}

// Routes the fake has, for the REST index.
const ROUTES: [string, string[]][] = [
  ['/wc/v3', ['GET']],
  ['/wc/v3/orders', ['GET', 'POST']],
  ['/wc/v3/orders/(?P<id>[\\d]+)', ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']],
  ['/wc/v3/orders/batch', ['POST', 'PUT', 'PATCH']],
  ['/wc/v3/orders/(?P<order_id>[\\d]+)/refunds', ['GET', 'POST']],
  ['/wc/v3/orders/(?P<order_id>[\\d]+)/refunds/(?P<id>[\\d]+)', ['GET', 'DELETE']],
  ['/wc/v3/products', ['GET', 'POST']],
  ['/wc/v3/products/(?P<id>[\\d]+)', ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']],
];
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

type Permission = 'list' | 'view' | 'create' | 'edit' | 'delete' | 'batch';
/** The permission callbacks' errors for a request without valid credentials (rest_authorization_required_code() = 401). */
const PERMISSION_ERRORS: Record<Permission, [string, string]> = {
  list: ['woocommerce_rest_cannot_view', 'Sorry, you cannot list resources.'],
  view: ['woocommerce_rest_cannot_view', 'Sorry, you cannot view this resource.'],
  create: ['woocommerce_rest_cannot_create', 'Sorry, you are not allowed to create resources.'],
  edit: ['woocommerce_rest_cannot_edit', 'Sorry, you are not allowed to edit this resource.'],
  delete: ['woocommerce_rest_cannot_delete', 'Sorry, you are not allowed to delete this resource.'],
  batch: ['woocommerce_rest_cannot_batch', 'Sorry, you are not allowed to batch manipulate this resource.'],
};

interface CollectionParams {
  page: number;
  perPage: number;
  offset: number | null;
  order: 'asc' | 'desc';
  orderby: string;
  statuses: string[] | 'any';
  include: number[];
  exclude: number[];
  parent: number[];
  parentExclude: number[];
  after: number | null;
  before: number | null;
  modifiedAfter: number | null;
  modifiedBefore: number | null;
  datesAreGmt: boolean;
  search: string;
  customer: number | null;
  product: number | null;
  dp: number;
  fields: string[] | null;
}

// ---------------------------------------------------------------------------------------------

/**
 * A WooCommerce store on 127.0.0.1 (random port). Serves GET /wp-json/ (index), /wp-json/wc/v3
 * (namespace index), /wp-json/wc/v3/orders[/{id}[/refunds[/{id}]]] and the same through
 * /?rest_route=…; anything else under /wp-json is rest_no_route, other paths a 404 HTML page (the
 * site's root a 200 one). Writes are recorded and refused: with the default read-only key by
 * WooCommerce's own 401; with a write key by a 405 of the fake's own.
 *
 * The store's clock is frozen unless moved (advance, setNow); times are kept to the second as
 * WooCommerce keeps them. Orders and refunds share one id sequence, as posts do in WordPress.
 *
 *   const store = await FakeWooCommerce.start();        // https://localhost:PORT, trust store.ca
 *   store.addOrders(500, 7);                            // varied, deterministic for seed and clock
 *   const order = store.addOrder({ lineItems: [{ quantity: 2, total: '40.00', totalTax: '8.00' }] });
 *   store.addRefund(order.id, { amount: '10.00' });
 *   … store.requests, store.maxConcurrentRequests …
 *   await store.close();
 */
export class FakeWooCommerce {
  /** The site address, no trailing slash: https://localhost:PORT[/shop] or http://127.0.0.1:PORT[/shop]. */
  url = '';
  /** The PEM certificate to trust (empty without TLS). */
  ca = '';
  port = 0;
  consumerKey: string;
  consumerSecret: string;
  keyPermissions: KeyPermissions;
  readonly tls: boolean;
  readonly sitePath: string;
  readonly restApi: boolean;
  readonly wooCommerceVersion: string;
  readonly wordPressVersion: string;

  #server!: http.Server | https.Server;
  #tzFormat: Intl.DateTimeFormat | undefined;
  #sockets = new Set<Socket>();
  #timers = new Set<NodeJS.Timeout>();
  #hung = new Set<http.ServerResponse>();
  #down: null | 'refuse' | 'reset' | 'hang' = null;
  #closed = false;

  #now: number;
  #tzOffsetMinutes: number;
  #timezone: string | undefined;
  #currency: string;
  #siteName: string;
  #statuses: string[];
  #rand: () => number;

  #orders = new Map<number, StoredOrder>();
  #products = new Map<number, FakeProduct>(
    PRODUCTS.map(([id, name, sku]) => [id, { name, sku, categories: PRODUCT_CATEGORIES[id] ?? [] }]),
  );
  #nextPostId = 1000;
  #nextItemId = 1;
  #nextMetaId = 1;

  #requests: RecordedRequest[] = [];
  #inFlight = 0;
  #maxInFlight = 0;
  #faults: (FaultSpec & { remaining: number })[] = [];
  #pageFault: ((info: PageRequestInfo) => number | FaultSpec | null | undefined | false) | null = null;
  #delayMs = 0;

  private constructor(options: FakeWooCommerceOptions) {
    this.tls = options.tls ?? true;
    this.sitePath = (options.sitePath ?? '').replace(/\/+$/, '');
    if (this.sitePath !== '' && !this.sitePath.startsWith('/')) this.sitePath = `/${this.sitePath}`;
    this.restApi = options.restApi ?? true;
    this.consumerKey = options.consumerKey ?? `ck_${randomHex(20)}`;
    this.consumerSecret = options.consumerSecret ?? `cs_${randomHex(20)}`;
    this.keyPermissions = options.keyPermissions ?? 'read';
    this.#tzOffsetMinutes = options.timezoneOffsetMinutes ?? 0;
    this.#timezone = options.timezone;
    this.#currency = options.currency ?? 'EUR';
    this.#siteName = options.siteName ?? 'Boutique Test';
    this.#statuses = [...CORE_STATUSES, ...(options.customStatuses ?? ['shipped'])];
    this.#rand = mulberry32(options.seed ?? 1);
    this.#now = (options.now ?? new Date()).getTime();
    this.wooCommerceVersion = options.wooCommerceVersion ?? '9.8.5';
    this.wordPressVersion = options.wordPressVersion ?? '6.8.1';
  }

  /** A self-signed certificate valid two days for localhost and 127.0.0.1. */
  static async generateCertificate(): Promise<{ key: string; cert: string }> {
    const notBefore = new Date(Date.now() - 60_000);
    const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
      notBeforeDate: notBefore,
      notAfterDate: new Date(notBefore.getTime() + 2 * 86_400_000),
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    });
    return { key: pems.private, cert: pems.cert };
  }

  static async start(options: FakeWooCommerceOptions = {}): Promise<FakeWooCommerce> {
    const fake = new FakeWooCommerce(options);
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void fake.#handle(req, res);
    if (fake.tls) {
      const pem = options.certificate ?? (await FakeWooCommerce.generateCertificate());
      fake.ca = pem.cert;
      fake.#server = https.createServer({ key: pem.key, cert: pem.cert }, handler);
    } else {
      fake.#server = http.createServer(handler);
    }
    fake.#server.on('connection', (socket: Socket) => {
      if (fake.#down === 'reset') {
        socket.destroy();
        return;
      }
      fake.#sockets.add(socket);
      socket.on('close', () => fake.#sockets.delete(socket));
    });
    // A client that resets its TLS handshake must not crash the test process.
    fake.#server.on('tlsClientError', () => {});
    fake.#server.on('clientError', (_err, socket) => socket.destroy());
    await fake.#listen(0);
    const host = fake.tls ? 'localhost' : '127.0.0.1';
    fake.url = `${fake.tls ? 'https' : 'http'}://${host}:${fake.port}${fake.sitePath}`;
    return fake;
  }

  #listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.#server.once('error', onError);
      this.#server.listen(port, '127.0.0.1', () => {
        this.#server.off('error', onError);
        this.port = (this.#server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  #destroyConnections(): void {
    for (const res of this.#hung) res.destroy();
    this.#hung.clear();
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#destroyConnections();
    if (this.#server.listening) await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  // --- Clock (the fake's own: frozen unless moved) --------------------------------------------

  now(): Date {
    return new Date(this.#now);
  }
  advance(ms: number): Date {
    this.#now += ms;
    return this.now();
  }
  setNow(date: Date): void {
    this.#now = date.getTime();
  }

  // --- Credentials -------------------------------------------------------------------------------

  /** New keys (the old ones stop working, as after revoking them in WooCommerce). */
  setKeys(consumerKey = `ck_${randomHex(20)}`, consumerSecret = `cs_${randomHex(20)}`): void {
    this.consumerKey = consumerKey;
    this.consumerSecret = consumerSecret;
  }
  setKeyPermissions(permissions: KeyPermissions): void {
    this.keyPermissions = permissions;
  }

  // --- Faults and instrumentation (the fake's own) ----------------------------------------------

  /** The next `count` requests (any path) are answered `status` instead. Calls queue up. */
  failNext(count: number, status: number, options: FaultOptions = {}): void {
    if (count > 0) this.#faults.push({ ...options, status, remaining: count });
  }
  /** A fault for requests the predicate picks (number = status); null removes it. */
  failPages(
    predicate: ((info: PageRequestInfo) => number | FaultSpec | null | undefined | false) | null,
  ): void {
    this.#pageFault = predicate;
  }
  /** Wait `ms` before answering each request; 0 stops. */
  slowDown(ms: number): void {
    this.#delayMs = Math.max(0, ms);
  }
  /**
   * The site goes away until comeBack(), on the same port. 'refuse' (default): the listening socket
   * is closed, connections are refused. 'reset': connections are accepted and cut at once. 'hang':
   * requests are accepted and never answered. Open connections are cut in every mode.
   */
  async goDown(mode: 'refuse' | 'reset' | 'hang' = 'refuse'): Promise<void> {
    if (this.#down !== null) return;
    this.#down = mode;
    this.#destroyConnections();
    if (mode === 'refuse' && this.#server.listening) {
      await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    }
  }
  async comeBack(): Promise<void> {
    const was = this.#down;
    if (was === null) return;
    this.#down = null;
    for (const res of this.#hung) res.destroy();
    this.#hung.clear();
    if (was === 'refuse') await this.#listen(this.port);
  }

  get requests(): readonly RecordedRequest[] {
    return this.#requests;
  }
  /** The most requests in flight at once since the start or the last resetRecording(). */
  get maxConcurrentRequests(): number {
    return this.#maxInFlight;
  }
  resetRecording(): void {
    this.#requests = [];
    this.#maxInFlight = this.#inFlight;
  }

  // --- Store data (control API) ------------------------------------------------------------------

  /** An order; unspecified fields get realistic defaults. Returns it as the API shows it. */
  addOrder(input: Partial<OrderInput> = {}): FakeOrder {
    const order = this.#buildOrder(input, this.#rand);
    this.#orders.set(order.id, order);
    return this.#presentOrder(order, 2);
  }

  /**
   * `count` varied orders, the same for a seed and a clock: statuses of every kind (trash included),
   * empty e-mails, missing countries, fees (some negative), coupons, refunds, creation dates over
   * the three years before now() with some at daylight-saving changes.
   */
  addOrders(count: number, seed = 42): FakeOrder[] {
    const rand = mulberry32(seed);
    const now = this.#now;
    const threeYears = 3 * 365 * 86_400_000;
    const edges = dstEdges(now - threeYears, now);
    const out: FakeOrder[] = [];
    for (let i = 0; i < count; i++) {
      const r = rand();
      const status =
        r < 0.36
          ? 'completed'
          : r < 0.5
            ? 'processing'
            : r < 0.55
              ? 'on-hold'
              : r < 0.61
                ? 'refunded'
                : r < 0.66
                  ? 'cancelled'
                  : r < 0.71
                    ? 'failed'
                    : r < 0.78
                      ? 'pending'
                      : r < 0.81
                        ? 'checkout-draft'
                        : r < 0.9
                          ? 'shipped'
                          : r < 0.95
                            ? 'completed-partly-refunded'
                            : 'trash';
      const created =
        rand() < 0.08 && edges.length > 0
          ? pick(rand, edges) + pick(rand, [-1_800_000, -1000, 0, 1_800_000, 3_599_000])
          : now - Math.floor(rand() * threeYears);
      const country = rand() < 0.06 ? '' : pick(rand, Object.keys(COUNTRIES));
      const emailRoll = rand();
      const input: Partial<OrderInput> = {
        status:
          status === 'refunded' || status === 'completed-partly-refunded' || status === 'trash'
            ? 'completed'
            : status,
        dateCreatedGmt: new Date(Math.min(created, now)),
        billingCountry: country,
      };
      if (emailRoll < 0.08) input.billingEmail = '';
      if (rand() < 0.18) {
        input.fees = [
          rand() < 0.25
            ? { total: -(1 + Math.floor(rand() * 5)), name: 'Loyalty discount' }
            : { total: pick(rand, [1.5, 2, 3.9]), name: pick(rand, ['Gift wrap', 'Payment fee']) },
        ];
      }
      const order = this.#buildOrder(input, rand);
      // Most orders were modified after creation (payment, completion), within the clock.
      if (rand() < 0.7)
        order.modified = wholeSeconds(Math.min(now, order.created + Math.floor(rand() * 5 * 86_400_000)));
      this.#orders.set(order.id, order);
      const refundAt = Math.min(now, order.modified + 3_600_000);
      const first = order.items[0];
      try {
        if (status === 'refunded') {
          this.#refund(order, { reason: 'Returned' }, refundAt, true);
        } else if (status === 'completed-partly-refunded' && first) {
          const unit = Math.round(first.total / first.quantity) / 100;
          this.#refund(
            order,
            { lineItems: [{ quantity: 1, total: unit }], reason: 'Damaged' },
            refundAt,
            true,
          );
        }
      } catch {
        // An order whose total cannot take that refund (a large negative fee) stays as it is.
      }
      if (status === 'trash') {
        order.status = 'trash';
      }
      out.push(this.#presentOrder(order, 2));
    }
    return out;
  }

  /** Changes an order as the shop admin would; date_modified moves to now(). */
  updateOrder(id: number, changes: Partial<OrderInput>): FakeOrder {
    const order = this.#mustGet(id);
    const previous = order.status;
    const rebuilt = this.#buildOrder({ ...this.#inputOf(order), ...changes }, this.#rand, order);
    if (rebuilt.status !== previous) {
      // As WC_Order::maybe_set_date_paid / maybe_set_date_completed on a status change.
      const now = wholeSeconds(this.#now);
      if (PAID_STATUSES.has(rebuilt.status) && rebuilt.paid === null && changes.datePaidGmt === undefined) {
        rebuilt.paid = now;
      }
      if (rebuilt.status === 'completed' && changes.dateCompletedGmt === undefined) rebuilt.completed = now;
    }
    rebuilt.modified = wholeSeconds(this.#now);
    this.#orders.set(id, rebuilt);
    return this.#presentOrder(rebuilt, 2);
  }

  /**
   * A refund as wc_create_refund makes it: refused above the amount left to refund ('Invalid refund
   * amount.'), the order 'refunded' once nothing is left, date_modified moved to now().
   */
  addRefund(orderId: number, input: RefundInput = {}): FakeRefund {
    const order = this.#mustGet(orderId);
    const refund = this.#refund(order, input, this.#now, false);
    return this.#presentRefund(order, refund, 2);
  }

  /** Moves an order to the trash (status 'trash'); the API still serves it by id. */
  trashOrder(id: number): FakeOrder {
    const order = this.#mustGet(id);
    order.status = 'trash';
    order.modified = wholeSeconds(this.#now);
    return this.#presentOrder(order, 2);
  }

  /** Deletes an order for good, with its refunds: the API answers 404. */
  deleteOrder(id: number): void {
    this.#mustGet(id);
    this.#orders.delete(id);
  }

  /** Every order as the API shows it (id order); trashed ones only when asked. */
  allOrders(options: { includeTrash?: boolean } = {}): FakeOrder[] {
    return [...this.#orders.values()]
      .filter((o) => options.includeTrash || o.status !== 'trash')
      .sort((a, b) => a.id - b.id)
      .map((o) => this.#presentOrder(o, 2));
  }

  order(id: number): FakeOrder | undefined {
    const o = this.#orders.get(id);
    return o ? this.#presentOrder(o, 2) : undefined;
  }

  /** An order's refunds as the API lists them (newest first). */
  refundsOf(id: number): FakeRefund[] {
    const order = this.#mustGet(id);
    return [...order.refunds].reverse().map((r) => this.#presentRefund(order, r, 2));
  }

  // --- Webhooks ----------------------------------------------------------------------------------

  /**
   * Delivers a webhook as WC_Webhook::deliver does: POST, JSON body (the order as
   * GET /wc/v3/orders/{id} shows it; only {"id": N} for order.deleted), signed with the secret.
   * The delivery id is wp_hash( webhook id . time() ): the same for two deliveries of one webhook
   * in the same second of the store's clock, as in WooCommerce.
   */
  async deliver(
    target: string,
    topic: WebhookTopic,
    orderId: number,
    secret: string,
    opts: {
      signature?: string;
      omitSignature?: boolean;
      ca?: string;
      body?: string;
      webhookId?: number;
      headers?: Record<string, string>;
    } = {},
  ): Promise<DeliveryResult> {
    const [resource, event] = topic.split('.') as [string, string];
    let body = opts.body;
    if (body === undefined) {
      if (event === 'deleted') body = phpJsonEncode({ id: orderId });
      else body = phpJsonEncode(this.#presentOrder(this.#mustGet(orderId), 2)).trim();
    }
    const webhookId = opts.webhookId ?? 1;
    const deliveryId = crypto
      .createHmac('md5', 'fake-wp-salt')
      .update(`${webhookId}${Math.floor(this.#now / 1000)}`)
      .digest('hex');
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': this.#hookshotAgent(),
      'X-WC-Webhook-Source': `${this.url}/`,
      'X-WC-Webhook-Topic': topic,
      'X-WC-Webhook-Resource': resource,
      'X-WC-Webhook-Event': event,
      'X-WC-Webhook-ID': String(webhookId),
      'X-WC-Webhook-Delivery-ID': deliveryId,
    };
    if (!opts.omitSignature)
      headers['X-WC-Webhook-Signature'] = opts.signature ?? webhookSignature(body, secret);
    Object.assign(headers, opts.headers ?? {});
    return post(target, headers, body, opts.ca);
  }

  /**
   * The ping WC_Webhook::deliver_ping sends when a webhook is saved: POST of the form body
   * `webhook_id=N`, no X-WC-Webhook-* header and no signature. WooCommerce wants a 200 back.
   */
  async deliverPing(target: string, webhookId: number, opts: { ca?: string } = {}): Promise<DeliveryResult> {
    const headers = {
      'Content-Type': 'application/x-www-form-urlencoded',
      'User-Agent': this.#hookshotAgent(),
    };
    return post(target, headers, `webhook_id=${webhookId}`, opts.ca);
  }

  #hookshotAgent(): string {
    return `WooCommerce/${this.wooCommerceVersion} Hookshot (WordPress/${this.wordPressVersion})`;
  }

  // --- Model -------------------------------------------------------------------------------------

  #mustGet(id: number): StoredOrder {
    const order = this.#orders.get(id);
    if (!order) throw new Error(`FakeWooCommerce: no order ${id}`);
    return order;
  }

  #offsetAt(ms: number): number {
    if (!this.#timezone) return this.#tzOffsetMinutes;
    this.#tzFormat ??= new Intl.DateTimeFormat('en-US', {
      timeZone: this.#timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    const parts = this.#tzFormat.formatToParts(new Date(wholeSeconds(ms)));
    const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
    const wall = Date.UTC(
      get('year'),
      get('month') - 1,
      get('day'),
      get('hour'),
      get('minute'),
      get('second'),
    );
    return Math.round((wall - wholeSeconds(ms)) / 60_000);
  }

  /** Site-local wall time of an instant ('YYYY-MM-DDTHH:MM:SS'). */
  #local(ms: number): string {
    return isoWall(ms + this.#offsetAt(ms) * 60_000);
  }

  #gmt(ms: number): string {
    return isoWall(ms);
  }

  #localToInstant(wallMs: number): number {
    let guess = wallMs - this.#offsetAt(wallMs) * 60_000;
    guess = wallMs - this.#offsetAt(guess) * 60_000;
    return guess;
  }

  #inputOf(o: StoredOrder): Partial<OrderInput> {
    return {
      status: o.status,
      dateCreatedGmt: new Date(o.created),
      datePaidGmt: o.paid === null ? null : new Date(o.paid),
      dateCompletedGmt: o.completed === null ? null : new Date(o.completed),
      billing: { ...o.billing },
      shipping: { ...o.shipping },
      currency: o.currency,
      customerId: o.customerId,
      lineItems: o.items.map((i) => ({
        quantity: i.quantity,
        total: i.total / 100,
        totalTax: i.totalTax / 100,
        subtotal: i.subtotal / 100,
        subtotalTax: i.subtotalTax / 100,
        name: i.name,
        productId: i.productId,
        variationId: i.variationId,
        sku: i.sku,
      })),
      shippingTotal: (o.shippingLines[0]?.total ?? 0) / 100,
      shippingTax: (o.shippingLines[0]?.totalTax ?? 0) / 100,
      ...(o.shippingLines[0] ? { shippingMethodTitle: o.shippingLines[0].methodTitle } : {}),
      fees: o.fees.map((f) => ({ total: f.total / 100, totalTax: f.totalTax / 100, name: f.name })),
      taxRatePercent: o.taxRate.percent,
      paymentMethod: o.paymentMethod,
      paymentMethodTitle: o.paymentMethodTitle,
      transactionId: o.transactionId,
      pricesIncludeTax: o.pricesIncludeTax,
      createdVia: o.createdVia,
      parentId: o.parentId,
      customerNote: o.customerNote,
      metaData: o.meta.map((m) => ({ key: m.key, value: m.value })),
    };
  }

  #buildOrder(input: Partial<OrderInput>, rand: () => number, existing?: StoredOrder): StoredOrder {
    // WC_Order::set_status drops a 'wc-' prefix.
    const status = (input.status ?? 'completed').replace(/^wc-/, '');
    if (!this.#statuses.includes(status) && status !== 'trash') this.#statuses.push(status);
    const created = wholeSeconds(input.dateCreatedGmt?.getTime() ?? this.#now);
    const country =
      input.billingCountry ?? input.billing?.country ?? pick(rand, ['FR', 'FR', 'DE', 'BE', 'US']);
    const first = input.billing?.first_name ?? pick(rand, FIRST_NAMES);
    const last = input.billing?.last_name ?? pick(rand, LAST_NAMES);
    const place = COUNTRIES[country.toUpperCase()]?.places;
    const [city, state, postcode] = place ? pick(rand, place) : ['', '', ''];
    const email =
      input.billingEmail ??
      input.billing?.email ??
      `${first}.${last}@example.com`
        .normalize('NFD')
        .replace(/[^\x20-\x7e]/g, '')
        .replace(/'/g, '')
        .toLowerCase();
    const billing: FakeBilling = {
      ...emptyBilling(),
      first_name: first,
      last_name: last,
      address_1: existing ? existing.billing.address_1 : `${1 + Math.floor(rand() * 120)} rue de la Gare`,
      city,
      state,
      postcode,
      phone: existing
        ? existing.billing.phone
        : `+33 6 ${pad(Math.floor(rand() * 100))} ${pad(Math.floor(rand() * 100))}`,
      ...(input.billing ?? {}),
      country,
      email,
    };
    const shipping: FakeShipping = {
      first_name: billing.first_name,
      last_name: billing.last_name,
      company: billing.company,
      address_1: billing.address_1,
      address_2: billing.address_2,
      city: billing.city,
      state: billing.state,
      postcode: billing.postcode,
      country: billing.country,
      phone: '',
      ...(input.shipping ?? {}),
    };
    const percent = input.taxRatePercent ?? countryRate(country);
    const taxOf = (cents: number) => Math.round((cents * percent) / 100);
    const rate: TaxRate = {
      id: 1 + Object.keys(COUNTRIES).indexOf(country.toUpperCase()),
      code: `${country.toUpperCase() || 'XX'}-${(COUNTRIES[country.toUpperCase()]?.label ?? 'TAX').toUpperCase().replace(/\W/g, '')}-1`,
      label: COUNTRIES[country.toUpperCase()]?.label ?? 'Tax',
      percent,
    };
    if (rate.id <= 0) rate.id = 99;

    const itemIds = existing?.items.map((i) => i.id) ?? [];
    const lineInputs: LineItemInput[] =
      input.lineItems ??
      Array.from({ length: 1 + Math.floor(rand() * 3) }, () => {
        const [pid, name, sku, price] = pick(rand, PRODUCTS);
        const quantity = 1 + Math.floor(rand() * (rand() < 0.8 ? 2 : 4));
        const subtotal = price * quantity;
        const discounted = rand() < 0.12 ? Math.round(subtotal * 0.9) : subtotal;
        return { quantity, total: discounted / 100, subtotal: subtotal / 100, name, productId: pid, sku };
      });
    const items: StoredItem[] = lineInputs.map((li, idx) => {
      const total = toCents(li.total);
      const subtotal = li.subtotal === undefined ? total : toCents(li.subtotal);
      const totalTax = li.totalTax === undefined ? taxOf(total) : toCents(li.totalTax);
      const subtotalTax =
        li.subtotalTax === undefined
          ? li.subtotal === undefined
            ? totalTax
            : taxOf(subtotal)
          : toCents(li.subtotalTax);
      const product = PRODUCTS.find((p) => p[0] === li.productId) ?? PRODUCTS[idx % PRODUCTS.length];
      return {
        id: itemIds[idx] ?? this.#nextItemId++,
        name: li.name ?? product?.[1] ?? 'Product',
        productId: li.productId ?? product?.[0] ?? 0,
        variationId: li.variationId ?? 0,
        quantity: li.quantity,
        subtotal,
        subtotalTax,
        total,
        totalTax,
        sku: li.sku ?? product?.[2] ?? '',
      };
    });

    const shippingTotal =
      input.shippingTotal === undefined
        ? existing
          ? 0
          : pick(rand, [0, 490, 490, 690, 990])
        : toCents(input.shippingTotal);
    const shippingTax = input.shippingTax === undefined ? taxOf(shippingTotal) : toCents(input.shippingTax);
    const methodTitle = input.shippingMethodTitle ?? (shippingTotal === 0 ? 'Free shipping' : 'Flat rate');
    const shippingLines: StoredShipping[] =
      shippingTotal === 0 &&
      shippingTax === 0 &&
      input.shippingMethodTitle === undefined &&
      input.shippingTotal !== undefined
        ? []
        : [
            {
              id: existing?.shippingLines[0]?.id ?? this.#nextItemId++,
              methodTitle,
              methodId: shippingTotal === 0 ? 'free_shipping' : 'flat_rate',
              instanceId: shippingTotal === 0 ? '2' : '1',
              total: shippingTotal,
              totalTax: shippingTax,
            },
          ];
    const feeIds = existing?.fees.map((f) => f.id) ?? [];
    const fees: StoredFee[] = (input.fees ?? []).map((f, idx) => {
      const total = toCents(f.total);
      return {
        id: feeIds[idx] ?? this.#nextItemId++,
        name: f.name ?? (total < 0 ? 'Discount' : 'Fee'),
        total,
        totalTax: f.totalTax === undefined ? taxOf(total) : toCents(f.totalTax),
      };
    });
    const discount = items.reduce((s, i) => s + i.subtotal - i.total, 0);
    const discountTax = items.reduce((s, i) => s + i.subtotalTax - i.totalTax, 0);
    const coupons: StoredCoupon[] =
      discount === 0
        ? []
        : [{ id: existing?.coupons[0]?.id ?? this.#nextItemId++, code: 'welcome10', discount, discountTax }];

    const [gateway, gatewayTitle] = pick(rand, GATEWAYS);
    const paymentMethod = input.paymentMethod ?? (existing ? existing.paymentMethod : gateway);
    const paid =
      input.datePaidGmt !== undefined
        ? input.datePaidGmt === null
          ? null
          : wholeSeconds(input.datePaidGmt.getTime())
        : PAID_STATUSES.has(status)
          ? created + 60_000 * (1 + Math.floor(rand() * 5))
          : null;
    const completed =
      input.dateCompletedGmt !== undefined
        ? input.dateCompletedGmt === null
          ? null
          : wholeSeconds(input.dateCompletedGmt.getTime())
        : status === 'completed' || status === 'refunded'
          ? created + 3_600_000
          : null;
    const id = existing?.id ?? this.#nextPostId++;
    const orderKey =
      existing?.orderKey ??
      `wc_order_${Array.from({ length: 13 }, () => pick(rand, [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'])).join('')}`;
    const createdVia = input.createdVia ?? 'checkout';
    return {
      id,
      parentId: input.parentId ?? 0,
      orderKey,
      createdVia,
      version: existing?.version ?? this.wooCommerceVersion,
      status,
      currency: input.currency ?? this.#currency,
      pricesIncludeTax: input.pricesIncludeTax ?? false,
      created,
      modified: existing?.modified ?? created,
      paid,
      completed,
      customerId: input.customerId ?? (rand() < 0.4 ? 0 : 1 + Math.floor(rand() * 400)),
      customerIp: existing?.customerIp ?? `203.0.113.${1 + Math.floor(rand() * 250)}`,
      customerUserAgent:
        existing?.customerUserAgent ??
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0',
      customerNote: input.customerNote ?? '',
      cartHash: existing?.cartHash ?? (createdVia === 'checkout' ? randomHexFrom(rand, 16) : ''),
      billing,
      shipping,
      paymentMethod,
      paymentMethodTitle:
        input.paymentMethodTitle ??
        (existing
          ? existing.paymentMethodTitle
          : (GATEWAYS.find((g) => g[0] === paymentMethod)?.[1] ?? gatewayTitle)),
      transactionId:
        input.transactionId ??
        existing?.transactionId ??
        (paid !== null && paymentMethod === 'stripe' ? `pi_${randomHexFrom(rand, 12)}` : ''),
      taxRate: rate,
      taxLineId: existing?.taxLineId ?? this.#nextItemId++,
      items,
      shippingLines,
      fees,
      coupons,
      meta: (input.metaData ?? [{ key: 'is_vat_exempt', value: 'no' }]).map((m, idx) => ({
        id: existing?.meta[idx]?.id ?? this.#nextMetaId++,
        key: m.key,
        value: m.value,
      })),
      refunds: existing?.refunds ?? [],
    };
  }

  #refund(order: StoredOrder, input: RefundInput, at: number, fillAll: boolean): StoredRefund {
    const taxed = (total: Money, tax: Money | undefined, pct: number) =>
      tax === undefined ? Math.round((toCents(total) * pct) / 100) : toCents(tax);
    let lineInputs = input.lineItems ?? [];
    let shippingInput = input.shipping;
    if (fillAll && input.lineItems === undefined && input.amount === undefined) {
      // Everything left: each line and the shipping in full (generated data only).
      lineInputs = order.items.map((i) => ({
        itemId: i.id,
        quantity: i.quantity,
        total: i.total / 100,
        totalTax: i.totalTax / 100,
      }));
      const s = order.shippingLines[0];
      if (s && (s.total !== 0 || s.totalTax !== 0))
        shippingInput = { total: s.total / 100, totalTax: s.totalTax / 100 };
    }
    const items: StoredRefundLine[] = lineInputs.map((li, idx) => {
      const target = li.itemId === undefined ? order.items[idx] : order.items.find((i) => i.id === li.itemId);
      if (!target)
        throw new Error(`FakeWooCommerce: order ${order.id} has no line item ${li.itemId ?? `#${idx}`}`);
      return {
        id: this.#nextItemId++,
        metaId: this.#nextMetaId++,
        refundedItemId: target.id,
        quantity: li.quantity,
        total: toCents(li.total),
        totalTax: taxed(li.total, li.totalTax, order.taxRate.percent),
      };
    });
    const shippingLine = order.shippingLines[0];
    const shipping: StoredRefundLine[] = [];
    if (shippingInput) {
      if (!shippingLine) throw new Error(`FakeWooCommerce: order ${order.id} has no shipping line`);
      shipping.push({
        id: this.#nextItemId++,
        metaId: this.#nextMetaId++,
        refundedItemId: shippingLine.id,
        quantity: 0,
        total: toCents(shippingInput.total),
        totalTax: taxed(shippingInput.total, shippingInput.totalTax, order.taxRate.percent),
      });
    }
    const parts = [...items, ...shipping].reduce((s, l) => s + l.total + l.totalTax, 0);
    let amount = input.amount === undefined ? parts : toCents(input.amount);
    const total = orderTotals(order).total;
    const refunded = order.refunds.reduce((s, r) => s + r.amount, 0);
    if (fillAll && input.amount === undefined && input.lineItems === undefined) amount = total - refunded;
    if (amount <= 0 || amount > total - refunded) {
      throw new Error(
        `FakeWooCommerce: Invalid refund amount. (${money(amount)} asked, ${money(total - refunded)} left)`,
      );
    }
    const refund: StoredRefund = {
      id: this.#nextPostId++,
      created: wholeSeconds(at),
      amount,
      reason: input.reason ?? '',
      refundedPayment: input.refundedPayment ?? false,
      items,
      shipping,
      taxLineId: this.#nextItemId++,
    };
    order.refunds.push(refund);
    // As wc_create_refund does: the whole amount refunded makes the order 'refunded'.
    if (total - refunded - amount <= 0 && order.status !== 'refunded') order.status = 'refunded';
    order.modified = Math.max(order.modified, wholeSeconds(at));
    return refund;
  }

  // --- Presentation (as the controllers build the JSON) -----------------------------------------

  #restUrl(route: string): string {
    return `${this.url}/wp-json${route}`;
  }

  #presentOrder(o: StoredOrder, dp: number): FakeOrder {
    const m = (c: number) => money(c, dp);
    const t = orderTotals(o);
    const itemTaxes = (total: number, subtotal: number | null): FakeItemTax[] =>
      total === 0 && (subtotal ?? 0) === 0
        ? []
        : [
            {
              id: o.taxRate.id,
              total: rawAmount(total),
              subtotal: subtotal === null ? '' : rawAmount(subtotal),
            },
          ];
    const date = (ms: number | null) => (ms === null ? null : this.#local(ms));
    const dateGmt = (ms: number | null) => (ms === null ? null : this.#gmt(ms));
    const links: FakeLinks = {
      self: [{ href: this.#restUrl(`/wc/v3/orders/${o.id}`) }],
      collection: [{ href: this.#restUrl('/wc/v3/orders') }],
    };
    if (o.customerId !== 0) links.customer = [{ href: this.#restUrl(`/wc/v3/customers/${o.customerId}`) }];
    if (o.parentId !== 0) links.up = [{ href: this.#restUrl(`/wc/v3/orders/${o.parentId}`) }];
    return {
      id: o.id,
      parent_id: o.parentId,
      number: String(o.id),
      order_key: o.orderKey,
      created_via: o.createdVia,
      version: o.version,
      status: o.status,
      currency: o.currency,
      date_created: this.#local(o.created),
      date_created_gmt: this.#gmt(o.created),
      date_modified: this.#local(o.modified),
      date_modified_gmt: this.#gmt(o.modified),
      discount_total: m(t.discount),
      discount_tax: m(t.discountTax),
      shipping_total: m(t.shipping),
      shipping_tax: m(t.shippingTax),
      cart_tax: m(t.cartTax),
      total: m(t.total),
      total_tax: m(t.cartTax + t.shippingTax),
      prices_include_tax: o.pricesIncludeTax,
      customer_id: o.customerId,
      customer_ip_address: o.customerIp,
      customer_user_agent: o.customerUserAgent,
      customer_note: o.customerNote,
      billing: { ...o.billing },
      shipping: { ...o.shipping },
      payment_method: o.paymentMethod,
      payment_method_title: o.paymentMethodTitle,
      transaction_id: o.transactionId,
      date_paid: date(o.paid),
      date_paid_gmt: dateGmt(o.paid),
      date_completed: date(o.completed),
      date_completed_gmt: dateGmt(o.completed),
      cart_hash: o.cartHash,
      meta_data: o.meta.map((x) => ({ ...x })),
      line_items: o.items.map((i) => ({
        id: i.id,
        name: i.name,
        product_id: i.productId,
        variation_id: i.variationId,
        quantity: i.quantity,
        tax_class: '',
        subtotal: m(i.subtotal),
        subtotal_tax: m(i.subtotalTax),
        total: m(i.total),
        total_tax: m(i.totalTax),
        taxes: itemTaxes(i.totalTax, i.subtotalTax),
        meta_data: [],
        sku: i.sku,
        // As WooCommerce: total / quantity, a JSON number (not a string).
        price: i.quantity ? i.total / 100 / i.quantity : 0,
        image: { id: 0, src: '' },
        // WooCommerce 5.6+: a variation's line names its parent product.
        parent_name: i.variationId ? (this.#products.get(i.productId)?.name ?? null) : null,
      })),
      tax_lines:
        t.cartTax === 0 && t.shippingTax === 0
          ? []
          : [
              {
                id: o.taxLineId,
                rate_code: o.taxRate.code,
                rate_id: o.taxRate.id,
                label: o.taxRate.label,
                compound: false,
                tax_total: m(t.cartTax),
                shipping_tax_total: m(t.shippingTax),
                rate_percent: o.taxRate.percent,
                meta_data: [],
              },
            ],
      shipping_lines: o.shippingLines.map((s) => ({
        id: s.id,
        method_title: s.methodTitle,
        method_id: s.methodId,
        instance_id: s.instanceId,
        total: m(s.total),
        total_tax: m(s.totalTax),
        taxes: itemTaxes(s.totalTax, null),
        meta_data: [],
      })),
      fee_lines: o.fees.map((f) => ({
        id: f.id,
        name: f.name,
        tax_class: '',
        tax_status: f.totalTax === 0 ? 'none' : 'taxable',
        total: m(f.total),
        total_tax: m(f.totalTax),
        taxes: itemTaxes(f.totalTax, f.totalTax),
        meta_data: [],
      })),
      coupon_lines: o.coupons.map((c) => ({
        id: c.id,
        code: c.code,
        discount: m(c.discount),
        discount_tax: m(c.discountTax),
        discount_type: 'percent',
        nominal_amount: 10,
        free_shipping: false,
        meta_data: [],
      })),
      // As get_formatted_item_data: newest first, total = '-' . amount.
      refunds: [...o.refunds]
        .reverse()
        .map((r) => ({ id: r.id, reason: r.reason, total: `-${money(r.amount, dp)}` })),
      payment_url: `${this.url}/checkout/order-pay/${o.id}/?pay_for_order=true&key=${o.orderKey}`,
      is_editable: ['pending', 'on-hold', 'checkout-draft'].includes(o.status),
      needs_payment: ['pending', 'failed'].includes(o.status) && t.total > 0,
      needs_processing: true,
      _links: links,
    };
  }

  #presentRefund(o: StoredOrder, r: StoredRefund, dp: number): FakeRefund {
    const m = (c: number) => money(c, dp);
    const negTax = (c: number, withSubtotal: boolean): FakeItemTax[] =>
      c === 0
        ? []
        : [{ id: o.taxRate.id, total: rawAmount(-c), subtotal: withSubtotal ? rawAmount(-c) : '' }];
    const meta = (l: StoredRefundLine): FakeMeta[] => [
      {
        id: l.metaId,
        key: '_refunded_item_id',
        value: String(l.refundedItemId),
        display_key: '_refunded_item_id',
        display_value: String(l.refundedItemId),
      },
    ];
    const cartTax = r.items.reduce((s, l) => s + l.totalTax, 0);
    const shippingTax = r.shipping.reduce((s, l) => s + l.totalTax, 0);
    return {
      id: r.id,
      date_created: this.#local(r.created),
      date_created_gmt: this.#gmt(r.created),
      amount: m(r.amount),
      reason: r.reason,
      refunded_by: 1,
      refunded_payment: r.refundedPayment,
      meta_data: [],
      line_items: r.items.map((l) => {
        const item = o.items.find((i) => i.id === l.refundedItemId);
        return {
          id: l.id,
          name: item?.name ?? '',
          product_id: item?.productId ?? 0,
          variation_id: item?.variationId ?? 0,
          quantity: -l.quantity,
          tax_class: '',
          subtotal: m(-l.total),
          subtotal_tax: m(-l.totalTax),
          total: m(-l.total),
          total_tax: m(-l.totalTax),
          taxes: negTax(l.totalTax, true),
          meta_data: meta(l),
          sku: item?.sku ?? '',
          price: l.quantity ? -l.total / 100 / -l.quantity : 0,
          image: { id: 0, src: '' },
          parent_name: null,
        };
      }),
      shipping_lines: r.shipping.map((l) => {
        const line = o.shippingLines.find((s) => s.id === l.refundedItemId);
        return {
          id: l.id,
          method_title: line?.methodTitle ?? '',
          method_id: line?.methodId ?? '',
          instance_id: line?.instanceId ?? '',
          total: m(-l.total),
          total_tax: m(-l.totalTax),
          taxes: negTax(l.totalTax, false),
          meta_data: meta(l),
        };
      }),
      tax_lines:
        cartTax === 0 && shippingTax === 0
          ? []
          : [
              {
                id: r.taxLineId,
                rate_code: o.taxRate.code,
                rate_id: o.taxRate.id,
                label: o.taxRate.label,
                compound: false,
                tax_total: m(-cartTax),
                shipping_tax_total: m(-shippingTax),
                rate_percent: o.taxRate.percent,
                meta_data: [],
              },
            ],
      fee_lines: [],
      _links: {
        self: [{ href: this.#restUrl(`/wc/v3/orders/${o.id}/refunds/${r.id}`) }],
        collection: [{ href: this.#restUrl(`/wc/v3/orders/${o.id}/refunds`) }],
        up: [{ href: this.#restUrl(`/wc/v3/orders/${o.id}`) }],
      },
    };
  }

  // --- HTTP --------------------------------------------------------------------------------------

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      effectiveMethod: req.method ?? 'GET',
      url: req.url ?? '/',
      path: url.pathname,
      route: null,
      query: rawQueryRecord(url.searchParams),
      headers: { ...req.headers },
      body: '',
      auth: 'none',
      authenticated: false,
      time: new Date(),
      storeTime: this.now(),
    };
    this.#requests.push(record);
    this.#inFlight++;
    this.#maxInFlight = Math.max(this.#maxInFlight, this.#inFlight);
    let done = false;
    const finished = () => {
      if (!done) this.#inFlight--;
      done = true;
    };
    res.on('close', finished);
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size <= 1 << 20) chunks.push(chunk);
      }
    } catch {
      return;
    }
    record.body = Buffer.concat(chunks).toString('utf8');
    if (this.#down === 'hang') {
      this.#hung.add(res);
      return;
    }
    if (this.#delayMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          resolve();
        }, this.#delayMs);
        this.#timers.add(timer);
      });
    }
    if (res.destroyed || this.#closed) return;
    let reply: Reply;
    try {
      reply = this.#dispatch(req, url, record);
    } catch (error) {
      reply = {
        status: 500,
        headers: { 'Content-Type': 'text/plain' },
        body: `FakeWooCommerce failed: ${(error as Error).stack ?? String(error)}`,
      };
    }
    record.status = reply.status;
    res.writeHead(reply.status, reply.headers);
    res.end(req.method === 'HEAD' ? undefined : reply.body);
    // Answered: no longer in flight, even if the socket's close comes later.
    finished();
  }

  #takeFault(record: RecordedRequest, route: string | null, page: number): Reply | null {
    let spec: FaultSpec | null = null;
    const queued = this.#faults[0];
    if (queued) {
      queued.remaining--;
      if (queued.remaining <= 0) this.#faults.shift();
      spec = queued;
    } else if (this.#pageFault) {
      const got = this.#pageFault({ route, method: record.effectiveMethod, page, query: record.query });
      if (typeof got === 'number') spec = { status: got };
      else if (got) spec = got;
    }
    if (!spec) return null;
    record.fault = spec.status;
    const reason = http.STATUS_CODES[spec.status] ?? 'Error';
    const body =
      spec.body ??
      `<html>\r\n<head><title>${spec.status} ${reason}</title></head>\r\n<body>\r\n<center><h1>${spec.status} ${reason}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
    let contentType = spec.contentType;
    if (!contentType) {
      try {
        JSON.parse(body);
        contentType = 'application/json; charset=UTF-8';
      } catch {
        contentType = 'text/html';
      }
    }
    const headers: Record<string, string> = { 'Content-Type': contentType, ...(spec.headers ?? {}) };
    if (spec.retryAfterSeconds !== undefined) headers['Retry-After'] = String(spec.retryAfterSeconds);
    return { status: spec.status, headers, body };
  }

  #html(status: number, title: string, text: string): Reply {
    const headers: Record<string, string> = { 'Content-Type': 'text/html; charset=UTF-8' };
    // WordPress advertises its REST API on every page (rest_output_link_header).
    if (this.restApi) headers.Link = `<${this.url}/wp-json/>; rel="https://api.w.org/"`;
    const body =
      `<!DOCTYPE html>\n<html lang="en-US">\n<head>\n<meta charset="UTF-8">\n<title>${title} &#8211; ${this.#siteName}</title>\n` +
      `</head>\n<body class="${status === 404 ? 'error404' : 'home'}">\n<h1>${text}</h1>\n</body>\n</html>\n`;
    return { status, headers, body };
  }

  #dispatch(req: http.IncomingMessage, url: URL, record: RecordedRequest): Reply {
    const params = parsePhpQuery(url.search.slice(1));
    let path = url.pathname;
    let route: string | null = null;
    let underSite = true;
    if (this.sitePath) {
      if (path === this.sitePath) path = '/';
      else if (path.startsWith(`${this.sitePath}/`)) path = path.slice(this.sitePath.length);
      else underSite = false;
    }
    if (underSite) {
      if (path === '/wp-json' || path.startsWith('/wp-json/')) route = path.slice('/wp-json'.length) || '/';
      else if ((path === '/' || path === '/index.php') && typeof params.get('rest_route') === 'string') {
        route = params.get('rest_route') as string;
      }
    }
    if (route !== null) {
      route = route.replace(/\/+$/, '') || '/';
      if (!route.startsWith('/')) route = `/${route}`;
    }
    const pageParam = params.get('page');
    const page = typeof pageParam === 'string' && /^\d+$/.test(pageParam) ? Number(pageParam) : 1;
    record.route = this.restApi ? route : null;
    const fault = this.#takeFault(record, record.route, page);
    if (fault) return fault;

    if (!underSite) return this.#html(404, 'Page not found', 'Oops! That page can&rsquo;t be found.');
    if (route === null || !this.restApi) {
      if (path === '/' || path === '/index.php')
        return this.#html(200, this.#siteName, 'Welcome to our shop');
      return this.#html(404, 'Page not found', 'Oops! That page can&rsquo;t be found.');
    }
    return this.#rest(req, route, params, record);
  }

  #authenticate(
    params: Map<string, string | string[]>,
    req: http.IncomingMessage,
    record: RecordedRequest,
  ): { user: boolean; error: RestError | null } {
    // WC_REST_Authentication::perform_basic_authentication: the consumer_key/consumer_secret query
    // parameters first, then the Basic header. WooCommerce does this over HTTPS only (is_ssl());
    // over plain HTTP it wants OAuth 1.0a. The fake's tls:false mode accepts both anyway.
    let key = '';
    let secret = '';
    const qk = params.get('consumer_key');
    const qs = params.get('consumer_secret');
    if (typeof qk === 'string' && qk !== '' && typeof qs === 'string' && qs !== '') {
      key = qk;
      secret = qs;
      record.auth = 'query';
    } else {
      const header = req.headers.authorization ?? '';
      const basic = /^Basic\s+(\S+)$/i.exec(header.trim());
      if (basic) {
        const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon > 0 && colon < decoded.length - 1) {
          key = decoded.slice(0, colon);
          secret = decoded.slice(colon + 1);
          record.auth = 'basic';
        }
      }
    }
    if (!key || !secret) return { user: false, error: null };
    // As WooCommerce does: an unknown key sets no error, the request just goes on unauthenticated
    // and the route's permission check answers (woocommerce_rest_cannot_view, 401).
    if (key !== this.consumerKey) return { user: false, error: null };
    const a = Buffer.from(secret);
    const b = Buffer.from(this.consumerSecret);
    if (a.length !== b.length || !crypto.timingSafeEqual(a, b)) {
      return {
        user: false,
        error: new RestError(401, 'woocommerce_rest_authentication_error', 'Consumer secret is invalid.'),
      };
    }
    record.authenticated = true;
    return { user: true, error: null };
  }

  #restHeaders(extra: Record<string, string | string[]> = {}): Record<string, string | string[]> {
    return {
      'Content-Type': 'application/json; charset=UTF-8',
      'X-Robots-Tag': 'noindex',
      Link: `<${this.url}/wp-json/>; rel="https://api.w.org/"`,
      'X-Content-Type-Options': 'nosniff',
      'Access-Control-Expose-Headers': 'X-WP-Total, X-WP-TotalPages, Link',
      'Access-Control-Allow-Headers':
        'Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type',
      ...extra,
    };
  }

  #json(status: number, data: unknown, extra: Record<string, string | string[]> = {}): Reply {
    return { status, headers: this.#restHeaders(extra), body: phpJsonEncode(data) };
  }

  #error(e: RestError): Reply {
    // WP_REST_Server::error_to_response: the status comes from data['status'] when data is an
    // array, else 500 (the refunds controller passes a bare 404 there: HTTP 500).
    return this.#json(e.status, { code: e.code, message: e.message, data: e.data });
  }

  #rest(
    req: http.IncomingMessage,
    route: string,
    params: Map<string, string | string[]>,
    record: RecordedRequest,
  ): Reply {
    let method = (req.method ?? 'GET').toUpperCase();
    const override = params.get('_method') ?? req.headers['x-http-method-override'];
    if (typeof override === 'string' && override !== '') method = override.toUpperCase();
    record.effectiveMethod = method;
    try {
      const isWc = route.startsWith('/wc/') || route.startsWith('/wc-');
      if (isWc) {
        const auth = this.#authenticate(params, req, record);
        if (auth.error) throw auth.error;
        if (auth.user) this.#checkKeyPermissions(method);
      } else {
        this.#authenticate(params, req, record); // recorded, not used: WooCommerce keys only act on wc/ routes
        record.authenticated = false;
      }
      return this.#route(route, method, params, record.authenticated);
    } catch (e) {
      if (e instanceof RestError) return this.#error(e);
      throw e;
    }
  }

  /** WC_REST_Authentication::check_permissions, run (rest_pre_dispatch) before routing. */
  #checkKeyPermissions(method: string): void {
    const p = this.keyPermissions;
    if (method === 'GET' || method === 'HEAD') {
      if (p !== 'read' && p !== 'read_write') {
        throw new RestError(
          401,
          'woocommerce_rest_authentication_error',
          'The API key provided does not have read permissions.',
        );
      }
    } else if (WRITE_METHODS.has(method)) {
      if (p !== 'write' && p !== 'read_write') {
        throw new RestError(
          401,
          'woocommerce_rest_authentication_error',
          'The API key provided does not have write permissions.',
        );
      }
    } else if (method !== 'OPTIONS') {
      throw new RestError(401, 'woocommerce_rest_authentication_error', 'Unknown request method.');
    }
  }

  #route(route: string, method: string, params: Map<string, string | string[]>, user: boolean): Reply {
    const noRoute = new RestError(
      404,
      'rest_no_route',
      'No route was found matching the URL and request method.',
    );
    const lower = route.toLowerCase();
    const get = method === 'GET' || method === 'HEAD';
    let m: RegExpExecArray | null;
    // Each route: [permission per method, handler for GET].
    let perms: Partial<Record<string, Permission>>;
    let run: () => Reply;
    let collection = false;
    if (lower === '/') {
      perms = {};
      run = () => this.#json(200, this.#index(null));
      if (!get && method !== 'OPTIONS') throw noRoute;
    } else if (lower === '/wc/v3') {
      perms = {};
      run = () => this.#json(200, this.#index('wc/v3'));
      if (!get && method !== 'OPTIONS') throw noRoute;
    } else if (lower === '/wc/v3/orders') {
      perms = { GET: 'list', POST: 'create' };
      collection = true;
      run = () => this.#listOrders(params);
    } else if (lower === '/wc/v3/orders/batch') {
      perms = { POST: 'batch', PUT: 'batch', PATCH: 'batch' };
      run = () => {
        throw noRoute;
      };
    } else if ((m = /^\/wc\/v3\/orders\/(\d+)$/.exec(lower))) {
      const id = Number(m[1]);
      perms = { GET: 'view', POST: 'edit', PUT: 'edit', PATCH: 'edit', DELETE: 'delete' };
      run = () => this.#getOrder(id, params);
    } else if ((m = /^\/wc\/v3\/orders\/(\d+)\/refunds$/.exec(lower))) {
      const id = Number(m[1]);
      perms = { GET: 'list', POST: 'create' };
      collection = true;
      run = () => this.#listRefunds(id, params);
    } else if (lower === '/wc/v3/products') {
      perms = { GET: 'list', POST: 'create' };
      collection = true;
      run = () => this.#listProducts(params);
    } else if ((m = /^\/wc\/v3\/orders\/(\d+)\/refunds\/(\d+)$/.exec(lower))) {
      const orderId = Number(m[1]);
      const refundId = Number(m[2]);
      perms = { GET: 'view', DELETE: 'delete' };
      run = () => this.#getRefund(orderId, refundId, params);
    } else {
      throw noRoute;
    }
    if (method === 'OPTIONS') {
      const methods = Object.keys(perms).length ? Object.keys(perms) : ['GET'];
      return this.#json(
        200,
        { namespace: lower === '/' ? '' : 'wc/v3', methods, endpoints: [{ methods, args: {} }] },
        {
          Allow: methods.join(', '),
        },
      );
    }
    const perm = perms[get ? 'GET' : method];
    if (lower !== '/' && lower !== '/wc/v3' && perm === undefined) throw noRoute;
    // WP_REST_Server validates the parameters before the permission callback runs.
    if (get && collection) readCollectionParams(params, this.#statuses);
    else if (get && lower !== '/' && lower !== '/wc/v3') readItemParams(params);
    if (perm && !user) {
      const [code, message] = PERMISSION_ERRORS[perm];
      throw new RestError(401, code, message);
    }
    if (!get) {
      // A key with write access reaching a write route: the fake stores nothing (its own answer).
      throw new RestError(
        405,
        'fake_woocommerce_read_only',
        'This stand-in for WooCommerce does not accept writes.',
      );
    }
    return run();
  }

  #index(namespace: string | null): unknown {
    const routes: Record<string, unknown> = {};
    const describe = (path: string, methods: string[], ns: string) => ({
      namespace: ns,
      methods,
      endpoints: [{ methods, args: {} }],
      _links: { self: [{ href: this.#restUrl(path) }] },
    });
    if (namespace === null) routes['/'] = describe('/', ['GET'], '');
    for (const [path, methods] of ROUTES) routes[path] = describe(path, methods, 'wc/v3');
    if (namespace !== null) {
      return { namespace, routes, _links: { up: [{ href: `${this.url}/wp-json/` }] } };
    }
    const offsetHours = this.#offsetAt(this.#now) / 60;
    return {
      name: this.#siteName,
      description: 'Just another WordPress site',
      url: this.url,
      home: this.url,
      gmt_offset: offsetHours,
      timezone_string: this.#timezone ?? '',
      page_for_posts: 0,
      page_on_front: 0,
      show_on_front: 'posts',
      namespaces: [
        'oembed/1.0',
        'wc/store',
        'wc/store/v1',
        'wc/v1',
        'wc/v2',
        'wc/v3',
        'wc-analytics',
        'wp/v2',
        'wp-site-health/v1',
      ],
      authentication: this.tls
        ? {
            'application-passwords': {
              endpoints: { authorization: `${this.url}/wp-admin/authorize-application.php` },
            },
          }
        : [],
      routes,
      site_logo: 0,
      site_icon: 0,
      site_icon_url: '',
      _links: { help: [{ href: 'https://developer.wordpress.org/rest-api/' }] },
    };
  }

  #getOrder(id: number, params: Map<string, string | string[]>): Reply {
    const order = this.#orders.get(id);
    // Refund ids share the sequence but are not orders: get_object() refuses them too.
    if (!order) throw new RestError(404, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');
    return this.#json(
      200,
      filterFields(this.#presentOrder(order, readItemParams(params).dp), fieldsParam(params), true),
    );
  }

  #getRefund(orderId: number, refundId: number, params: Map<string, string | string[]>): Reply {
    const { dp } = readItemParams(params);
    let owner: StoredOrder | undefined;
    let refund: StoredRefund | undefined;
    for (const o of this.#orders.values()) {
      const r = o.refunds.find((x) => x.id === refundId);
      if (r) {
        owner = o;
        refund = r;
      }
    }
    if (!refund && !this.#orders.has(refundId)) {
      throw new RestError(404, 'woocommerce_rest_shop_order_refund_invalid_id', 'Invalid ID.');
    }
    const order = this.#orders.get(orderId);
    // As WooCommerce does: these two errors carry a bare 404 as data, which WordPress answers with 500.
    if (!order) throw new RestError(500, 'woocommerce_rest_invalid_order_id', 'Invalid order ID.', 404);
    if (!refund || owner !== order) {
      throw new RestError(500, 'woocommerce_rest_invalid_order_refund_id', 'Invalid order refund ID.', 404);
    }
    return this.#json(200, filterFields(this.#presentRefund(order, refund, dp), fieldsParam(params), true));
  }

  /** The orders list, as WC_REST_CRUD_Controller::get_items with the orders query. */
  #listOrders(params: Map<string, string | string[]>): Reply {
    const p = readCollectionParams(params, this.#statuses);
    const rows = [...this.#orders.values()].filter((o) => {
      if (p.statuses === 'any' ? o.status === 'trash' : !p.statuses.includes(o.status)) return false;
      if (p.include.length && !p.include.includes(o.id)) return false;
      if (p.exclude.includes(o.id)) return false;
      if (p.parent.length && !p.parent.includes(o.parentId)) return false;
      if (p.parentExclude.includes(o.parentId)) return false;
      if (p.customer !== null && o.customerId !== p.customer) return false;
      if (p.product !== null && !o.items.some((i) => i.productId === p.product)) return false;
      if (p.search && !searchable(o).includes(p.search.toLowerCase())) return false;
      return this.#inDateRange(p, o.created, o.modified);
    });
    const sortKey = (o: StoredOrder): number | string =>
      p.orderby === 'modified'
        ? o.modified
        : p.orderby === 'id'
          ? o.id
          : p.orderby === 'title'
            ? `Order &ndash; ${this.#local(o.created)}`
            : p.orderby === 'slug'
              ? `order-${this.#local(o.created)}`
              : o.created;
    return this.#page(p, params, '/wc/v3/orders', rows, sortKey, (o) => this.#presentOrder(o, p.dp));
  }

  /** GET /wc/v3/products: the catalogue (include=… picks products by id), with categories. */
  #listProducts(params: Map<string, string | string[]>): Reply {
    const p = readCollectionParams(params, this.#statuses);
    const rows = [...this.#products.entries()]
      .map(([id, product]) => ({ id, ...product }))
      .filter((r) => (p.include.length === 0 || p.include.includes(r.id)) && !p.exclude.includes(r.id));
    return this.#page(
      p,
      params,
      '/wc/v3/products',
      rows,
      (r) => (p.orderby === 'id' ? r.id : r.id),
      (r) => ({
        id: r.id,
        name: r.name,
        slug: r.name.toLowerCase().replace(/\W+/g, '-'),
        permalink: `${this.url}/produit/${r.id}/`,
        type: 'simple',
        status: 'publish',
        sku: r.sku,
        categories: r.categories.map(([id, name]) => ({
          id,
          name,
          slug: name.toLowerCase().replace(/\W+/g, '-'),
        })),
      }),
    );
  }

  /** A product of the catalogue, as the store keeps it. */
  product(id: number): FakeProduct | undefined {
    return this.#products.get(id);
  }

  /** Adds or changes a product of the catalogue (its categories as stored: `&` as `&amp;`). */
  setProduct(id: number, product: FakeProduct): void {
    this.#products.set(id, product);
  }

  #listRefunds(orderId: number, params: Map<string, string | string[]>): Reply {
    const p = readCollectionParams(params, this.#statuses);
    const order = this.#orders.get(orderId);
    const rows = (order?.refunds ?? []).filter((r) => {
      if (p.include.length && !p.include.includes(r.id)) return false;
      if (p.exclude.includes(r.id)) return false;
      return this.#inDateRange(p, r.created, r.created);
    });
    return this.#page(
      p,
      params,
      `/wc/v3/orders/${orderId}/refunds`,
      rows,
      (r) => (p.orderby === 'id' ? r.id : r.created),
      (r) => this.#presentRefund(order as StoredOrder, r, p.dp),
    );
  }

  #page<T extends { id: number }>(
    p: CollectionParams,
    params: Map<string, string | string[]>,
    route: string,
    rows: T[],
    sortKey: (row: T) => number | string,
    present: (row: T) => object,
  ): Reply {
    const dir = p.order === 'asc' ? 1 : -1;
    if (p.orderby === 'include' && p.include.length) {
      // orderby=post__in: the order of the include list, whatever `order` says.
      rows.sort((a, b) => p.include.indexOf(a.id) - p.include.indexOf(b.id));
    } else {
      // 'date' and 'modified' get ' ID' added "for consistency with pagination".
      rows.sort((a, b) => {
        const ka = sortKey(a);
        const kb = sortKey(b);
        const c = ka < kb ? -1 : ka > kb ? 1 : 0;
        return c !== 0 ? c * dir : (a.id - b.id) * dir;
      });
    }
    const total = rows.length;
    const pages = Math.ceil(total / p.perPage);
    // WP_Query: an offset replaces the page's start.
    const start = p.offset ?? (p.page - 1) * p.perPage;
    const slice = rows.slice(start, start + p.perPage).map((r) => filterFields(present(r), p.fields, false));
    const extra: Record<string, string | string[]> = {
      'X-WP-Total': String(total),
      'X-WP-TotalPages': String(pages),
    };
    const links: string[] = [];
    const base = `${this.#restUrl(route)}`;
    if (p.page > 1) links.push(`<${pageLink(base, params, Math.min(p.page - 1, pages))}>; rel="prev"`);
    if (pages > p.page) links.push(`<${pageLink(base, params, p.page + 1)}>; rel="next"`);
    // WP_REST_Response::link_header joins repeated Link values with ', ' into one header, which
    // replaces the api.w.org Link the server sends first.
    if (links.length) extra.Link = links.join(', ');
    return this.#json(200, slice, extra);
  }

  /**
   * after/before/modified_after/modified_before as WP_Date_Query reads them: a value without a
   * zone is a wall-clock time in the site's zone; a value with one (Z, +01:00) is converted to the
   * site's wall-clock time. That wall-clock time is then compared with the GMT column when
   * dates_are_gmt is true, else with the local one. So with dates_are_gmt=true a value must carry
   * no zone ("2026-03-01T10:00:00" meaning GMT): a 'Z' value is shifted by the site's offset, as in
   * WordPress. Bounds are exclusive.
   */
  #inDateRange(p: CollectionParams, created: number, modified: number): boolean {
    const column = (ms: number) => (p.datesAreGmt ? ms : ms + this.#offsetAt(ms) * 60_000);
    const c = column(created);
    const m = column(modified);
    if (p.after !== null && !(c > this.#wall(p.after))) return false;
    if (p.before !== null && !(c < this.#wall(p.before))) return false;
    if (p.modifiedAfter !== null && !(m > this.#wall(p.modifiedAfter))) return false;
    if (p.modifiedBefore !== null && !(m < this.#wall(p.modifiedBefore))) return false;
    return true;
  }

  /** A parsed date parameter (see readDate) to the site's wall-clock time, as milliseconds. */
  #wall(encoded: number): number {
    // readDate stores zone-less values as wall times tagged with an odd marker (see readDate).
    const { wall, instant } = decodeDate(encoded);
    if (wall !== null) return wall;
    return (instant as number) + this.#offsetAt(instant as number) * 60_000;
  }

  /** Site-local wall-clock time to an instant (for tests). */
  localToInstant(local: string): Date {
    const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})$/.exec(local);
    if (!m) throw new Error(`not a local time: ${local}`);
    const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
    return new Date(this.#localToInstant(Date.UTC(y as number, (mo as number) - 1, d, h, mi, s)));
  }
}

// ---------------------------------------------------------------------------------------------
// Parameters, as the collection params of WC_REST_CRUD_Controller / WC_REST_Orders_Controller
// declare them, validated with WordPress's messages.

type ParamErrors = Record<string, { code: string; message: string }>;

function invalidParams(errors: ParamErrors): RestError {
  const names = Object.keys(errors);
  const params: Record<string, string> = {};
  const details: Record<string, unknown> = {};
  for (const [name, e] of Object.entries(errors)) {
    params[name] = e.message;
    details[name] = { code: e.code, message: e.message, data: null };
  }
  return new RestError(400, 'rest_invalid_param', `Invalid parameter(s): ${names.join(', ')}`, {
    status: 400,
    params,
    details,
  });
}

function readInt(
  params: Map<string, string | string[]>,
  name: string,
  errors: ParamErrors,
  bounds: { min?: number; max?: number } = {},
): number | null {
  const raw = params.get(name);
  if (raw === undefined) return null;
  if (typeof raw !== 'string' || !/^\s*-?\d+\s*$/.test(raw)) {
    errors[name] = { code: 'rest_invalid_type', message: `${name} is not of type integer.` };
    return null;
  }
  const n = Number(raw);
  const { min, max } = bounds;
  if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
    errors[name] = {
      code: 'rest_out_of_bounds',
      message:
        min !== undefined && max !== undefined
          ? `${name} must be between ${min} (inclusive) and ${max} (inclusive)`
          : min !== undefined
            ? `${name} must be greater than or equal to ${min}`
            : `${name} must be less than or equal to ${max}`,
    };
    return null;
  }
  return Math.abs(n);
}

function readEnum<T extends string>(
  params: Map<string, string | string[]>,
  name: string,
  allowed: readonly T[],
  fallback: T,
  errors: ParamErrors,
): T {
  const raw = params.get(name);
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !(allowed as readonly string[]).includes(raw)) {
    errors[name] = {
      code: typeof raw === 'string' ? 'rest_not_in_enum' : 'rest_invalid_type',
      message:
        typeof raw === 'string'
          ? `${name} is not one of ${wpList(allowed)}.`
          : `${name} is not of type string.`,
    };
    return fallback;
  }
  return raw as T;
}

// A parsed date is kept in one number: zone-less values as 2 × wall-clock ms + 1, values with a
// zone as 2 × instant ms (both are whole seconds, so even/odd tells them apart).
function decodeDate(n: number): { wall: number | null; instant: number | null } {
  return n % 2 !== 0 ? { wall: (n - 1) / 2, instant: null } : { wall: null, instant: n / 2 };
}

function readDate(params: Map<string, string | string[]>, name: string, errors: ParamErrors): number | null {
  const raw = params.get(name);
  if (raw === undefined) return null;
  // rest_parse_date's pattern.
  const m =
    typeof raw === 'string'
      ? /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(raw)
      : null;
  if (!m) {
    errors[name] = { code: 'rest_invalid_date', message: 'Invalid date.' };
    return null;
  }
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  const wall = Date.UTC(y as number, (mo as number) - 1, d, h, mi, s);
  const zone = m[7];
  if (Number.isNaN(wall)) {
    errors[name] = { code: 'rest_invalid_date', message: 'Invalid date.' };
    return null;
  }
  if (zone === undefined) return wall * 2 + 1;
  if (zone === 'Z') return wall * 2;
  const zm = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  const offset = zm ? (zm[1] === '-' ? -1 : 1) * (Number(zm[2]) * 60 + Number(zm[3] ?? 0)) : 0;
  return (wall - offset * 60_000) * 2;
}

function readBool(params: Map<string, string | string[]>, name: string, errors: ParamErrors): boolean {
  const raw = params.get(name);
  if (raw === undefined) return false;
  // rest_is_boolean.
  const v = typeof raw === 'string' ? raw.toLowerCase() : '';
  if (!['true', 'false', '1', '0', ''].includes(v)) {
    errors[name] = { code: 'rest_invalid_type', message: `${name} is not of type boolean.` };
    return false;
  }
  return v === 'true' || v === '1';
}

function readIdList(params: Map<string, string | string[]>, name: string): number[] {
  const raw = params.get(name);
  if (raw === undefined) return [];
  // wp_parse_id_list: absint of each, duplicates removed.
  return [...new Set(wpParseList(raw).map((s) => Math.abs(parseInt(s, 10)) || 0))];
}

function fieldsParam(params: Map<string, string | string[]>): string[] | null {
  const raw = params.get('_fields');
  return raw === undefined ? null : wpParseList(raw);
}

function readItemParams(params: Map<string, string | string[]>): { dp: number } {
  const errors: ParamErrors = {};
  readEnum(params, 'context', ['view', 'edit'], 'view', errors);
  const dp = readInt(params, 'dp', errors);
  if (Object.keys(errors).length) throw invalidParams(errors);
  return { dp: dp ?? 2 };
}

function readCollectionParams(
  params: Map<string, string | string[]>,
  statuses: readonly string[],
): CollectionParams {
  const errors: ParamErrors = {};
  readEnum(params, 'context', ['view', 'edit'], 'view', errors);
  const page = readInt(params, 'page', errors, { min: 1 }) ?? 1;
  const perPage = readInt(params, 'per_page', errors, { min: 1, max: 100 }) ?? 10;
  const offset = readInt(params, 'offset', errors);
  const order = readEnum(params, 'order', ['asc', 'desc'] as const, 'desc', errors);
  const orderby = readEnum(
    params,
    'orderby',
    ['date', 'id', 'include', 'title', 'slug', 'modified'] as const,
    'date',
    errors,
  );
  const after = readDate(params, 'after', errors);
  const before = readDate(params, 'before', errors);
  const modifiedAfter = readDate(params, 'modified_after', errors);
  const modifiedBefore = readDate(params, 'modified_before', errors);
  const datesAreGmt = readBool(params, 'dates_are_gmt', errors);
  const customer = readInt(params, 'customer', errors);
  const product = readInt(params, 'product', errors);
  const dp = readInt(params, 'dp', errors) ?? 2;
  const search = params.get('search');
  // status: an array of 'any', 'trash' and the registered statuses; a string is split on commas.
  let list: string[] | 'any' = 'any';
  const rawStatus = params.get('status');
  if (rawStatus !== undefined) {
    const allowed = ['any', 'trash', ...statuses];
    const values = wpParseList(rawStatus);
    const bad = values.findIndex((s) => !allowed.includes(s));
    if (bad >= 0) {
      errors.status = {
        code: 'rest_not_in_enum',
        message: `status[${bad}] is not one of ${wpList(allowed)}.`,
      };
    } else if (!values.includes('any')) {
      list = values;
    }
  }
  if (Object.keys(errors).length) throw invalidParams(errors);
  return {
    page,
    perPage,
    offset,
    order,
    orderby,
    statuses: list,
    include: readIdList(params, 'include'),
    exclude: readIdList(params, 'exclude'),
    parent: readIdList(params, 'parent'),
    parentExclude: readIdList(params, 'parent_exclude'),
    after,
    before,
    modifiedAfter,
    modifiedBefore,
    datesAreGmt,
    search: typeof search === 'string' ? search : '',
    customer,
    product,
    dp,
    fields: fieldsParam(params),
  };
}

const ARRAY_PARAMS = new Set([
  'status',
  'include',
  'exclude',
  'parent',
  'parent_exclude',
  'include_meta',
  'exclude_meta',
]);
const INT_PARAMS = new Set(['page', 'per_page', 'offset', 'customer', 'product', 'dp']);
const BOOL_PARAMS = new Set(['dates_are_gmt', 'order_item_display_meta']);

/**
 * The prev/next link as get_items builds it: add_query_arg( $request->get_query_params(), rest_url(…) )
 * then add_query_arg( 'page', N ). The query parameters are the sanitized ones (arrays as name[i],
 * true as 1, false dropped) and every parameter is carried over, consumer_key and consumer_secret
 * included. As WordPress does, a '+' in a value comes out as a bare '+' (read back as a space).
 */
function pageLink(base: string, params: Map<string, string | string[]>, page: number): string {
  const parts: string[] = [];
  let pageDone = false;
  const enc = (s: string) => phpUrlencode(s).replace(/%2B/g, '+');
  for (const [name, value] of params) {
    if (name === 'page') {
      parts.push(`page=${page}`);
      pageDone = true;
      continue;
    }
    if (ARRAY_PARAMS.has(name)) {
      const list =
        name === 'status' || name.endsWith('_meta')
          ? wpParseList(value)
          : [...new Set(wpParseList(value).map((s) => String(Math.abs(parseInt(s, 10)) || 0)))];
      list.forEach((v, i) => parts.push(`${enc(name)}%5B${i}%5D=${enc(v)}`));
    } else if (BOOL_PARAMS.has(name) && typeof value === 'string') {
      if (['true', '1'].includes(value.toLowerCase())) parts.push(`${enc(name)}=1`);
    } else if (INT_PARAMS.has(name) && typeof value === 'string') {
      parts.push(`${enc(name)}=${Math.abs(parseInt(value, 10)) || 0}`);
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => parts.push(`${enc(name)}%5B${i}%5D=${enc(v)}`));
    } else {
      parts.push(`${enc(name)}=${enc(value)}`);
    }
  }
  if (!pageDone) parts.push(`page=${page}`);
  return `${base}?${parts.join('&')}`;
}

/** rest_filter_response_fields: keep the listed fields ('billing.email' for nested ones). */
function filterFields<T extends object>(data: T, fields: string[] | null, keepLinks: boolean): T {
  if (fields === null || fields.length === 0) return data;
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const path = field.split('.');
    let src: unknown = data;
    let dst: Record<string, unknown> = out;
    for (let i = 0; i < path.length; i++) {
      const key = path[i] as string;
      if (src === null || typeof src !== 'object' || !(key in src)) break;
      const value = (src as Record<string, unknown>)[key];
      if (i === path.length - 1) {
        dst[key] = value;
      } else {
        if (typeof dst[key] !== 'object' || dst[key] === null) dst[key] = {};
        dst = dst[key] as Record<string, unknown>;
        src = value;
      }
    }
  }
  // A single resource's links are added after the filter (response_to_data); a collection's are
  // already in each item, so they go unless asked for.
  const links = (data as Record<string, unknown>)._links;
  if (keepLinks && links !== undefined) out._links = links;
  return out as T;
}

function searchable(o: StoredOrder): string {
  const b = o.billing;
  const s = o.shipping;
  return [
    o.id,
    b.first_name,
    b.last_name,
    b.company,
    b.email,
    b.phone,
    s.first_name,
    s.last_name,
    s.company,
    ...o.items.map((i) => i.name),
  ]
    .join(' ')
    .toLowerCase();
}

function orderTotals(o: StoredOrder) {
  const lines = o.items.reduce((s, i) => s + i.total, 0);
  const lineTax = o.items.reduce((s, i) => s + i.totalTax, 0);
  const fees = o.fees.reduce((s, f) => s + f.total, 0);
  const feeTax = o.fees.reduce((s, f) => s + f.totalTax, 0);
  const shipping = o.shippingLines.reduce((s, l) => s + l.total, 0);
  const shippingTax = o.shippingLines.reduce((s, l) => s + l.totalTax, 0);
  // WC_Abstract_Order: cart_tax holds the line and fee taxes; total = lines + fees + shipping + taxes.
  const cartTax = lineTax + feeTax;
  return {
    discount: o.items.reduce((s, i) => s + i.subtotal - i.total, 0),
    discountTax: o.items.reduce((s, i) => s + i.subtotalTax - i.totalTax, 0),
    shipping,
    shippingTax,
    cartTax,
    total: lines + fees + shipping + cartTax + shippingTax,
  };
}

function randomHexFrom(rand: () => number, bytes: number): string {
  return Array.from({ length: bytes }, () =>
    Math.floor(rand() * 256)
      .toString(16)
      .padStart(2, '0'),
  ).join('');
}

/** Instants of the EU (01:00 UTC, last Sundays of March and October) and US (second Sunday of March 07:00 UTC, first Sunday of November 06:00 UTC) clock changes in a range. */
function dstEdges(from: number, to: number): number[] {
  const out: number[] = [];
  const lastSunday = (y: number, month: number) => {
    const d = new Date(Date.UTC(y, month + 1, 0));
    return d.getUTCDate() - d.getUTCDay();
  };
  const nthSunday = (y: number, month: number, n: number) => {
    const first = new Date(Date.UTC(y, month, 1)).getUTCDay();
    return 1 + ((7 - first) % 7) + (n - 1) * 7;
  };
  for (let y = new Date(from).getUTCFullYear(); y <= new Date(to).getUTCFullYear(); y++) {
    out.push(Date.UTC(y, 2, lastSunday(y, 2), 1), Date.UTC(y, 9, lastSunday(y, 9), 1));
    out.push(Date.UTC(y, 2, nthSunday(y, 2, 2), 7), Date.UTC(y, 10, nthSunday(y, 10, 1), 6));
  }
  return out.filter((t) => t >= from && t <= to);
}

function post(
  target: string,
  headers: Record<string, string>,
  body: string,
  ca?: string,
): Promise<DeliveryResult> {
  const url = new URL(target);
  const lib = url.protocol === 'https:' ? https : http;
  const sent = { headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) }, body };
  return new Promise((resolve, reject) => {
    const req = lib.request(
      url,
      { method: 'POST', headers: sent.headers, ...(ca && url.protocol === 'https:' ? { ca } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            headers: res.headers,
            sent,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error('webhook delivery timed out (60 s, as WooCommerce)')));
    req.end(body);
  });
}
