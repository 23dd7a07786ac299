-- Issue 7, "Personal data": customer e-mails are no longer stored. A customer is the keyed hash
-- (HMAC-SHA256 with SECRET_KEY, src/db/customer-hash.ts) of its U1 identity, in orders.customer,
-- customer_first_orders.customer, import_staging.customer and import_customers.customer.
ALTER TABLE orders DROP COLUMN customer_email;
ALTER TABLE import_staging DROP COLUMN customer_email;
COMMENT ON COLUMN orders.customer IS 'U1: HMAC-SHA256 (hex) of the normalized customer email, NULL for anonymous orders';

-- Lines staged by an import caught by the upgrade hold e-mails; that import cannot finish anyway.
TRUNCATE import_staging, import_customers;

-- SQL does not have the key: the organizations whose customers are still stored as e-mails are
-- listed here, and src/db/rehash-customers.ts (run by migrate) rehashes them in batches, then
-- rewrites the tables (a dropped column stays on disk until then) and empties this list.
CREATE TABLE customer_rehash_pending (
  organization_id bigint PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE
);
INSERT INTO customer_rehash_pending (organization_id)
SELECT DISTINCT organization_id FROM orders WHERE customer LIKE '%@%'
UNION
SELECT DISTINCT organization_id FROM customer_first_orders WHERE customer LIKE '%@%';
