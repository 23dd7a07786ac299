-- Section 15 (L1): what an order sold, one row a line. Keyed organization first like every other
-- table (the Citus shape), then the order's own key, so that an order's lines lie together.
--
-- A line belongs to one version of its order: whoever replaces an order's lines (an import, a
-- connector, a webhook) writes the order row in the same transaction, so that data_version,
-- change_xid and order_retirements (migrations 007, 012) see the change as the order's, and the
-- columnar snapshot's deltas read the order again with its lines. Re-importing an order replaces
-- its lines wholly (I2); an order without lines has no row here.
CREATE TABLE order_lines (
  organization_id   bigint NOT NULL,
  store_id          bigint NOT NULL,
  external_id       text NOT NULL,
  line_id           text NOT NULL,                 -- L1: 1–64 characters, unique within the order
  position          integer NOT NULL,              -- the line's place in the order as sent, from 0
  product_id        text,                          -- NULL when absent (L2 shows Unknown)
  variant_id        text,
  sku               text,
  product_name      text NOT NULL,
  variant_name      text,
  categories        text[] NOT NULL DEFAULT '{}',  -- L5: at most 20 distinct values
  quantity          integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000000),
  subtotal          numeric(16, 2) NOT NULL CHECK (subtotal >= 0),
  discount          numeric(16, 2) NOT NULL DEFAULT 0 CHECK (discount >= 0),
  refunded_quantity integer NOT NULL DEFAULT 0 CHECK (refunded_quantity >= 0),
  refunded_amount   numeric(16, 2) NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0),
  PRIMARY KEY (organization_id, store_id, external_id, line_id),
  FOREIGN KEY (organization_id, store_id, external_id)
    REFERENCES orders (organization_id, store_id, external_id) ON DELETE CASCADE
);
