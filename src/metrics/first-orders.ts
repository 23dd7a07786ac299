// U2: a customer's first order is their earliest counted order (S1) ever, across all stores of the
// organization. customer_first_orders keeps it precomputed so that a report classifies customers
// (U3) without scanning their whole history; I2 keeps it current after every import and every
// settings change. The excluded statuses are read from the organization row by the statement
// itself, so a refresh can never use a stale copy of the settings.
import type { Queryable } from '../db/database.js';

/** The customers to recompute: those an import touched (import_customers), or all of them. */
export type FirstOrdersScope = { customersOfImport: string } | 'all';

// S1: an order counts when its status is not one of the organization's excluded statuses.
const COUNTED = 'o.status <> ALL ((SELECT excluded_statuses FROM organizations WHERE id = $1)::text[])';

const REFRESH_ALL = [
  'DELETE FROM customer_first_orders WHERE organization_id = $1',
  `INSERT INTO customer_first_orders (organization_id, customer, first_order_at)
   SELECT $1::bigint, o.customer, min(o.created_at) FROM orders o
   WHERE o.organization_id = $1 AND o.customer IS NOT NULL AND ${COUNTED}
   GROUP BY o.customer`,
];

// One lookup per touched customer on orders_by_customer (migration 010: by the customer's 64-bit
// hash, then the customer itself), the earliest of their counted orders, then an upsert; a
// customer left with no counted order (their only order replaced with another email or an
// excluded status) loses their row.
// Per-customer lookups and `= ANY (ARRAY(…))` keep the plan linear even when the statistics still
// describe the tables as they were before the import.
const REFRESH_IMPORT = `
  WITH firsts AS MATERIALIZED (
    SELECT c.customer,
      (SELECT min(o.created_at) FROM orders o
       WHERE o.organization_id = $1 AND o.customer IS NOT NULL
         AND hashtextextended(o.customer, 0) = hashtextextended(c.customer, 0) AND o.customer = c.customer
         AND ${COUNTED}
      ) AS first_order_at
    FROM import_customers c
    WHERE c.organization_id = $1 AND c.import_id = $2
  ), removed AS (
    DELETE FROM customer_first_orders
    WHERE organization_id = $1
      AND customer = ANY (ARRAY(SELECT customer FROM firsts WHERE first_order_at IS NULL))
  )
  INSERT INTO customer_first_orders (organization_id, customer, first_order_at)
  SELECT $1::bigint, customer, first_order_at FROM firsts WHERE first_order_at IS NOT NULL
  ON CONFLICT (organization_id, customer) DO UPDATE SET first_order_at = EXCLUDED.first_order_at`;

/**
 * A CTE (after WITH or a comma) for an import's upsert, whose rows `source` has the columns
 * inserted, customer, created_at and status: each customer's earliest counted new order becomes
 * their first order when it is earlier than the one they had. Exact for every customer none of
 * whose orders was replaced (their counted orders only grew); the customers of replaced orders
 * are recomputed afterwards by refreshFirstOrders({ customersOfImport }).
 */
export const FOLD_NEW_ORDERS = (source: string): string => `folded AS (
    INSERT INTO customer_first_orders (organization_id, customer, first_order_at)
    SELECT $1::bigint, o.customer, min(o.created_at) FROM ${source} o
    WHERE o.inserted AND o.customer IS NOT NULL AND ${COUNTED}
    GROUP BY o.customer
    ON CONFLICT (organization_id, customer) DO UPDATE
    SET first_order_at = LEAST(customer_first_orders.first_order_at, EXCLUDED.first_order_at)
  )`;

/**
 * Gives an organization which had no order before an import its first orders from that import's
 * lines alone: `lines` a FROM item holding each order once, `params` the statement's ($1 the
 * organization, then whatever `lines` refers to). Sorted by customer: the primary key is then
 * written in order.
 */
export async function firstOrdersFromLines(
  tx: Queryable,
  organizationId: string,
  lines: string,
  params: readonly string[],
): Promise<void> {
  await tx.query('DELETE FROM customer_first_orders WHERE organization_id = $1', [organizationId]);
  await tx.query(
    `INSERT INTO customer_first_orders (organization_id, customer, first_order_at)
     SELECT $1::bigint, o.customer, min(o.created_at) FROM ${lines} o
     WHERE o.customer IS NOT NULL AND ${COUNTED}
     GROUP BY o.customer ORDER BY o.customer`,
    [...params],
  );
}

/** Recomputes customer_first_orders for the scope; a customer with no counted order has no row. */
export async function refreshFirstOrders(
  tx: Queryable,
  organizationId: string,
  scope: FirstOrdersScope,
): Promise<void> {
  if (scope === 'all') {
    for (const statement of REFRESH_ALL) await tx.query(statement, [organizationId]);
    return;
  }
  await tx.query(REFRESH_IMPORT, [organizationId, scope.customersOfImport]);
}
