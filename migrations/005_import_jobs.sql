-- Issue 7, finding 7: every import is a job with a heartbeat. The browser's imports run in the
-- background and their page reads this row; the CLI's imports are recorded the same way. A job
-- whose heartbeat stopped (killed process) is marked failed and its staged rows are removed.
-- `kind` leaves room for the store connector's synchronizations.
CREATE TABLE import_jobs (
  id              uuid PRIMARY KEY,
  organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  kind            text NOT NULL DEFAULT 'file' CHECK (kind IN ('file', 'connector')),
  origin          text NOT NULL CHECK (origin IN ('cli', 'web', 'api', 'connector')),
  file_name       text CHECK (length(file_name) <= 255),
  state           text NOT NULL DEFAULT 'queued'
                  CHECK (state IN ('queued', 'running', 'succeeded', 'refused', 'failed')),
  lines_read      bigint NOT NULL DEFAULT 0,
  orders_per_second integer NOT NULL DEFAULT 0,
  imported        bigint NOT NULL DEFAULT 0,
  updated         bigint NOT NULL DEFAULT 0,
  rejected        bigint NOT NULL DEFAULT 0,
  error_count     bigint NOT NULL DEFAULT 0,
  -- The first errors only (the page shows them; the count says how many there were).
  errors          jsonb NOT NULL DEFAULT '[]',
  message         text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  started_at      timestamptz,
  finished_at     timestamptz,
  heartbeat_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX import_jobs_by_organization ON import_jobs (organization_id, created_at DESC);
CREATE INDEX import_jobs_running ON import_jobs (heartbeat_at) WHERE state IN ('queued', 'running');

-- Staged rows are scratch space: no WAL for them, and PostgreSQL empties unlogged tables after a
-- crash, so a crash in the final step leaves nothing behind and recovery has nothing to replay.
ALTER TABLE import_customers SET UNLOGGED;
ALTER TABLE import_staging SET UNLOGGED;
