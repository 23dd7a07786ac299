-- Issue 27: Shopify connections made before the connector read order lines walk their shop's
-- history again once (a new bulk operation), so that the orders they imported get their lines
-- (each order written again with them; an order found unchanged, lines included, is left alone).
-- Their changes keep being read after, from where they were. As migration 018 for WooCommerce.
UPDATE store_connections
SET phase = 'backfill', backfill_cursor = NULL, backfill_total = NULL, next_sync_at = now()
WHERE platform = 'shopify' AND phase = 'incremental';
