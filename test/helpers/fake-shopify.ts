// A stand-in Shopify shop for the Shopify connector's tests (issue 21). Shopify cannot run here:
// this follows Shopify's Admin GraphQL documentation for what the connector reads:
// - the GraphQL endpoint POST /admin/api/{version}/graphql.json, authenticated by the
//   X-Shopify-Access-Token header (401 with `{"errors":"[API] Invalid API key or access token
//   (unrecognized login or wrong password)"}` otherwise);
// - the client-credentials grant POST /admin/oauth/access_token (grant_type, client_id,
//   client_secret) answering { access_token, scope, expires_in };
// - the types QueryRoot (shop, order, orders, ordersCount, currentAppInstallation), Shop, Order,
//   MoneyBag/MoneyV2, MailingAddress, LineItem, ShippingLine, TaxLine, Refund, RefundLineItem,
//   RefundShippingLine, connections with nodes/edges/pageInfo, OrderSortKeys, with their real
//   field names, executed by the reference GraphQL implementation (graphql-js) over that schema;
// - cost-based rate limiting: each query's requested cost (an object 1, a connection 2 + first ×
//   its node, scalars 0), refused over 1,000 (MAX_COST_EXCEEDED), THROTTLED when the bucket
//   (maximumAvailable, restoreRate a second) cannot afford it; extensions.cost on every answer;
// - the search syntax of `orders(query:)` for updated_at/created_at comparisons;
// - bulk operations by API version: before 2026-01 one bulk query per app and shop at a time (a
//   second refused OPERATION_IN_PROGRESS) and `currentBulkOperation` only; since 2026-01 up to
//   five at once and `bulkOperations(query: "operation_type:… status:… created_at:>…")`, newest
//   first; a JSONL result file served over HTTPS with byte ranges, its child lines (`__parentId`)
//   right after their parent before 2026-01, somewhere after it since (groupObjects defaults to
//   false; `groupObjects: true` groups them again);
// - webhooks: X-Shopify-Topic, X-Shopify-Hmac-Sha256 (base64 HMAC-SHA256 of the raw body with
//   the app's secret), X-Shopify-Webhook-Id, X-Shopify-Shop-Domain, a REST-shaped order body.
// What the fake adds of its own (control methods, faults on demand, recording) is marked so.
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import {
  buildSchema,
  execute,
  extendSchema,
  getNamedType,
  GraphQLError,
  isListType,
  isNonNullType,
  isObjectType,
  parse,
  validate,
  type DocumentNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type SelectionSetNode,
} from 'graphql';
import { FakeWooCommerce } from './fake-woocommerce.js';
import { mulberry32 } from './seeded-random.js';

const SDL = /* GraphQL */ `
  scalar DateTime
  scalar Decimal
  scalar UnsignedInt64
  scalar URL

  enum CurrencyCode {
    EUR
    USD
    GBP
    CAD
    CHF
    JPY
  }
  enum CountryCode {
    FR
    DE
    BE
    ES
    IT
    NL
    CH
    GB
    US
    CA
    JP
  }
  enum OrderSortKeys {
    CREATED_AT
    CUSTOMER_NAME
    FINANCIAL_STATUS
    FULFILLMENT_STATUS
    ID
    NUMBER
    PROCESSED_AT
    RELEVANCE
    TOTAL_PRICE
    UPDATED_AT
  }
  enum OrderDisplayFinancialStatus {
    AUTHORIZED
    EXPIRED
    PAID
    PARTIALLY_PAID
    PARTIALLY_REFUNDED
    PENDING
    REFUNDED
    VOIDED
  }
  enum CountPrecision {
    EXACT
    AT_LEAST
  }

  type MoneyV2 {
    amount: Decimal!
    currencyCode: CurrencyCode!
  }
  type MoneyBag {
    shopMoney: MoneyV2!
    presentmentMoney: MoneyV2!
  }
  type PageInfo {
    hasNextPage: Boolean!
    hasPreviousPage: Boolean!
    startCursor: String
    endCursor: String
  }
  type Count {
    count: Int!
    precision: CountPrecision!
  }
  type AccessScope {
    handle: String!
    description: String!
  }
  type AppInstallation {
    accessScopes: [AccessScope!]!
  }

  type Shop {
    id: ID!
    name: String!
    currencyCode: CurrencyCode!
    ianaTimezone: String!
    myshopifyDomain: String!
    email: String!
  }
  type MailingAddress {
    countryCodeV2: CountryCode
    country: String
    city: String
    zip: String
  }
  type TaxLine {
    priceSet: MoneyBag!
    rate: Float
    title: String!
  }
  type Product {
    id: ID!
    title: String!
    productType: String!
  }
  type ProductVariant {
    id: ID!
    title: String!
    sku: String
  }
  type DiscountAllocation {
    allocatedAmountSet: MoneyBag!
  }
  type LineItem {
    id: ID!
    quantity: Int!
    name: String!
    title: String!
    variantTitle: String
    sku: String
    product: Product
    variant: ProductVariant
    originalUnitPriceSet: MoneyBag!
    originalTotalSet: MoneyBag!
    discountAllocations: [DiscountAllocation!]!
    taxLines(first: Int): [TaxLine!]!
  }
  type LineItemEdge {
    cursor: String!
    node: LineItem!
  }
  type LineItemConnection {
    nodes: [LineItem!]!
    edges: [LineItemEdge!]!
    pageInfo: PageInfo!
  }
  type ShippingLine {
    id: ID
    title: String!
    originalPriceSet: MoneyBag!
    taxLines: [TaxLine!]!
  }
  type ShippingLineEdge {
    cursor: String!
    node: ShippingLine!
  }
  type ShippingLineConnection {
    nodes: [ShippingLine!]!
    edges: [ShippingLineEdge!]!
    pageInfo: PageInfo!
  }
  type RefundLineItem {
    id: ID
    quantity: Int!
    subtotalSet: MoneyBag!
    totalTaxSet: MoneyBag!
    lineItem: LineItem!
  }
  type RefundLineItemEdge {
    cursor: String!
    node: RefundLineItem!
  }
  type RefundLineItemConnection {
    nodes: [RefundLineItem!]!
    edges: [RefundLineItemEdge!]!
    pageInfo: PageInfo!
  }
  type RefundShippingLine {
    id: ID!
    subtotalAmountSet: MoneyBag!
    taxAmountSet: MoneyBag!
  }
  type RefundShippingLineEdge {
    cursor: String!
    node: RefundShippingLine!
  }
  type RefundShippingLineConnection {
    nodes: [RefundShippingLine!]!
    edges: [RefundShippingLineEdge!]!
    pageInfo: PageInfo!
  }
  type Refund {
    id: ID!
    legacyResourceId: UnsignedInt64!
    createdAt: DateTime
    totalRefundedSet: MoneyBag!
    refundLineItems(first: Int, after: String): RefundLineItemConnection!
    refundShippingLines(first: Int, after: String): RefundShippingLineConnection!
  }
  type Order {
    id: ID!
    legacyResourceId: UnsignedInt64!
    name: String!
    createdAt: DateTime!
    processedAt: DateTime!
    updatedAt: DateTime!
    cancelledAt: DateTime
    closedAt: DateTime
    displayFinancialStatus: OrderDisplayFinancialStatus
    test: Boolean!
    email: String
    currencyCode: CurrencyCode!
    presentmentCurrencyCode: CurrencyCode!
    taxesIncluded: Boolean!
    billingAddress: MailingAddress
    shippingAddress: MailingAddress
    subtotalLineItemsQuantity: Int!
    totalPriceSet: MoneyBag!
    subtotalPriceSet: MoneyBag
    totalTaxSet: MoneyBag
    totalShippingPriceSet: MoneyBag!
    totalRefundedSet: MoneyBag!
    totalDiscountsSet: MoneyBag
    originalTotalDutiesSet: MoneyBag
    originalTotalAdditionalFeesSet: MoneyBag
    lineItems(first: Int, after: String, last: Int, before: String, reverse: Boolean): LineItemConnection!
    shippingLines(
      first: Int
      after: String
      last: Int
      before: String
      reverse: Boolean
    ): ShippingLineConnection!
    refunds(first: Int): [Refund!]!
  }
  type OrderEdge {
    cursor: String!
    node: Order!
  }
  type OrderConnection {
    nodes: [Order!]!
    edges: [OrderEdge!]!
    pageInfo: PageInfo!
  }
  enum BulkOperationStatus {
    CANCELED
    CANCELING
    COMPLETED
    CREATED
    EXPIRED
    FAILED
    RUNNING
  }
  enum BulkOperationErrorCode {
    ACCESS_DENIED
    INTERNAL_SERVER_ERROR
    TIMEOUT
  }
  enum BulkOperationType {
    MUTATION
    QUERY
  }
  enum BulkOperationUserErrorCode {
    INVALID
    OPERATION_IN_PROGRESS
  }
  type BulkOperation {
    id: ID!
    status: BulkOperationStatus!
    errorCode: BulkOperationErrorCode
    objectCount: UnsignedInt64!
    rootObjectCount: UnsignedInt64!
    fileSize: UnsignedInt64
    url: URL
    partialDataUrl: URL
    query: String!
    createdAt: DateTime!
    completedAt: DateTime
    type: BulkOperationType!
  }
  type BulkOperationUserError {
    field: [String!]
    message: String!
    code: BulkOperationUserErrorCode
  }
  type BulkOperationRunQueryPayload {
    bulkOperation: BulkOperation
    userErrors: [BulkOperationUserError!]!
  }
  type Mutation {
    bulkOperationRunQuery(query: String!, groupObjects: Boolean): BulkOperationRunQueryPayload
  }
  type QueryRoot {
    bulkOperation(id: ID!): BulkOperation
    currentBulkOperation(type: BulkOperationType = QUERY): BulkOperation
    shop: Shop!
    order(id: ID!): Order
    refund(id: ID!): Refund
    orders(
      first: Int
      after: String
      last: Int
      before: String
      reverse: Boolean = false
      sortKey: OrderSortKeys = ID
      query: String
    ): OrderConnection!
    ordersCount(query: String, limit: Int = 10000): Count
    currentAppInstallation: AppInstallation!
  }
  schema {
    query: QueryRoot
    mutation: Mutation
  }
`;

