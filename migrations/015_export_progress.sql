-- Issue 21 item 2: the progress of a backfill read through the store's own export (a Shopify bulk
-- operation) before any order arrives: the objects the export has gathered so far (its
-- objectCount while polled). NULL for a walk without one (WooCommerce, Shopify's page walk).
ALTER TABLE store_connections ADD COLUMN export_objects bigint CHECK (export_objects >= 0);
