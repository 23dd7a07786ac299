// The GraphQL documents the Shopify connector sends, and their requested cost as Shopify counts
// it (an object 1 point, a connection 2 + `first` × its node, scalars and enums 0). A query whose
// requested cost passes 1,000 points is refused outright, whatever the bucket holds: a page of
// orders is sized so that it stays under (`ORDERS_PER_PAGE`); the rest of a large order (more
// line items, its refunds) is read by a second query for that order alone.

const MONEY = '{ shopMoney { amount } }';

/** The order's own fields; its line items and refunds are asked for by each query. */
const ORDER_FIELDS = `
  legacyResourceId processedAt updatedAt cancelledAt displayFinancialStatus test email currencyCode
  taxesIncluded
  billingAddress { countryCodeV2 }
  totalPriceSet ${MONEY}
  totalTaxSet ${MONEY}
  totalShippingPriceSet ${MONEY}
  totalRefundedSet ${MONEY}
  originalTotalDutiesSet ${MONEY}
  originalTotalAdditionalFeesSet ${MONEY}
  shippingLines(first: 5) { nodes { taxLines { priceSet ${MONEY} } } pageInfo { hasNextPage endCursor } }`;
/** Order 1, billing address 1, six money bags 2 each, shipping lines 2 + 5 × (1 + tax lines 3). */
const ORDER_FIELDS_COST = 1 + 1 + 6 * 2 + (2 + 5 * 4);

/** A line item as section 15 reads it (lines.ts); shared with the bulk query (bulk.ts). */
export const LINE_ITEM_FIELDS = `id quantity title variantTitle sku
  product { id productType } variant { id }
  originalTotalSet ${MONEY}
  discountAllocations { allocatedAmountSet ${MONEY} }
  taxLines { priceSet ${MONEY} rate }`;
/** The node 1, product 1, variant 1, three money bags (their list once each) 2 + 1 + 1… = 11. */
const LINE_ITEM_COST = 1 + 1 + 1 + 2 + 3 + 3;

const PAGE_LINE_ITEMS = 5;
const pageOrderCost = ORDER_FIELDS_COST + 2 + PAGE_LINE_ITEMS * LINE_ITEM_COST + 1;
/** Orders a page asks for: 9 × 94 + 3 = 849 points, under the 1,000 of a single query. */
export const ORDERS_PER_PAGE = Math.floor((900 - 3) / pageOrderCost);