/** API versions before 2026-01: no `bulkOperations` (one bulk query at a time, currentBulkOperation). */
const schemaBefore2026 = buildSchema(SDL);
/** Since 2026-01: the app's bulk operations listed, filtered by the search syntax, newest first. */
const SDL_2026 = /* GraphQL */ `
  enum BulkOperationsSortKeys {
    COMPLETED_AT
    CREATED_AT
  }
  type BulkOperationEdge {
    cursor: String!
    node: BulkOperation!
  }
  type BulkOperationConnection {
    nodes: [BulkOperation!]!
    edges: [BulkOperationEdge!]!
    pageInfo: PageInfo!
  }
  extend type QueryRoot {
    bulkOperations(
      first: Int
      after: String
      last: Int
      before: String
      reverse: Boolean = false
      sortKey: BulkOperationsSortKeys = CREATED_AT
      query: String
    ): BulkOperationConnection!
  }
`;
const schema = extendSchema(schemaBefore2026, parse(SDL_2026));
const schemaOf = (version: string) => (version >= '2026-01' ? schema : schemaBefore2026);
const MAX_COST = 1000;
const MAX_PAGE = 250;

// ---------------------------------------------------------------------------------------------
// The fake's order model (the fake's own; amounts in integer cents of the shop's currency).

export interface FakeLine {
  quantity: number;
  /** As Shopify's originalUnitPriceSet: tax included when the shop's prices include taxes. */
  unitCents: number;
  /** The tax of what was paid (quantity × unit − discount), as the line's taxLines. */
  taxCents: number;
  /** Its share of the discounts (discountAllocations), tax included as the price. */
  discountCents?: number;
  /** The product sold (none: a custom line), its variant (none: the default variant). */
  product?: { id: number; title: string; productType: string };
  variant?: { id: number; title: string };
  sku?: string;
}
export interface FakeShippingLine {
  /** As Shopify's originalPriceSet: tax included when the shop's prices include taxes. */
  priceCents: number;
  taxCents: number;
}
export interface FakeRefund {
  id: number;
  createdAt: Date;
  /** totalRefundedSet: what was given back. */
  totalCents: number;
  /** `line`: the order line refunded (its place); subtotal as Shopify's subtotalSet (tax included when the prices include it). */
  lines: { line: number; quantity: number; subtotalCents: number; taxCents: number }[];
  shipping: { subtotalCents: number; taxCents: number }[];
}
export interface FakeShopifyOrder {
  id: number;
  createdAt: Date;
  processedAt: Date;
  updatedAt: Date;
  cancelledAt: Date | null;
  financialStatus: string | null;
  test: boolean;
  email: string | null;
  currency: string;
  taxesIncluded: boolean;
  country: string | null;
  lines: FakeLine[];
  shipping: FakeShippingLine[];
  dutiesCents: number | null;
  feesCents: number | null;
  refunds: FakeRefund[];
}

/** The order's figures as Shopify computes them. */
export function orderTotals(order: FakeShopifyOrder) {
  const subtotal = order.lines.reduce((s, l) => s + l.quantity * l.unitCents - (l.discountCents ?? 0), 0);
  const discounts = order.lines.reduce((s, l) => s + (l.discountCents ?? 0), 0);
  const lineTax = order.lines.reduce((s, l) => s + l.taxCents, 0);
  const shippingTax = order.shipping.reduce((s, l) => s + l.taxCents, 0);
  const shipping = order.shipping.reduce((s, l) => s + l.priceCents, 0);
  const tax = lineTax + shippingTax;
  const total =
    subtotal + shipping + (order.taxesIncluded ? 0 : tax) + (order.dutiesCents ?? 0) + (order.feesCents ?? 0);
  const refunded = order.refunds.reduce((s, r) => s + r.totalCents, 0);
  return { subtotal, discounts, tax, shipping, shippingTax, total, refunded };
}

/** Shopify's Decimal text: no trailing zeros past the first decimal ("12.3", "10.0"). */
export function decimal(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const units = Math.floor(abs / 100);
  const rest = abs % 100;
  const fraction = rest === 0 ? '0' : String(rest).padStart(2, '0').replace(/0$/, '');
  return `${sign}${units}.${fraction}`;
}

/** The products addOrders sells (the fake's own catalogue): types, variants and SKUs. */
const CATALOGUE: readonly {
  id: number;
  title: string;
  productType: string;
  sku: string;
  variants: readonly { id: number; title: string }[];
}[] = [
  {
    id: 801,
    title: 'T-shirt bio',
    productType: 'Vêtements',
    sku: 'TSB',
    variants: [
      { id: 8011, title: 'S' },
      { id: 8012, title: 'M' },
      { id: 8013, title: 'L' },
    ],
  },
  {
    id: 802,
    title: 'Sweat à capuche',
    productType: 'Vêtements',
    sku: 'SWC',
    variants: [
      { id: 8021, title: 'Gris' },
      { id: 8022, title: 'Bleu' },
    ],
  },
  { id: 803, title: 'Thé vert « Sencha »', productType: 'Thés & cafés', sku: 'THV', variants: [] },
  {
    id: 804,
    title: 'Café moulu',
    productType: 'Thés & cafés',
    sku: 'CAF',
    variants: [
      { id: 8041, title: '250 g' },
      { id: 8042, title: '1 kg' },
    ],
  },
  { id: 805, title: 'Tasse émaillée', productType: '', sku: 'TAS', variants: [] },
  { id: 806, title: 'Carte cadeau', productType: 'Cartes', sku: 'GIFT', variants: [] },
];

/** Shopify's DateTimes have whole seconds. */
const seconds = (date: Date) => new Date(Math.floor(date.getTime() / 1000) * 1000);
const randomHex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

