-- Issue 11: stores connected through their platform's REST API (WooCommerce first). A connection
-- row is also the store's sync job: a worker claims it with FOR UPDATE SKIP LOCKED and holds a
-- lease it renews while it works, so that with several instances each store is synced by one at
-- a time, and a killed instance's lease runs out and another instance takes the work over.
CREATE TABLE store_connections (
  organization_id  bigint NOT NULL,
  store_id         bigint NOT NULL,
  -- Public id: the webhook address names it. It reveals nothing and grants nothing without the
  -- webhook secret.
  id               uuid NOT NULL UNIQUE,
  platform         text NOT NULL CHECK (platform IN ('woocommerce')),
  -- The site address the REST API answered at (after the redirects of the first check).
  api_base         text NOT NULL CHECK (length(api_base) <= 2048),
  -- AES-256-GCM with a key derived from SECRET_KEY (src/ingest/connectors/sealed.ts): the REST
  -- keys and the webhook secret are never stored in clear.
  credentials      bytea NOT NULL,
  webhook_secret   bytea NOT NULL,
  -- The last 4 characters of the consumer secret: all the pages ever show of it.
  secret_hint      text NOT NULL CHECK (length(secret_hint) <= 4),
  -- backfill: walking the whole history (backfill_cursor is the next page); incremental: changes
  -- since changes_since (the store's own clock, read from its Date header).
  phase            text NOT NULL DEFAULT 'backfill' CHECK (phase IN ('backfill', 'incremental')),
  backfill_cursor  text,
  backfill_started_at timestamptz,
  backfill_total   bigint,
  changes_since    timestamptz,
  swept_at         timestamptz,
  -- The current run: orders read and since when (progress and rate on the page and the CLI).
  run_started_at   timestamptz,
  run_orders       bigint NOT NULL DEFAULT 0,
  -- Orders the store sent that cannot be counted (another currency, a negative total…), and why.
  skipped_orders   bigint NOT NULL DEFAULT 0,
  last_skipped     text CHECK (length(last_skipped) <= 1000),
  next_sync_at     timestamptz NOT NULL DEFAULT now(),
  last_success_at  timestamptz,
  failures         integer NOT NULL DEFAULT 0,
  last_error       text CHECK (length(last_error) <= 1000),
  lease_owner      uuid,
  lease_until      timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, store_id),
  FOREIGN KEY (organization_id, store_id) REFERENCES stores (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX store_connections_due ON store_connections (next_sync_at);

-- Orders a webhook named: the worker fetches each one's current state from the store (so a
-- repeated or late delivery can only bring the order up to date), bounded per connection.
CREATE TABLE store_order_refetches (
  connection_id uuid NOT NULL REFERENCES store_connections (id) ON DELETE CASCADE,
  external_id   text NOT NULL CHECK (length(external_id) <= 200),
  queued_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (connection_id, external_id)
);

-- A deletion sweep lists every order id the store still has, here, then removes the others.
CREATE UNLOGGED TABLE store_sweep_ids (
  connection_id uuid NOT NULL REFERENCES store_connections (id) ON DELETE CASCADE,
  external_id   text NOT NULL,
  PRIMARY KEY (connection_id, external_id)
);
