-- Section 15 (L1): an order's lines wait in import_staging with it, as one JSON array keyed by
-- order_lines' column names (NULL: no lines), until the merge expands them (src/ingest/merge.ts).
-- One staged row an order whatever its lines: the connector's pages and the small files stage
-- here; a file import's own table has the same column (src/ingest/staging.ts).
ALTER TABLE import_staging ADD COLUMN lines jsonb;

-- order_lines (organization_id, store_id, external_id) → orders ON DELETE CASCADE, checked once a
-- statement as migration 011 does for orders → stores (same guarantees, same reasons: an import
-- writes lines by the million, and a foreign key looks up and locks the order once per line):
-- - every written line's order exists, locked FOR KEY SHARE until the transaction ends;
-- - deleting an order deletes its lines; a TRUNCATE of orders empties order_lines.
-- Orders' keys are never updated (a changed key is a new order): no check on that side.
ALTER TABLE order_lines DROP CONSTRAINT order_lines_organization_id_store_id_external_id_fkey;

CREATE FUNCTION order_lines_reference_orders() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  wanted bigint;
  locked bigint;
BEGIN
  WITH keys AS (SELECT DISTINCT organization_id, store_id, external_id FROM new_rows),
  found AS (
    SELECT 1 FROM orders o JOIN keys k
      ON o.organization_id = k.organization_id AND o.store_id = k.store_id AND o.external_id = k.external_id
    FOR KEY SHARE OF o
  )
  SELECT (SELECT count(*) FROM keys), (SELECT count(*) FROM found) INTO wanted, locked;
  IF locked <> wanted THEN
    RAISE foreign_key_violation USING MESSAGE = 'order lines refer to an order that does not exist';
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER order_lines_insert_references_orders AFTER INSERT ON order_lines
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION order_lines_reference_orders();
CREATE TRIGGER order_lines_update_references_orders AFTER UPDATE ON order_lines
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION order_lines_reference_orders();

CREATE FUNCTION orders_cascade_to_lines() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cascade_needs_read_committed();
  DELETE FROM order_lines l USING old_rows o
  WHERE l.organization_id = o.organization_id AND l.store_id = o.store_id AND l.external_id = o.external_id;
  RETURN NULL;
END $$;

CREATE TRIGGER orders_delete_cascades_to_lines AFTER DELETE ON orders
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION orders_cascade_to_lines();

CREATE FUNCTION orders_truncate_lines() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE order_lines;
  RETURN NULL;
END $$;

CREATE TRIGGER orders_truncate_truncates_lines AFTER TRUNCATE ON orders
  FOR EACH STATEMENT EXECUTE FUNCTION orders_truncate_lines();

-- Issue 27: WooCommerce connections made before lines existed walk their store's history again,
-- so that the orders they imported get their lines (each order written again with them; an order
-- the walk finds unchanged, lines included, is left alone). Their changes keep being read after.
UPDATE store_connections
SET phase = 'backfill', backfill_cursor = NULL, backfill_total = NULL, next_sync_at = now()
WHERE platform = 'woocommerce' AND phase = 'incremental';