export const ORDERS_PAGE = `query SalesMetricsOrders($first: Int!, $after: String, $query: String, $sortKey: OrderSortKeys!) {
  orders(first: $first, after: $after, query: $query, sortKey: $sortKey) {
    nodes {
      id ${ORDER_FIELDS}
      lineItems(first: ${PAGE_LINE_ITEMS}) { nodes { ${LINE_ITEM_FIELDS} } pageInfo { hasNextPage } }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;
export const ORDERS_PAGE_COST = 3 + ORDERS_PER_PAGE * pageOrderCost;

const DETAIL_LINE_ITEMS = 25;
const REFUNDS = 3;
const REFUND_LINE_ITEMS = 20;
/** What a refund gave back of a line item (lines.ts) and its tax (refund_tax, mapping.ts). */
const REFUND_LINE_ITEM_FIELDS = `quantity lineItem { id } subtotalSet ${MONEY} totalTaxSet ${MONEY}`;
/** The node 1, its line item 1, two money bags 2 each. */
const REFUND_LINE_ITEM_COST = 1 + 1 + 2 + 2;
const REFUND_SHIPPING_LINES = 3;
/** One refund's parts; more pages of either connection by `after` (shopify.ts). */
const REFUND_FIELDS = `id
      refundLineItems(first: ${REFUND_LINE_ITEMS}) { nodes { ${REFUND_LINE_ITEM_FIELDS} } pageInfo { hasNextPage endCursor } }
      refundShippingLines(first: ${REFUND_SHIPPING_LINES}) {
        nodes { subtotalAmountSet ${MONEY} taxAmountSet ${MONEY} } pageInfo { hasNextPage endCursor }
      }`;
/** The refund 1, its line items 2 + 20 × 6, its shipping lines 2 + 3 × 5. */
const REFUND_COST = 1 + 2 + REFUND_LINE_ITEMS * REFUND_LINE_ITEM_COST + 2 + REFUND_SHIPPING_LINES * 5;
/** One whole order: its line items (more pages by `after`) and its refunds with their parts. */
export const ORDER_DETAIL = `query SalesMetricsOrder($id: ID!, $after: String) {
  order(id: $id) {
    id ${ORDER_FIELDS}
    lineItems(first: ${DETAIL_LINE_ITEMS}, after: $after) { nodes { ${LINE_ITEM_FIELDS} } pageInfo { hasNextPage endCursor } }
    refunds(first: ${REFUNDS}) { ${REFUND_FIELDS} }
    refundIds: refunds { id }
  }
}`;
/** `refunds` is a list, not a connection: the first three whole, then every refund's id (1 point). */
export const ORDER_DETAIL_COST =
  ORDER_FIELDS_COST + 3 + DETAIL_LINE_ITEMS * LINE_ITEM_COST + REFUNDS * REFUND_COST + 1;

/** A refund past the detail's first three (Order.refunds has no `after`: read by its id). */
export const REFUND = `query SalesMetricsRefund($id: ID!) { refund(id: $id) { ${REFUND_FIELDS} } }`;
export const REFUND_QUERY_COST = REFUND_COST;

/** More shipping lines of one order (past the page's first 5), for their taxes. */
export const SHIPPING_LINES = `query SalesMetricsShippingLines($id: ID!, $after: String) {
  order(id: $id) {
    shippingLines(first: 200, after: $after) { nodes { taxLines { priceSet ${MONEY} } } pageInfo { hasNextPage endCursor } }
  }
}`;
export const SHIPPING_LINES_COST = 1 + 2 + 200 * 4;

/** More shipping lines of one refund (past the detail's first 3). */
export const REFUND_SHIPPING_LINES_PAGE = `query SalesMetricsRefundShippingLines($id: ID!, $after: String) {
  refund(id: $id) {
    refundShippingLines(first: 150, after: $after) { nodes { subtotalAmountSet ${MONEY} taxAmountSet ${MONEY} } pageInfo { hasNextPage endCursor } }
  }
}`;
export const REFUND_SHIPPING_LINES_COST = 1 + 2 + 150 * 5;

/** More line items of one refund (past the detail's first 20). */
export const REFUND_LINE_ITEMS_PAGE = `query SalesMetricsRefundLineItems($id: ID!, $after: String) {
  refund(id: $id) {
    refundLineItems(first: 150, after: $after) { nodes { ${REFUND_LINE_ITEM_FIELDS} } pageInfo { hasNextPage endCursor } }
  }
}`;
export const REFUND_LINE_ITEMS_COST = 1 + 3 + 150 * REFUND_LINE_ITEM_COST;

/** Line items of one order read per page past the detail's first 25. */
export const LINE_ITEMS_PER_PAGE = 80;
export const LINE_ITEMS = `query SalesMetricsLineItems($id: ID!, $after: String) {
  order(id: $id) {
    lineItems(first: ${LINE_ITEMS_PER_PAGE}, after: $after) { nodes { ${LINE_ITEM_FIELDS} } pageInfo { hasNextPage endCursor } }
  }
}`;
export const LINE_ITEMS_COST = 1 + 3 + LINE_ITEMS_PER_PAGE * LINE_ITEM_COST;

export const IDS_PER_PAGE = 250;
export const ORDER_IDS = `query SalesMetricsOrderIds($first: Int!, $after: String) {
  orders(first: $first, after: $after, sortKey: ID) {
    nodes { legacyResourceId }
    pageInfo { hasNextPage endCursor }
  }
}`;
export const ORDER_IDS_COST = 3 + IDS_PER_PAGE;

export const ORDERS_COUNT = `query SalesMetricsOrdersCount { ordersCount(limit: null) { count } }`;

export const SHOP = `query SalesMetricsShop { shop { name currencyCode ianaTimezone myshopifyDomain } }`;
export const FIRST_ORDER = `query SalesMetricsCanRead { orders(first: 1) { nodes { id } } }`;
export const SCOPES = `query SalesMetricsScopes { currentAppInstallation { accessScopes { handle } } }`;