export interface FakeShopifyOptions {
  certificate?: { key: string; cert: string };
  currency?: string;
  name?: string;
  /** The access token of a custom app (default: a fresh shpat_…). */
  accessToken?: string;
  /** A Dev Dashboard app's client id and secret, for the client-credentials grant. */
  clientId?: string;
  clientSecret?: string;
  /** The app's API secret key (signs webhooks). Default: the client secret. */
  apiSecret?: string;
  scopes?: string[];
  /** The cost bucket: maximumAvailable and restoreRate (points a second). */
  bucket?: { maximum: number; restoreRate: number };
  /** Seconds a granted token lasts (Shopify: 86399). */
  tokenLifetimeS?: number;
  seed?: number;
}

interface Fault {
  status: number;
  count: number;
  retryAfter?: string;
}

export class FakeShopify {
  url = '';
  ca = '';
  port = 0;
  readonly accessToken: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly apiSecret: string;
  readonly domain: string;
  scopes: string[];
  currency: string;
  bucket: { maximum: number; restoreRate: number; available: number; at: number };
  tokenLifetimeS: number;
  /** The fake's own recording: every request's method, path and headers, every query's cost. */
  readonly requests: { method: string; path: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  readonly costs: { requested: number; actual: number; throttled: boolean }[] = [];
  grants = 0;
  /** Every token the grant issued (the fake's own recording: searched for in logs and dumps). */
  readonly issued: string[] = [];
  /** GraphQL requests refused for their token (401; the fake's own count). */
  unauthorized = 0;
  readonly #orders = new Map<number, FakeShopifyOrder>();
  readonly #granted = new Map<string, number>();
  readonly #name: string;
  #server!: http.Server;
  readonly #sockets = new Set<Socket>();
  #faults: Fault[] = [];
  #slowMs = 0;
  #slowNext = { count: 0, ms: 0 };
  #nextId = 5_000_000_000;
  readonly #bulks: FakeBulk[] = [];
  /**
   * The fake's own knobs: how long a bulk operation runs, how many may run at once (by default as
   * Shopify: one per app and shop before API version 2026-01, five since).
   */
  bulkDurationMs = 300;
  bulkConcurrency: number | undefined;
  /** bulkOperationRunQuery mutations received, refused ones included (the fake's own count). */
  bulkRunQueries = 0;
  #lateBulkAnswers = { count: 0, ms: 0 };
  #version = '';
  /** Requests for bulk result files, with their Range header (the fake's own recording). */
  readonly bulkDownloads: { range: string | undefined }[] = [];
  readonly #rand: () => number;
  readonly #catalogueRand: () => number;

  private constructor(options: FakeShopifyOptions) {
    this.accessToken = options.accessToken ?? `shpat_${randomHex(16)}`;
    this.clientId = options.clientId ?? randomHex(16);
    this.clientSecret = options.clientSecret ?? `shpss_${randomHex(16)}`;
    this.apiSecret = options.apiSecret ?? this.clientSecret;
    this.scopes = options.scopes ?? ['read_orders', 'read_all_orders'];
    this.currency = options.currency ?? 'EUR';
    this.#name = options.name ?? 'Boutique Shopify Test';
    this.domain = `${this.#name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.myshopify.com`;
    // Shopify Plus's bucket by default (Standard: 2,000 points, 100 a second).
    const bucket = options.bucket ?? { maximum: 20_000, restoreRate: 1_000 };
    this.bucket = { ...bucket, available: bucket.maximum, at: Date.now() };
    this.tokenLifetimeS = options.tokenLifetimeS ?? 86_399;
    this.#rand = mulberry32(options.seed ?? 7);
    this.#catalogueRand = mulberry32((options.seed ?? 7) + 1_000);
  }

  static generateCertificate = () => FakeWooCommerce.generateCertificate();

  static async start(options: FakeShopifyOptions = {}): Promise<FakeShopify> {
    const fake = new FakeShopify(options);
    const pem = options.certificate ?? (await FakeShopify.generateCertificate());
    fake.ca = pem.cert;
    fake.#server = https.createServer(
      { key: pem.key, cert: pem.cert },
      (req, res) => void fake.#handle(req, res),
    );
    fake.#server.on('connection', (socket: Socket) => {
      fake.#sockets.add(socket);
      socket.on('close', () => fake.#sockets.delete(socket));
    });
    fake.#server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    fake.port = (fake.#server.address() as AddressInfo).port;
    fake.url = `https://localhost:${fake.port}`;
    return fake;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    if (this.#server.listening) await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  // --- Faults on demand (the fake's own) ---------------------------------------------------------

  /** The next `count` GraphQL requests answer `status` (429 with Retry-After, 5xx…). */
  failNext(count: number, status: number, retryAfter?: string): void {
    this.#faults.push({ status, count, ...(retryAfter === undefined ? {} : { retryAfter }) });
  }
  /** Every answer waits this long first. */
  slowDown(ms: number): void {
    this.#slowMs = ms;
  }
  /** The next `count` answers (any request) wait `ms` first. */
  slowNext(count: number, ms: number): void {
    this.#slowNext = { count, ms };
  }
  /**
   * The next `count` bulkOperationRunQuery mutations start their operation at once but answer
   * `ms` late (past the client's timeout: an answer lost under load).
   */
  answerBulkRunLate(count: number, ms: number): void {
    this.#lateBulkAnswers = { count, ms };
  }
  /** Empties the bucket (a busy shop): the next queries are THROTTLED until it refills. */
  drainBucket(): void {
    this.bucket.available = 0;
    this.bucket.at = Date.now();
  }
  /** Forgets every granted token (an expired one). */
  expireTokens(): void {
    this.#granted.clear();
  }

  // --- Orders (the fake's own control methods) -----------------------------------------------------

  allOrders(): FakeShopifyOrder[] {
    return [...this.#orders.values()].sort((a, b) => a.id - b.id);
  }
  order(id: number): FakeShopifyOrder | undefined {
    return this.#orders.get(id);
  }

  addOrder(input: Partial<FakeShopifyOrder> = {}): FakeShopifyOrder {
    const now = new Date();
    const id = input.id ?? this.#nextId++;
    const order: FakeShopifyOrder = {
      id,
      createdAt: now,
      processedAt: input.processedAt ?? now,
      updatedAt: now,
      cancelledAt: null,
      financialStatus: 'PAID',
      test: false,
      email: `client${id % 97}@example.com`,
      currency: this.currency,
      taxesIncluded: false,
      country: 'FR',
      lines: [{ quantity: 1, unitCents: 2000, taxCents: 400 }],
      shipping: [{ priceCents: 500, taxCents: 100 }],
      dutiesCents: null,
      feesCents: null,
      refunds: [],
      ...input,
    };
    order.processedAt = seconds(order.processedAt);
    this.#orders.set(id, order);
    return order;
  }

  /** `count` varied orders over 2024–2026: refunds, cancellations, test orders, taxes included… */
  addOrders(count: number): FakeShopifyOrder[] {
    const r = this.#rand;
    const pick = <T>(items: readonly T[]): T => items[Math.floor(r() * items.length)]!;
    const added: FakeShopifyOrder[] = [];
    const start = Date.UTC(2024, 0, 1);
    // Products, variants and discounts from a stream of their own: the orders stay those of the seed.
    const c = this.#catalogueRand;
    const sold = () => {
      const product = CATALOGUE[Math.floor(c() * CATALOGUE.length)]!;
      const variant =
        product.variants.length > 0 ? product.variants[Math.floor(c() * product.variants.length)] : undefined;
      const sku = c() < 0.8 ? `${product.sku}${variant ? `-${variant.title}` : ''}` : undefined;
      return {
        product: { id: product.id, title: product.title, productType: product.productType },
        variant,
        sku,
      };
    };
    for (let i = 0; i < count; i++) {
      const processedAt = new Date(start + Math.floor(r() * 2.8 * 365 * 86_400_000));
      const taxesIncluded = r() < 0.4;
      const lineCount = r() < 0.02 ? 30 + Math.floor(r() * 20) : 1 + Math.floor(r() * 4);
      const lines = Array.from({ length: lineCount }, (): FakeLine => {
        const quantity = 1 + Math.floor(r() * 3);
        const unitCents = 500 + Math.floor(r() * 9000);
        const item = c() < 0.05 ? {} : sold();
        const discountCents = c() < 0.25 ? Math.floor(quantity * unitCents * 0.1) : 0;
        const paid = quantity * unitCents - discountCents;
        return {
          quantity,
          unitCents,
          taxCents: Math.round((paid * 0.2) / (taxesIncluded ? 1.2 : 1)),
          ...(discountCents > 0 ? { discountCents } : {}),
          ...item,
        };
      });
      const shipping =
        r() < 0.2 ? [] : [{ priceCents: pick([490, 590, 1290]), taxCents: pick([82, 98, 215]) }];
      const status = pick([
        'PAID',
        'PAID',
        'PAID',
        'PENDING',
        'AUTHORIZED',
        'PARTIALLY_PAID',
        'VOIDED',
        'EXPIRED',
        null,
      ]);
      const order = this.addOrder({
        processedAt,
        taxesIncluded,
        lines,
        shipping,
        financialStatus: status,
        test: r() < 0.05,
        email: r() < 0.1 ? null : `client${Math.floor(r() * count * 0.6)}@example.com`,
        country: r() < 0.08 ? null : pick(['FR', 'FR', 'DE', 'BE', 'US', 'CH']),
        dutiesCents: r() < 0.05 ? 350 : null,
        feesCents: r() < 0.05 ? 120 : null,
        cancelledAt: r() < 0.06 ? new Date(processedAt.getTime() + 3_600_000) : null,
      });
      order.createdAt = processedAt;
      order.updatedAt = new Date(processedAt.getTime() + 60_000);
      if (r() < 0.15 && order.financialStatus === 'PAID')
        this.addRefund(order.id, { full: r() < 0.4, at: order.updatedAt });
      added.push(order);
    }
    return added;
  }

  /** A refund of the first line (with its tax) and, if `full`, everything, shipping included. */
  addRefund(id: number, options: { full?: boolean; at?: Date; totalCents?: number } = {}): FakeRefund {
    const order = this.#orders.get(id);
    if (!order) throw new Error(`no order ${id}`);
    const totals = orderTotals(order);
    const lines = options.full ? order.lines : order.lines.slice(0, 1);
    // Shopify's subtotalSet: what was paid for the items, tax included when the prices include it.
    const refundLines = lines.map((l, line) => ({
      line,
      quantity: l.quantity,
      subtotalCents: l.quantity * l.unitCents - (l.discountCents ?? 0),
      taxCents: l.taxCents,
    }));
    const shipping = options.full
      ? order.shipping.map((s) => ({
          subtotalCents: s.priceCents - (order.taxesIncluded ? s.taxCents : 0),
          taxCents: s.taxCents,
        }))
      : [];
    const computed =
      refundLines.reduce((s, l) => s + l.subtotalCents + (order.taxesIncluded ? 0 : l.taxCents), 0) +
      shipping.reduce((s, l) => s + l.subtotalCents + l.taxCents, 0);
    const totalCents = Math.min(options.totalCents ?? computed, totals.total - totals.refunded);
    const refund: FakeRefund = {
      id: this.#nextId++,
      createdAt: options.at ?? new Date(),
      totalCents,
      lines: refundLines,
      shipping,
    };
    order.refunds.push(refund);
    order.financialStatus = totals.refunded + totalCents >= totals.total ? 'REFUNDED' : 'PARTIALLY_REFUNDED';
    order.updatedAt = options.at ?? new Date();
    return refund;
  }

  /**
   * An order, taxes included, with `shippingLines` taxed shipping lines and `refunds` refunds,
   * each giving back part of a line (with its tax) and one shipping line (with its tax): more of
   * each than a connector's first page asks for.
   */
  addOrderWithManyParts(counts: { refunds: number; shippingLines: number }): FakeShopifyOrder {
    const order = this.addOrder({
      taxesIncluded: true,
      lines: Array.from({ length: 3 }, () => ({ quantity: 1, unitCents: 5000, taxCents: 833 })),
      shipping: Array.from({ length: counts.shippingLines }, () => ({ priceCents: 600, taxCents: 100 })),
    });
    for (let i = 0; i < counts.refunds; i++) {
      const refund = this.addRefund(order.id, { totalCents: 1500 });
      refund.lines = [{ line: 0, quantity: 1, subtotalCents: 300 + i, taxCents: 60 + i }];
      refund.shipping = [{ subtotalCents: 400 + i, taxCents: 80 }];
    }
    return order;
  }

  updateOrder(id: number, changes: Partial<FakeShopifyOrder>): FakeShopifyOrder {
    const order = this.#orders.get(id);
    if (!order) throw new Error(`no order ${id}`);
    Object.assign(order, changes, { updatedAt: new Date() });
    return order;
  }
  cancelOrder(id: number): FakeShopifyOrder {
    return this.updateOrder(id, { cancelledAt: new Date() });
  }
  deleteOrder(id: number): void {
    this.#orders.delete(id);
  }

  // --- Webhooks (Shopify's delivery, sent on demand) ----------------------------------------------

  /** Delivers `topic` for the order to `target`, signed with `secret` (default: the app's). */
  async deliver(
    target: string,
    topic: string,
    orderId: number,
    options: { secret?: string; webhookId?: string; omitSignature?: boolean } = {},
  ): Promise<{ status: number; body: string }> {
    // The REST shapes Shopify sends: the order whole (orders/create, orders/updated…), only its
    // id when deleted, the refund (its order in order_id) for refunds/create.
    const order = this.#orders.get(orderId);
    const refund = order?.refunds.at(-1);
    const body = JSON.stringify(
      topic === 'orders/delete' || !order
        ? { id: orderId, admin_graphql_api_id: `gid://shopify/Order/${orderId}` }
        : topic === 'refunds/create' && refund
          ? restRefund(refund, order)
          : restOrder(order),
    );
    const hmac = crypto
      .createHmac('sha256', options.secret ?? this.apiSecret)
      .update(body)
      .digest('base64');
    const response = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-shopify-topic': topic,
        'x-shopify-shop-domain': this.domain,
        'x-shopify-api-version': this.#version || '2026-10',
        'x-shopify-webhook-id': options.webhookId ?? crypto.randomUUID(),
        'x-shopify-triggered-at': new Date().toISOString(),
        ...(options.omitSignature ? {} : { 'x-shopify-hmac-sha256': hmac }),
      },
      body,
    });
    return { status: response.status, body: await response.text() };
  }

  // --- HTTP --------------------------------------------------------------------------------------

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '/').split('?')[0]!;
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
    const slowMs = this.#slowNext.count > 0 ? (this.#slowNext.count--, this.#slowNext.ms) : this.#slowMs;
    if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, slowMs));
    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        date: new Date().toUTCString(),
        ...headers,
      });
      res.end(typeof value === 'string' ? value : JSON.stringify(value));
    };
    if (req.method === 'POST' && path === '/admin/oauth/access_token') return this.#grant(body, req, send);
    // Faults answer any request, a bulk file's included (its storage service fails too).
    const fault = this.#faults[0];
    if (fault) {
      if (--fault.count <= 0) this.#faults.shift();
      return send(
        fault.status,
        { errors: 'Fault (the fake’s own)' },
        fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
      );
    }
    const file = /^\/bulk\/(\d+)\.jsonl$/.exec(path);
    if (req.method === 'GET' && file) return this.#serveBulk(file[1]!, req, res);
    const graphql = /^\/admin\/api\/(\d{4}-\d\d|unstable)\/graphql\.json$/.exec(path);
    if (!graphql) return send(404, { errors: 'Not Found' });
    this.#version = graphql[1]!;
    if (req.method !== 'POST') return send(405, { errors: 'Method Not Allowed' });
    const token = req.headers['x-shopify-access-token'];
    if (!this.#valid(typeof token === 'string' ? token : '')) {
      this.unauthorized++;
      return send(401, {
        errors: '[API] Invalid API key or access token (unrecognized login or wrong password)',
      });
    }
    let request: { query?: unknown; variables?: unknown };
    try {
      request = JSON.parse(body) as typeof request;
    } catch {
      return send(400, { errors: { query: 'Required parameter missing or invalid' } });
    }
    const answer = this.#graphql(
      String(request.query ?? ''),
      (request.variables ?? {}) as Record<string, unknown>,
    );
    const late = this.#lateBulkAnswers;
    if (late.count > 0 && String(request.query).includes('bulkOperationRunQuery')) {
      late.count--;
      await new Promise((resolve) => setTimeout(resolve, late.ms));
    }
    send(200, answer);
  }

  #valid(token: string): boolean {
    if (token === '') return false;
    if (token === this.accessToken) return true;
    const until = this.#granted.get(token);
    return until !== undefined && until > Date.now();
  }

  #grant(body: string, req: http.IncomingMessage, send: (s: number, v: unknown) => void): void {
    const type = req.headers['content-type'] ?? '';
    const form = type.includes('json')
      ? new Map(Object.entries(JSON.parse(body) as Record<string, string>))
      : new Map(new URLSearchParams(body));
    if (form.get('grant_type') !== 'client_credentials')
      return send(400, { error: 'unsupported_grant_type' });
    if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret) {
      return send(400, { error: 'invalid_client', error_description: 'Client authentication failed' });
    }
    const token = `shpat_${randomHex(16)}`;
    this.#granted.set(token, Date.now() + this.tokenLifetimeS * 1000);
    this.issued.push(token);
    this.grants++;
    send(200, { access_token: token, scope: this.scopes.join(','), expires_in: this.tokenLifetimeS });
  }

  // --- Bulk operations (bulkOperationRunQuery, a JSONL file) ------------------------------------------

  /** Bulk operations still RUNNING now (the fake's own view). */
  get bulkRunning(): number {
    return this.#bulks.filter((b) => Date.now() < b.completesAt).length;
  }

  /** Whether the `n`-th bulk operation's file has its children right after their parent (the fake's own view). */
  bulkFileGrouped(n: number): boolean | undefined {
    return this.#bulks[n - 1]?.grouped;
  }

  /** The size in bytes of the `n`-th bulk operation's file (the fake's own view). */
  bulkFileBytes(n: number): number | undefined {
    return this.#bulks[n - 1]?.file.length;
  }

  /**
   * Every running bulk operation completes now, whatever was left of `bulkDurationMs` (the fake's
   * own control: a test that must kill a server while one runs gives it a long duration, then
   * ends it when that is done, instead of guessing how long a loaded machine takes).
   */
  completeBulkOperations(): void {
    const now = Date.now();
    for (const bulk of this.#bulks) bulk.completesAt = Math.min(bulk.completesAt, now);
  }

  /** Bulk operations started (the fake's own count). */
  get bulkRuns(): number {
    return this.#bulks.length;
  }

  /** Starts a bulk operation as another caller of the same app would, on API `version` (the fake's own control). */
  runBulkQuery(query: string, version = '2026-10', groupObjects?: boolean): string | undefined {
    return this.#runBulk(query, version, groupObjects).bulkOperation?.id;
  }

  #runBulk(query: string, version: string, groupObjects: boolean | undefined) {
    this.bulkRunQueries++;
    const running = this.#bulks.filter((b) => Date.now() < b.completesAt);
    const concurrency = this.bulkConcurrency ?? (version < '2026-01' ? 1 : 5);
    if (running.length >= concurrency) {
      return {
        bulkOperation: null,
        userErrors: [
          {
            field: null,
            message: `A bulk query operation for this app and shop is already in progress: ${running[0]!.id}.`,
            code: 'OPERATION_IN_PROGRESS',
          },
        ],
      };
    }
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (error) {
      return {
        bulkOperation: null,
        userErrors: [{ field: ['query'], message: (error as Error).message, code: 'INVALID' }],
      };
    }
    const invalid = validate(schema, document);
    if (invalid.length > 0) {
      return {
        bulkOperation: null,
        userErrors: [{ field: ['query'], message: invalid[0]!.message, code: 'INVALID' }],
      };
    }
    const result = execute({ schema, document, rootValue: this.#root(), contextValue: { bulk: true } });
    if (result instanceof Promise) throw new Error('synchronous resolvers only');
    const records: string[][] = [];
    for (const value of Object.values(result.data ?? {})) {
      for (const node of nodesOfConnection(value)) {
        const own: string[] = [];
        flatten(node, undefined, own);
        records.push(own);
      }
    }
    const roots = records.length;
    // Shopify's default: grouped before API 2026-01, not grouped since (groupObjects: true asks).
    const grouped = groupObjects ?? version < '2026-01';
    const lines = grouped ? records.flat() : ungrouped(records, this.#rand);
    const bulk: FakeBulk = {
      id: `gid://shopify/BulkOperation/${this.#bulks.length + 1}`,
      query,
      createdAt: new Date(),
      completesAt: Date.now() + this.bulkDurationMs,
      file: Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8'),
      objects: lines.length,
      roots,
      grouped,
    };
    this.#bulks.push(bulk);
    return { bulkOperation: this.#bulkView(bulk), userErrors: [] };
  }

  #bulkView(bulk: FakeBulk | undefined) {
    if (!bulk) return null;
    const done = Date.now() >= bulk.completesAt;
    const share = done ? 1 : Math.max(0, 1 - (bulk.completesAt - Date.now()) / this.bulkDurationMs);
    return {
      id: bulk.id,
      status: done ? 'COMPLETED' : 'RUNNING',
      errorCode: null,
      objectCount: String(Math.floor(bulk.objects * share)),
      rootObjectCount: String(Math.floor(bulk.roots * share)),
      fileSize: done ? String(bulk.file.length) : null,
      url:
        done && bulk.file.length > 0
          ? `${this.url}/bulk/${bulk.id.split('/').at(-1)}.jsonl?signature=fake`
          : null,
      partialDataUrl: null,
      query: bulk.query,
      createdAt: bulk.createdAt.toISOString(),
      completedAt: done ? new Date(bulk.completesAt).toISOString() : null,
      type: 'QUERY',
    };
  }

  /** bulkOperations (2026-01): filtered by operation_type, status and created_at, newest first. */
  #bulkList(args: BulkListArgs) {
    const views = this.#bulks.map((b) => this.#bulkView(b)!);
    const query = args.query ?? '';
    const type = /\boperation_type:(\w+)/.exec(query)?.[1];
    const status = /\bstatus:(\w+)/.exec(query)?.[1];
    const since = [...query.matchAll(/\bcreated_at:(>=|<=|>|<)?'?([^'\s]+)'?/g)];
    const kept = views.filter((v) => {
      if (type !== undefined && type.toUpperCase() !== v.type) return false;
      if (status !== undefined && status.toUpperCase() !== v.status) return false;
      const at = Date.parse(v.createdAt);
      return since.every(([, op = '=', value]) => {
        const ref = Date.parse(value!);
        if (Number.isNaN(ref)) return true;
        return op === '>='
          ? at >= ref
          : op === '>'
            ? at > ref
            : op === '<='
              ? at <= ref
              : op === '<'
                ? at < ref
                : at === ref;
      });
    });
    const field = args.sortKey === 'COMPLETED_AT' ? 'completedAt' : 'createdAt';
    const sorted = kept.sort(
      (a, b) => Date.parse(b[field] ?? '') - Date.parse(a[field] ?? '') || (b.id > a.id ? 1 : -1),
    );
    if (args.reverse) sorted.reverse();
    const keyed = sorted.map((v, i) => ({ v, key: String(i).padStart(8, '0') }));
    const connection = connectionOf(keyed, args, (k) => k.key);
    return {
      ...connection,
      nodes: connection.nodes.map((k) => k.v),
      edges: connection.edges.map((e) => ({ ...e, node: e.node.v })),
    };
  }

  /** GET /bulk/N.jsonl: the result file, with byte ranges (as a storage service serves it). */
  #serveBulk(n: string, req: http.IncomingMessage, res: http.ServerResponse): void {
    const bulk = this.#bulks[Number(n) - 1];
    this.bulkDownloads.push({ range: req.headers.range });
    if (!bulk) {
      res.writeHead(404).end();
      return;
    }
    // One range, `bytes=A-B`, `bytes=A-` or `bytes=-N`, as a storage service serves it.
    const size = bulk.file.length;
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    const suffix = range && range[1] === '' && range[2] !== '';
    const start = !range ? 0 : suffix ? Math.max(0, size - Number(range[2])) : Number(range[1] || 0);
    const last = !range || suffix || range[2] === '' ? size - 1 : Math.min(size - 1, Number(range[2]));
    if (range && (start >= size || start > last)) {
      res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      return;
    }
    const body = bulk.file.subarray(start, last + 1);
    res.writeHead(range ? 206 : 200, {
      'content-type': 'application/jsonl',
      'content-length': String(body.length),
      ...(range ? { 'content-range': `bytes ${start}-${last}/${size}` } : {}),
    });
    res.end(body);
  }

  // --- GraphQL -----------------------------------------------------------------------------------

  #refill(): number {
    const b = this.bucket;
    const now = Date.now();
    b.available = Math.min(b.maximum, b.available + (b.restoreRate * (now - b.at)) / 1000);
    b.at = now;
    return b.available;
  }

  #costExtension(requested: number, actual: number | null) {
    return {
      cost: {
        requestedQueryCost: requested,
        actualQueryCost: actual,
        throttleStatus: {
          maximumAvailable: this.bucket.maximum,
          currentlyAvailable: Math.floor(this.bucket.available),
          restoreRate: this.bucket.restoreRate,
        },
      },
    };
  }

  #graphql(query: string, variables: Record<string, unknown>): unknown {
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (error) {
      return { errors: [{ message: (error as Error).message, extensions: { code: 'PARSE_ERROR' } }] };
    }
    const invalid = validate(schemaOf(this.#version), document);
    if (invalid.length > 0)
      return { errors: invalid.map((e) => ({ message: e.message, locations: e.locations })) };
    const requested = requestedCost(document, variables);
    this.#refill();
    if (requested > MAX_COST) {
      return {
        errors: [
          {
            message: `Query cost is ${requested}, which exceeds the single query max cost limit (${MAX_COST}).`,
            extensions: { code: 'MAX_COST_EXCEEDED', cost: requested, maxCost: MAX_COST },
          },
        ],
        extensions: this.#costExtension(requested, null),
      };
    }
    if (requested > this.bucket.available) {
      this.costs.push({ requested, actual: 0, throttled: true });
      return {
        errors: [
          {
            message: 'Throttled',
            extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
          },
        ],
        extensions: this.#costExtension(requested, null),
      };
    }
    const result = execute({ schema, document, rootValue: this.#root(), variableValues: variables });
    if (result instanceof Promise) throw new Error('synchronous resolvers only');
    const actual = Math.min(requested, actualCost(result.data));
    this.bucket.available -= actual;
    this.costs.push({ requested, actual, throttled: false });
    return {
      ...(result.data === undefined ? {} : { data: result.data }),
      ...(result.errors ? { errors: result.errors.map((e) => e.toJSON()) } : {}),
      extensions: this.#costExtension(requested, actual),
    };
  }

  #canRead(): void {
    if (!this.scopes.includes('read_orders')) {
      throw new GraphQLError('Access denied for orders field. Required access: `read_orders` access scope.', {
        extensions: { code: 'ACCESS_DENIED', documentation: 'https://shopify.dev/api/usage/access-scopes' },
      });
    }
  }

  /** Orders the app may see: without read_all_orders, the last 60 days only. */
  #visible(): FakeShopifyOrder[] {
    const floor = this.scopes.includes('read_all_orders') ? 0 : Date.now() - 60 * 86_400_000;
    return this.allOrders().filter((o) => o.processedAt.getTime() >= floor);
  }

  #root() {
    return {
      shop: () => ({
        id: 'gid://shopify/Shop/1',
        name: this.#name,
        currencyCode: this.currency,
        ianaTimezone: 'Europe/Paris',
        myshopifyDomain: this.domain,
        email: 'owner@example.com',
      }),
      currentAppInstallation: () => ({
        accessScopes: this.scopes.map((handle) => ({ handle, description: handle })),
      }),
      order: ({ id }: { id: string }) => {
        this.#canRead();
        const m = /^gid:\/\/shopify\/Order\/(\d+)$/.exec(id);
        const order = m ? this.#visible().find((o) => o.id === Number(m[1])) : undefined;
        return order ? orderObject(order) : null;
      },
      refund: ({ id }: { id: string }) => {
        this.#canRead();
        const m = /^gid:\/\/shopify\/Refund\/(\d+)$/.exec(id);
        for (const order of m ? this.#visible() : []) {
          const refund = order.refunds.find((r) => r.id === Number(m![1]));
          if (refund) return refundObject(refund, order);
        }
        return null;
      },
      orders: (
        args: {
          first?: number;
          after?: string;
          sortKey?: string;
          reverse?: boolean;
          query?: string;
        },
        context?: Bulk,
      ) => {
        this.#canRead();
        return ordersConnection(this.#visible(), args, context);
      },
      bulkOperation: ({ id }: { id: string }) => this.#bulkView(this.#bulks.find((b) => b.id === id)),
      currentBulkOperation: () => this.#bulkView(this.#bulks.at(-1)),
      bulkOperations: (args: BulkListArgs) => this.#bulkList(args),
      bulkOperationRunQuery: ({ query, groupObjects }: { query: string; groupObjects?: boolean | null }) =>
        this.#runBulk(query, this.#version, groupObjects ?? undefined),
      ordersCount: ({ query, limit }: { query?: string; limit?: number | null }) => {
        this.#canRead();
        const count = filtered(this.#visible(), query).length;
        return limit !== null && limit !== undefined && count > limit
          ? { count: limit, precision: 'AT_LEAST' }
          : { count, precision: 'EXACT' };
      },
    };
  }
}

// --- Resolvers' data -----------------------------------------------------------------------------

const money = (cents: number, currency: string) => {
  const m = { amount: decimal(cents), currencyCode: currency };
  return { shopMoney: m, presentmentMoney: m };
};

/** A connection over `items` with Shopify's first/after arguments (first required, ≤ 250). */
function connectionOf<T>(
  items: readonly T[],
  args: { first?: number; after?: string },
  keyOf: (item: T) => string,
  context?: { bulk?: boolean },
) {
  // A bulk operation's query asks for whole connections, without first.
  if (context?.bulk) args = { ...args, first: items.length };
  else if (args.first === undefined || args.first === null) {
    throw new GraphQLError('you must provide one of first or last', { extensions: { code: 'BAD_REQUEST' } });
  }
  if (args.first! > MAX_PAGE && !context?.bulk) {
    throw new GraphQLError(`The first argument must be less than or equal to ${MAX_PAGE}`, {
      extensions: { code: 'BAD_REQUEST' },
    });
  }
  let start = 0;
  if (args.after) {
    let key: unknown;
    try {
      key = (JSON.parse(Buffer.from(args.after, 'base64').toString('utf8')) as { key?: unknown }).key;
    } catch {
      key = undefined;
    }
    if (typeof key !== 'string')
      throw new GraphQLError('Invalid cursor', { extensions: { code: 'BAD_REQUEST' } });
    start = items.findIndex((item) => keyOf(item) > key);
    if (start < 0) start = items.length;
  }
  const page = items.slice(start, start + args.first!);
  const cursor = (item: T) => Buffer.from(JSON.stringify({ key: keyOf(item) })).toString('base64');
  return {
    nodes: page,
    edges: page.map((node) => ({ cursor: cursor(node), node })),
    pageInfo: {
      hasNextPage: start + page.length < items.length,
      hasPreviousPage: start > 0,
      startCursor: page[0] ? cursor(page[0]) : null,
      endCursor: page.at(-1) ? cursor(page.at(-1)!) : null,
    },
  };
}

const pad = (n: number) => String(n).padStart(20, '0');

/** Shopify's search syntax, the part the fake knows: updated_at/created_at/processed_at comparisons, test. */
function filtered(orders: readonly FakeShopifyOrder[], query: string | undefined): FakeShopifyOrder[] {
  if (!query) return [...orders];
  const terms = [...query.matchAll(/(updated_at|created_at|processed_at):(>=|<=|>|<)?'?([^'\s]+)'?/g)];
  const flags = [...query.matchAll(/\btest:(true|false)\b/g)];
  return orders.filter((o) => {
    for (const [, field, op = '=', value] of terms) {
      const at = (
        field === 'updated_at' ? o.updatedAt : field === 'created_at' ? o.createdAt : o.processedAt
      ).getTime();
      const ref = Date.parse(value!);
      if (Number.isNaN(ref)) continue;
      if (op === '>=' && !(at >= ref)) return false;
      if (op === '>' && !(at > ref)) return false;
      if (op === '<=' && !(at <= ref)) return false;
      if (op === '<' && !(at < ref)) return false;
    }
    for (const [, flag] of flags) if (o.test !== (flag === 'true')) return false;
    return true;
  });
}

type Bulk = { bulk?: boolean };
interface BulkListArgs {
  first?: number;
  after?: string;
  reverse?: boolean;
  sortKey?: string;
  query?: string;
}

function ordersConnection(
  orders: readonly FakeShopifyOrder[],
  args: { first?: number; after?: string; sortKey?: string; reverse?: boolean; query?: string },
  context?: Bulk,
) {
  const keyOf = (o: FakeShopifyOrder) => {
    switch (args.sortKey) {
      case 'UPDATED_AT':
        return `${pad(o.updatedAt.getTime())}:${pad(o.id)}`;
      case 'CREATED_AT':
        return `${pad(o.createdAt.getTime())}:${pad(o.id)}`;
      case 'PROCESSED_AT':
        return `${pad(o.processedAt.getTime())}:${pad(o.id)}`;
      default:
        return pad(o.id);
    }
  };
  const sorted = filtered(orders, args.query).sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));
  const connection = connectionOf(sorted, args, keyOf, context);
  return {
    ...connection,
    nodes: connection.nodes.map(orderObject),
    edges: connection.edges.map((e) => ({ ...e, node: orderObject(e.node) })),
  };
}

