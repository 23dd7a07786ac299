-- Issue 19: what changed in an organization's orders since a given moment, so that the columnar
-- report engine (src/metrics/columnar) brings its snapshot up to date by a delta instead of a
-- rebuild, on every instance, whoever wrote the change (import, connector, webhook, CLI, psql).
--
-- A moment is a PostgreSQL snapshot (pg_current_snapshot(): which transactions had committed).
-- Each order row carries the id of the transaction that wrote its current version (change_xid);
-- each order version that an update or a deletion retired leaves a row in order_retirements,
-- stamped the same way. What changed between a snapshot S0 and a later one S1, read under S1:
--   change_xid >= pg_snapshot_xmin(S0) AND NOT pg_visible_in_snapshot(change_xid, S0)
-- No committed change is ever missed: a transaction still in flight at S0 (whatever the order in
-- which transactions took their ids or committed) is not visible in S0, so its rows count as
-- changed once they are visible in S1; rows of transactions visible in S0 were in what S0 read.
-- The first clause only lets the index below skip what is older than any transaction S0 could
-- not see. Transaction ids are 64-bit (xid8): they never wrap.

-- A constant default first (no rewrite of the table: existing rows read 0, older than any
-- snapshot), then the writer's transaction id for every new row (inserts, COPY): no trigger on
-- the insert path. Updates set it in their SET list (src/ingest/merge.ts); the statement trigger
-- below stamps the rows of any other update (psql, a rehash).
ALTER TABLE orders ADD COLUMN change_xid xid8 NOT NULL DEFAULT '0'::xid8;
ALTER TABLE orders ALTER COLUMN change_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX orders_by_change ON orders (organization_id, change_xid);

-- An order version retired by an update or a deletion: its customer (whose orders a delta reads
-- again, U2) or, for an anonymous order, its key. A statement retiring more than 50,000 orders
-- leaves one row with neither (store_id NULL): "everything changed", a rebuild. Rows older than
-- two days are pruned; a snapshot that old is rebuilt instead of brought up to date.
CREATE TABLE order_retirements (
  organization_id bigint NOT NULL,
  retired_xid     xid8 NOT NULL DEFAULT pg_current_xact_id(),
  retired_at      timestamptz NOT NULL DEFAULT now(),
  store_id        bigint,
  external_id     text,
  customer        text
);
CREATE INDEX order_retirements_by_change ON order_retirements (organization_id, retired_xid);
CREATE INDEX order_retirements_by_age ON order_retirements (retired_at);

CREATE FUNCTION record_order_retirements() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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

CREATE TRIGGER orders_delete_records_retirements AFTER DELETE ON orders
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION record_order_retirements();
CREATE TRIGGER orders_update_records_retirements AFTER UPDATE ON orders
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION record_order_retirements();

-- An update that did not stamp its rows (a writer other than ours) is stamped here, once: the
-- stamping update's own rows carry the stamp, so its trigger finds nothing left to do.
CREATE FUNCTION stamp_order_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows WHERE change_xid <> pg_current_xact_id()) THEN
    UPDATE orders o SET change_xid = pg_current_xact_id()
    FROM new_rows n
    WHERE n.change_xid <> pg_current_xact_id() AND o.organization_id = n.organization_id
      AND o.store_id = n.store_id AND o.external_id = n.external_id;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER orders_update_stamps_changes AFTER UPDATE ON orders
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION stamp_order_changes();
