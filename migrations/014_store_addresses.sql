-- Issue 18, finding 5: a store's address is now read with the WHATWG URL rules (scheme and host
-- lower-cased, international host in punycode, default port dropped) and refused with user info
-- (src/db/store-address.ts). Addresses stored before were only stripped of trailing slashes, so
-- `HTTPS://E.EXAMPLE.FR` and `https://e.example.fr` could be two stores, and credentials could
-- show in the store dimension. SQL has no WHATWG URL parser: the organizations with stores are
-- listed here, and src/db/store-address-migration.ts (run by migrate) rewrites each one's
-- addresses, merging the stores that turn out to be one, then empties this list.
CREATE TABLE store_address_pending (
  organization_id bigint PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE
);
INSERT INTO store_address_pending (organization_id) SELECT DISTINCT organization_id FROM stores;
