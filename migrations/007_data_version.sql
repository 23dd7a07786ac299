-- Issue 9: each organization's data version, bumped in the same transaction as every change to its
-- orders or stores, whatever code path (import, re-import, CLI, web, psql) made it. The columnar
-- report engine (src/metrics/columnar) answers from an in-memory snapshot only while the version
-- it was built at is still the current one, so a snapshot is never stale (X1) on any instance.
-- Statement-level triggers with transition tables: one UPDATE per statement and organization,
-- not one per row, so a million-order import pays for it once.
ALTER TABLE organizations ADD COLUMN data_version bigint NOT NULL DEFAULT 0;

CREATE FUNCTION bump_data_version_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE organizations SET data_version = data_version + 1
  WHERE id IN (SELECT DISTINCT organization_id FROM new_rows);
  RETURN NULL;
END $$;

CREATE FUNCTION bump_data_version_old() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE organizations SET data_version = data_version + 1
  WHERE id IN (SELECT DISTINCT organization_id FROM old_rows);
  RETURN NULL;
END $$;

-- A trigger with transition tables has one event: inserts and updates see the new rows (an update
-- never moves an order to another organization: organization_id is part of its key), deletes the
-- old ones.
CREATE TRIGGER orders_insert_bumps_data_version AFTER INSERT ON orders
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_version_new();
CREATE TRIGGER orders_update_bumps_data_version AFTER UPDATE ON orders
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_version_new();
CREATE TRIGGER orders_delete_bumps_data_version AFTER DELETE ON orders
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_version_old();
CREATE TRIGGER stores_insert_bumps_data_version AFTER INSERT ON stores
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_version_new();
CREATE TRIGGER stores_update_bumps_data_version AFTER UPDATE ON stores
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_version_new();
CREATE TRIGGER stores_delete_bumps_data_version AFTER DELETE ON stores
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_version_old();

-- Report settings (S1, S2) are not part of a snapshot: they travel in each report's plan, read
-- afresh by authentication on every request, so changing them needs no new version.