/** A line item's number: unique in the shop (the order's, then its place). */
export const lineItemId = (orderId: number, place: number) => orderId * 1000 + place;

/** Shopify's LineItem: the title and variant title at the time of sale, its product's type. */
function lineItemObject(o: FakeShopifyOrder, l: FakeLine, i: number) {
  const c = o.currency;
  const title = l.product?.title ?? `Article ${i + 1}`;
  return {
    id: `gid://shopify/LineItem/${lineItemId(o.id, i)}`,
    quantity: l.quantity,
    name: l.variant ? `${title} - ${l.variant.title}` : title,
    title,
    variantTitle: l.variant?.title ?? null,
    sku: l.sku ?? '',
    product: l.product
      ? { id: `gid://shopify/Product/${l.product.id}`, title, productType: l.product.productType }
      : null,
    // A product without variants has one, the default one (variantTitle null).
    variant: l.product
      ? {
          id: `gid://shopify/ProductVariant/${l.variant?.id ?? l.product.id * 10}`,
          title: l.variant?.title ?? 'Default Title',
          sku: l.sku ?? null,
        }
      : null,
    originalUnitPriceSet: money(l.unitCents, c),
    originalTotalSet: money(l.quantity * l.unitCents, c),
    discountAllocations: l.discountCents ? [{ allocatedAmountSet: money(l.discountCents, c) }] : [],
    taxLines: [{ priceSet: money(l.taxCents, c), rate: 0.2, title: 'TVA' }],
  };
}

