-- Core schema. Every table carries organization_id, and every query of the engine filters by it.

CREATE TABLE organizations (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  slug               text NOT NULL UNIQUE,
  name               text NOT NULL,
  currency           char(3) NOT NULL DEFAULT 'EUR',
  subscription_state text NOT NULL DEFAULT 'trialing'
                     CHECK (subscription_state IN ('trialing', 'active', 'stopped')),
  trial_ends_on      date,
  excluded_statuses  text[] NOT NULL DEFAULT ARRAY['pending', 'failed', 'cancelled', 'checkout-draft'],
  deductions         text[] NOT NULL DEFAULT ARRAY['refunds', 'taxes', 'shipping'],
  created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE stores (
  organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id              bigint GENERATED ALWAYS AS IDENTITY,
  address         text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  UNIQUE (organization_id, address)
);

CREATE TABLE orders (
  organization_id bigint NOT NULL,
  store_id        bigint NOT NULL,
  external_id     text NOT NULL,
  created_at      timestamptz NOT NULL,
  status          text NOT NULL,
  billing_country text,            -- upper-cased ISO 3166-1 alpha-2, NULL when missing
  customer_email  text,            -- as the store sent it
  customer        text,            -- U1 identity (trimmed, lower-cased), NULL for anonymous orders
  items           integer NOT NULL CHECK (items >= 0),
  total           numeric(16, 2) NOT NULL,
  tax_total       numeric(16, 2) NOT NULL DEFAULT 0,
  shipping_total  numeric(16, 2) NOT NULL DEFAULT 0,
  fee_total       numeric(16, 2) NOT NULL DEFAULT 0,
  refund_total    numeric(16, 2) NOT NULL DEFAULT 0,
  refund_tax      numeric(16, 2) NOT NULL DEFAULT 0,
  refund_shipping numeric(16, 2) NOT NULL DEFAULT 0,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, store_id, external_id),
  FOREIGN KEY (organization_id, store_id) REFERENCES stores (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX orders_by_period ON orders (organization_id, created_at);
CREATE INDEX orders_by_customer ON orders (organization_id, customer, created_at) WHERE customer IS NOT NULL;

-- U2: each customer's earliest counted order, kept current by every import and settings change (I2).
CREATE TABLE customer_first_orders (
  organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  customer        text NOT NULL,
  first_order_at  timestamptz NOT NULL,
  PRIMARY KEY (organization_id, customer)
);

-- K2: only the SHA-256 of a key is stored, with its display prefix.
CREATE TABLE api_keys (
  organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id              bigint GENERATED ALWAYS AS IDENTITY,
  name            text NOT NULL,
  prefix          text NOT NULL,
  key_hash        bytea NOT NULL UNIQUE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_used_at    timestamptz,
  revoked_at      timestamptz,
  PRIMARY KEY (organization_id, id)
);

-- I1: an import writes its lines here first, then moves them into orders in one transaction.
-- Lines left by a killed import are never read by a report and are cleared by the next import.
CREATE TABLE import_staging (
  organization_id bigint NOT NULL,
  import_id       uuid NOT NULL,
  line            integer NOT NULL,
  store_address   text NOT NULL,
  external_id     text NOT NULL,
  created_at      timestamptz NOT NULL,
  status          text NOT NULL,
  billing_country text,
  customer_email  text,
  customer        text,
  items           integer NOT NULL,
  total           numeric(16, 2) NOT NULL,
  tax_total       numeric(16, 2) NOT NULL,
  shipping_total  numeric(16, 2) NOT NULL,
  fee_total       numeric(16, 2) NOT NULL,
  refund_total    numeric(16, 2) NOT NULL,
  refund_tax      numeric(16, 2) NOT NULL,
  refund_shipping numeric(16, 2) NOT NULL,
  staged_at       timestamptz NOT NULL DEFAULT now()
);
-- The merge walks an import's orders in key order, the last line of a repeated order first (I2).
CREATE INDEX import_staging_by_import
  ON import_staging (organization_id, import_id, store_address, external_id, line DESC);

-- U2, I2: the customers an import touched (its orders' customers and the previous customers of
-- the orders it replaced), whose first orders are recomputed; written and cleared in its transaction.
CREATE TABLE import_customers (
  organization_id bigint NOT NULL,
  import_id       uuid NOT NULL,
  customer        text NOT NULL,
  PRIMARY KEY (organization_id, import_id, customer)
);
