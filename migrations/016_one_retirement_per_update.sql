-- Issue 19: an update that did not stamp its rows (psql, a writer other than ours) is stamped by
-- a second UPDATE inside stamp_order_changes (migration 012). That UPDATE fired the retirement
-- trigger again and wrote a second order_retirements row for each order, about versions written
-- by the same transaction that no other transaction ever saw. A transaction-local setting now
-- marks the stamping UPDATE, and the retirement trigger skips it: one row per retired version.
CREATE OR REPLACE FUNCTION stamp_order_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows WHERE change_xid <> pg_current_xact_id()) THEN
    PERFORM set_config('sales_metrics.stamping_orders', 'on', true);
    UPDATE orders o SET change_xid = pg_current_xact_id()
    FROM new_rows n
    WHERE n.change_xid <> pg_current_xact_id() AND o.organization_id = n.organization_id
      AND o.store_id = n.store_id AND o.external_id = n.external_id;
    PERFORM set_config('sales_metrics.stamping_orders', '', true);
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION record_order_retirements() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('sales_metrics.stamping_orders', true) = 'on' THEN
    RETURN NULL;
  END IF;
  IF (SELECT count(*) FROM (SELECT 1 FROM old_rows LIMIT 50001) r) > 50000 THEN
    INSERT INTO order_retirements (organization_id) SELECT DISTINCT organization_id FROM old_rows;
  ELSE
    INSERT INTO order_retirements (organization_id, store_id, external_id, customer)
    SELECT organization_id, store_id, external_id, customer FROM old_rows;
  END IF;
  IF random() < 0.01 THEN
    DELETE FROM order_retirements WHERE retired_at < now() - interval '2 days';
  END IF;
  RETURN NULL;
END $$;

-- TRUNCATE of orders (an operator's, by hand) fires no row or statement DELETE trigger: neither the
-- data version nor order_retirements heard of it, and snapshots kept answering the orders that
-- were gone. It now bumps every organization's data version and leaves each an "everything
-- changed" row (store_id NULL): the next request rebuilds its snapshot.
CREATE FUNCTION record_orders_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO order_retirements (organization_id) SELECT id FROM organizations;
  PERFORM bump_data_version(ARRAY(SELECT id FROM organizations));
  RETURN NULL;
END $$;

CREATE TRIGGER orders_truncate_records_retirements AFTER TRUNCATE ON orders
  FOR EACH STATEMENT EXECUTE FUNCTION record_orders_truncated();