function orderObject(o: FakeShopifyOrder) {
  const totals = orderTotals(o);
  const c = o.currency;
  const tax = (cents: number) => [{ priceSet: money(cents, c), rate: 0.2, title: 'TVA' }];
  const lineItems = o.lines.map((l, i) => lineItemObject(o, l, i));
  const address =
    o.country === null ? null : { countryCodeV2: o.country, country: o.country, city: 'Ville', zip: '00000' };
  return {
    id: `gid://shopify/Order/${o.id}`,
    legacyResourceId: String(o.id),
    name: `#${o.id % 100000}`,
    createdAt: o.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    processedAt: o.processedAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    updatedAt: o.updatedAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    cancelledAt: o.cancelledAt?.toISOString().replace(/\.\d{3}Z$/, 'Z') ?? null,
    closedAt: null,
    displayFinancialStatus: o.financialStatus,
    test: o.test,
    email: o.email,
    currencyCode: c,
    presentmentCurrencyCode: c,
    taxesIncluded: o.taxesIncluded,
    billingAddress: address,
    shippingAddress: address,
    subtotalLineItemsQuantity: o.lines.reduce((s, l) => s + l.quantity, 0),
    totalPriceSet: money(totals.total, c),
    subtotalPriceSet: money(totals.subtotal, c),
    totalTaxSet: money(totals.tax, c),
    totalShippingPriceSet: money(totals.shipping, c),
    totalRefundedSet: money(totals.refunded, c),
    totalDiscountsSet: money(totals.discounts, c),
    originalTotalDutiesSet: o.dutiesCents === null ? null : money(o.dutiesCents, c),
    originalTotalAdditionalFeesSet: o.feesCents === null ? null : money(o.feesCents, c),
    lineItems: (args: { first?: number; after?: string }, context?: Bulk) =>
      connectionOf(lineItems, args, (item) => pad(lineItems.indexOf(item)), context),
    shippingLines: (args: { first?: number; after?: string }, context?: Bulk) => {
      const lines = o.shipping.map((s, i) => ({
        id: `gid://shopify/ShippingLine/${o.id}${i}`,
        title: 'Colissimo',
        originalPriceSet: money(s.priceCents, c),
        taxLines: tax(s.taxCents),
      }));
      return connectionOf(lines, args, (item) => pad(lines.indexOf(item)), context);
    },
    refunds: ({ first }: { first?: number }) =>
      o.refunds.slice(0, first ?? o.refunds.length).map((r) => refundObject(r, o)),
  };
}

