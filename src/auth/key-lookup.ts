// K4 at the speed of the framework (issue 9, item 5): every request still reads its key from the
// database, but the requests that arrive while a lookup is running share the next one, a single
// statement for all their keys, instead of queueing one statement each (PGlite answers one
// statement at a time; a PostgreSQL round trip costs more than the rest of a cached answer).
//
// Why no revocation is missed: a request joins only a statement that has not started yet, and
// never one already running. So the statement that answers it starts after the request arrived,
// hence after any revocation, subscription or settings change committed before it arrived, and
// its snapshot (one per statement, READ COMMITTED, on either engine) sees that change. On every
// instance alike: nothing is remembered from one statement to the next.
import type { Queryable, Row } from '../db/database.js';
import { ORGANIZATION_COLUMNS } from '../domain/organizations.js';

/**
 * The api_keys row of a key hash, joined with its organization and its data version (issue 29,
 * item 2: a report's one round trip fewer, src/api/api-authentication.ts), or undefined when unknown.
 */
export type KeyLookup = (keyHash: Buffer) => Promise<Row | undefined>;

interface Waiter {
  readonly resolve: (row: Row | undefined) => void;
  readonly reject: (error: unknown) => void;
}

/** Distinct keys read by one statement at most; more wait for the next one. */
export const MAX_KEYS_PER_LOOKUP = 500;

export function batchedKeyLookup(db: Queryable): KeyLookup {
  // Keys waiting for the next statement, by hash (hex); several requests may carry the same key.
  let waiting = new Map<string, Waiter[]>();
  let running = false;

  async function runNext(): Promise<void> {
    while (waiting.size > 0) {
      const batch = new Map<string, Waiter[]>();
      for (const [hash, waiters] of waiting) {
        if (batch.size === MAX_KEYS_PER_LOOKUP) break;
        batch.set(hash, waiters);
      }
      for (const hash of batch.keys()) waiting.delete(hash);
      if (waiting.size === 0) waiting = new Map(); // a fresh map once drained keeps it small
      try {
        const rows = await db.query(
          `SELECT k.key_hash, k.id AS key_id, k.revoked_at, ${ORGANIZATION_COLUMNS}, o.data_version::text AS data_version
           FROM api_keys k JOIN organizations o ON o.id = k.organization_id
           WHERE k.key_hash = ANY($1::bytea[])`,
          [[...batch.keys()].map((hex) => Buffer.from(hex, 'hex'))],
        );
        const found = new Map(
          rows.map((row) => [
            Buffer.isBuffer(row.key_hash) ? row.key_hash.toString('hex') : String(row.key_hash),
            row,
          ]),
        );
        for (const [hash, waiters] of batch) for (const w of waiters) w.resolve(found.get(hash));
      } catch (error) {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(error);
      }
    }
    running = false;
  }

  return (keyHash) =>
    new Promise<Row | undefined>((resolve, reject) => {
      const hash = keyHash.toString('hex');
      const waiters = waiting.get(hash);
      if (waiters) waiters.push({ resolve, reject });
      else waiting.set(hash, [{ resolve, reject }]);
      if (running) return;
      // Started at once: the requests read from the sockets after it share the next one. (Started
      // on the next turn, it waited behind whatever that turn ran first: beside another
      // organization's heavy answers, one of their slices every request, issue 29 item 2.)
      running = true;
      void runNext();
    });
}
