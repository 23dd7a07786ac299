-- Issue 21: Shopify stores, the second platform of store_connections.
ALTER TABLE store_connections DROP CONSTRAINT store_connections_platform_check;
ALTER TABLE store_connections ADD CONSTRAINT store_connections_platform_check
  CHECK (platform IN ('woocommerce', 'shopify'));

-- Shopify names each webhook delivery (X-Shopify-Webhook-Id) and sends it again when our answer is
-- late: a delivery seen is not queued twice. Kept a day, at most MAX_DELIVERIES a connection
-- (src/ingest/connectors/connections.ts).
CREATE TABLE store_webhook_deliveries (
  connection_id uuid NOT NULL REFERENCES store_connections (id) ON DELETE CASCADE,
  delivery_id   text NOT NULL CHECK (length(delivery_id) <= 200),
  received_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (connection_id, delivery_id)
);
CREATE INDEX store_webhook_deliveries_age ON store_webhook_deliveries (connection_id, received_at);