const restMoney = (cents: number, currency: string) => {
  const amount = (cents / 100).toFixed(2);
  return {
    amount,
    set: {
      shop_money: { amount, currency_code: currency },
      presentment_money: { amount, currency_code: currency },
    },
  };
};

/** A line item as the REST webhooks give it. */
function restLineItem(o: FakeShopifyOrder, l: FakeLine, i: number) {
  const c = o.currency;
  const price = restMoney(l.unitCents, c);
  const discount = restMoney(l.discountCents ?? 0, c);
  const tax = restMoney(l.taxCents, c);
  const title = l.product?.title ?? `Article ${i + 1}`;
  return {
    id: lineItemId(o.id, i),
    admin_graphql_api_id: `gid://shopify/LineItem/${lineItemId(o.id, i)}`,
    quantity: l.quantity,
    title,
    variant_title: l.variant?.title ?? null,
    name: l.variant ? `${title} - ${l.variant.title}` : title,
    sku: l.sku ?? '',
    product_id: l.product?.id ?? null,
    variant_id: l.product ? (l.variant?.id ?? l.product.id * 10) : null,
    price: price.amount,
    price_set: price.set,
    total_discount: '0.00',
    discount_allocations: l.discountCents
      ? [{ amount: discount.amount, amount_set: discount.set, discount_application_index: 0 }]
      : [],
    tax_lines: [{ title: 'TVA', rate: 0.2, price: tax.amount, price_set: tax.set }],
  };
}

