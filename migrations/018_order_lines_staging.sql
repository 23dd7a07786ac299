-- Section 15 (L1): an order's lines wait in import_staging with it, as one JSON array keyed by
-- order_lines' column names (NULL: no lines), until the merge expands them (src/ingest/merge.ts).
-- One staged row an order whatever its lines: the connector's pages and the small files stage
-- here; a file import's own table has the same column (src/ingest/staging.ts).
ALTER TABLE import_staging ADD COLUMN lines jsonb;
