-- Imports on a PostgreSQL server write an organization's orders in one transaction of many
-- statements (src/ingest/stream-merge.ts). Each statement bumped data_version (migration 007): a
-- new version of the organization's row each time, and every later lookup of that row in the
-- transaction (the foreign key check of each first order it writes) walked through all of them.
-- One bump per organization and transaction is enough: other sessions see the change when the
-- transaction commits, never before. A transaction-local setting lists the organizations this
-- transaction has bumped; a savepoint rolled back takes its bump and its entry back together.
CREATE FUNCTION bump_data_version(organization_ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  bumped bigint[] := coalesce(nullif(current_setting('sales_metrics.data_version_bumped', true), ''), '{}');
  todo bigint[] := ARRAY(SELECT unnest(organization_ids) EXCEPT SELECT unnest(bumped));
BEGIN
  IF cardinality(todo) = 0 THEN
    RETURN;
  END IF;
  UPDATE organizations SET data_version = data_version + 1 WHERE id = ANY (todo);
  PERFORM set_config('sales_metrics.data_version_bumped', (bumped || todo)::text, true);
END $$;

CREATE OR REPLACE FUNCTION bump_data_version_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM bump_data_version(ARRAY(SELECT DISTINCT organization_id FROM new_rows));
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION bump_data_version_old() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM bump_data_version(ARRAY(SELECT DISTINCT organization_id FROM old_rows));
  RETURN NULL;
END $$;