function restRefund(r: FakeRefund, o: FakeShopifyOrder) {
  const c = o.currency;
  return {
    id: r.id,
    order_id: o.id,
    admin_graphql_api_id: `gid://shopify/Refund/${r.id}`,
    created_at: r.createdAt.toISOString(),
    refund_line_items: r.lines.map((l, i) => {
      const subtotal = restMoney(l.subtotalCents, c);
      const tax = restMoney(l.taxCents, c);
      return {
        id: Number(`${r.id}${i}`),
        quantity: l.quantity,
        line_item_id: lineItemId(o.id, l.line),
        restock_type: 'no_restock',
        subtotal: Number(subtotal.amount),
        subtotal_set: subtotal.set,
        total_tax: Number(tax.amount),
        total_tax_set: tax.set,
        line_item: restLineItem(o, o.lines[l.line]!, l.line),
      };
    }),
    transactions: [{ kind: 'refund', status: 'success', amount: (r.totalCents / 100).toFixed(2) }],
  };
}

/** An order as the REST webhooks (orders/create, orders/updated…) give it. */
function restOrder(o: FakeShopifyOrder) {
  const totals = orderTotals(o);
  const amount = (cents: number) => (cents / 100).toFixed(2);
  return {
    id: o.id,
    admin_graphql_api_id: `gid://shopify/Order/${o.id}`,
    email: o.email,
    created_at: o.createdAt.toISOString(),
    processed_at: o.processedAt.toISOString(),
    updated_at: o.updatedAt.toISOString(),
    cancelled_at: o.cancelledAt?.toISOString() ?? null,
    currency: o.currency,
    taxes_included: o.taxesIncluded,
    financial_status: o.financialStatus?.toLowerCase() ?? null,
    test: o.test,
    total_price: amount(totals.total),
    total_tax: amount(totals.tax),
    total_discounts: amount(totals.discounts),
    line_items: o.lines.map((l, i) => restLineItem(o, l, i)),
    refunds: o.refunds.map((r) => restRefund(r, o)),
  };
}

