-- Web application sessions: only the SHA-256 of the session token is stored.
CREATE TABLE sessions (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  token_hash      bytea NOT NULL UNIQUE,
  user_id         bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The organization the person is working in now (they may belong to several).
  organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL
);
CREATE INDEX sessions_by_user ON sessions (user_id);
