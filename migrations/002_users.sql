-- People who log into the web application, and the organizations they belong to.
CREATE TABLE users (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email         text NOT NULL UNIQUE,          -- trimmed, lower-cased
  password_hash text NOT NULL,                 -- scrypt, see src/auth/passwords.ts
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id         bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);