function refundObject(r: FakeRefund, o: FakeShopifyOrder) {
  const c = o.currency;
  const lines = r.lines.map((l, i) => ({
    id: `gid://shopify/RefundLineItem/${r.id}${i}`,
    quantity: l.quantity,
    subtotalSet: money(l.subtotalCents, c),
    totalTaxSet: money(l.taxCents, c),
    lineItem: lineItemObject(o, o.lines[l.line]!, l.line),
  }));
  const shipping = r.shipping.map((s, i) => ({
    id: `gid://shopify/RefundShippingLine/${r.id}${i}`,
    subtotalAmountSet: money(s.subtotalCents, c),
    taxAmountSet: money(s.taxCents, c),
  }));
  return {
    id: `gid://shopify/Refund/${r.id}`,
    legacyResourceId: String(r.id),
    createdAt: r.createdAt.toISOString(),
    totalRefundedSet: money(r.totalCents, c),
    refundLineItems: (args: { first?: number; after?: string }, context?: Bulk) =>
      connectionOf(lines, args, (item) => pad(lines.indexOf(item)), context),
    refundShippingLines: (args: { first?: number; after?: string }, context?: Bulk) =>
      connectionOf(shipping, args, (item) => pad(shipping.indexOf(item)), context),
  };
}

// --- Bulk results: each connection's nodes as their own lines, with __parentId ----------------------

interface FakeBulk {
  id: string;
  query: string;
  createdAt: Date;
  completesAt: number;
  file: Buffer;
  objects: number;
  roots: number;
  grouped: boolean;
}

function nodesOfConnection(value: unknown): Record<string, unknown>[] {
  if (typeof value !== 'object' || value === null) return [];
  const record = value as { edges?: { node: Record<string, unknown> }[]; nodes?: Record<string, unknown>[] };
  return record.edges?.map((e) => e.node) ?? record.nodes ?? [];
}

const isConnection = (value: unknown) =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  ('edges' in value || 'nodes' in value);

/**
 * Lines as Shopify writes them without grouping (API 2026-01 and later): each root object in its
 * order, each of its descendants somewhere after it, mostly among the next few dozen roots and
 * their own children, one in eight at the very end of the file.
 */
function ungrouped(records: readonly string[][], rand: () => number): string[] {
  const after: string[][] = records.map(() => []);
  const last = records.length - 1;
  records.forEach((record, i) => {
    let slot = i;
    for (const line of record.slice(1)) {
      // Never before an earlier descendant: a grandchild stays after its own parent.
      slot = Math.max(slot, rand() < 0.125 ? last : Math.min(last, i + Math.floor(rand() * 40)));
      after[slot]!.push(line);
    }
  });
  return records.flatMap(([root], i) => [root!, ...after[i]!]);
}

/** The node's line (its connections removed), then each connection's nodes after it. */
function flatten(node: Record<string, unknown>, parentId: string | undefined, lines: string[]): void {
  const own: Record<string, unknown> = {};
  const children: Record<string, unknown>[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (isConnection(value)) children.push(...nodesOfConnection(value));
    else own[key] = value;
  }
  lines.push(JSON.stringify(parentId === undefined ? own : { ...own, __parentId: parentId }));
  for (const child of children) flatten(child, String(node.id), lines);
}

// --- Query cost (Shopify's calculated query cost) --------------------------------------------------

function argValue(
  node: { arguments?: readonly { name: { value: string }; value: unknown }[] },
  name: string,
  variables: Record<string, unknown>,
): unknown {
  const arg = node.arguments?.find((a) => a.name.value === name);
  if (!arg) return undefined;
  const value = arg.value as { kind: string; value?: string; name?: { value: string } };
  if (value.kind === 'Variable') return variables[value.name!.value];
  if (value.kind === 'IntValue') return Number(value.value);
  return value.value;
}

function selectionCost(
  type: GraphQLObjectType,
  selection: SelectionSetNode | undefined,
  variables: Record<string, unknown>,
  fragments: Map<string, SelectionSetNode>,
): number {
  if (!selection) return 0;
  let cost = 0;
  for (const node of selection.selections) {
    if (node.kind === 'FragmentSpread') {
      cost += selectionCost(type, fragments.get(node.name.value), variables, fragments);
      continue;
    }
    if (node.kind === 'InlineFragment') {
      cost += selectionCost(type, node.selectionSet, variables, fragments);
      continue;
    }
    const field: GraphQLField<unknown, unknown> | undefined = type.getFields()[node.name.value];
    if (!field) continue;
    const named = getNamedType(field.type);
    if (!isObjectType(named)) continue;
    const first = Number(argValue(node, 'first', variables) ?? argValue(node, 'last', variables) ?? 1);
    if (named.name.endsWith('Connection')) {
      // 2 for the connection, then each of `first` nodes with what is asked of it.
      const nodeType = getNamedType(named.getFields().nodes!.type) as GraphQLObjectType;
      let child = 0;
      for (const inner of node.selectionSet?.selections ?? []) {
        if (inner.kind !== 'Field') continue;
        if (inner.name.value === 'nodes')
          child += 1 + selectionCost(nodeType, inner.selectionSet, variables, fragments);
        else if (inner.name.value === 'edges') {
          const nodeField = inner.selectionSet?.selections.find(
            (s) => s.kind === 'Field' && s.name.value === 'node',
          );
          child +=
            1 +
            selectionCost(
              nodeType,
              nodeField?.kind === 'Field' ? nodeField.selectionSet : undefined,
              variables,
              fragments,
            );
        }
      }
      cost += 2 + first * child;
    } else {
      const many = isListType(
        isNonNullType(field.type) ? field.type.ofType : (field.type as GraphQLOutputType),
      );
      const each = 1 + selectionCost(named, node.selectionSet, variables, fragments);
      cost += many && first > 1 ? first * each : each;
    }
  }
  return cost;
}

export function requestedCost(document: DocumentNode, variables: Record<string, unknown>): number {
  const fragments = new Map<string, SelectionSetNode>();
  for (const d of document.definitions)
    if (d.kind === 'FragmentDefinition') fragments.set(d.name.value, d.selectionSet);
  const operation = document.definitions.find((d) => d.kind === 'OperationDefinition');
  if (!operation || operation.kind !== 'OperationDefinition') return 0;
  if (operation.operation === 'mutation') return 10; // bulkOperationRunQuery: 10 points
  return selectionCost(schema.getQueryType()!, operation.selectionSet, variables, fragments);
}

/** Objects actually returned, connections 2 each: what Shopify takes from the bucket. */
function actualCost(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((s: number, v) => s + actualCost(v), 0);
  if (typeof value !== 'object' || value === null) return 0;
  const record = value as Record<string, unknown>;
  const connection = 'pageInfo' in record ? 1 : 0;
  return 1 + connection + Object.values(record).reduce((s: number, v) => s + actualCost(v), 0);
}
