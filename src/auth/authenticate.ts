// K3/K4: who is calling. Every request looks its key up afresh (no key cache), so revocation and
// subscription changes apply to the very next request on every instance (src/auth/key-lookup.ts).
import type { Queryable } from '../db/database.js';
import { appError, AppError } from '../errors.js';
import { isSubscriptionActive, toOrganization, type Organization } from '../domain/organizations.js';
import type { KeyLookup } from './key-lookup.js';
import { hashKey, isWellFormedKey } from './keys.js';

export interface ApiCaller {
  readonly keyId: string;
  readonly organization: Organization;
  /**
   * organizations.data_version as the key's lookup read it: after the request arrived (K4's
   * statement starts after it), so every change committed before the request is in it (X1).
   */
  readonly dataVersion: string;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

const unauthenticated = (message: string): AppError => new AppError('UNAUTHENTICATED', message);

/** The key of an Authorization header, or an AppError saying what is wrong with the header. */
export function bearerKey(header: string | undefined): string {
  if (header === undefined || header.trim() === '') {
    throw unauthenticated('En-tête Authorization manquant : envoyez « Authorization: Bearer <clé API> »');
  }
  const match = BEARER.exec(header);
  if (!match?.[1]) {
    throw unauthenticated(
      'Schéma d’authentification non pris en charge : envoyez « Authorization: Bearer <clé API> »',
    );
  }
  return match[1];
}

export async function authenticateApiKey(lookUp: KeyLookup, header: string | undefined): Promise<ApiCaller> {
  const key = bearerKey(header);
  // K1: a malformed key or a bad checksum is refused without a database lookup.
  if (!isWellFormedKey(key)) throw unauthenticated('Clé API mal formée');
  const row = await lookUp(hashKey(key));
  if (!row || row.revoked_at !== null) throw unauthenticated('Clé API inconnue ou révoquée');
  const organization = toOrganization(row);
  if (!isSubscriptionActive(organization)) {
    throw appError('SUBSCRIPTION_INACTIVE');
  }
  return { keyId: String(row.key_id), organization, dataVersion: String(row.data_version) };
}

/** K5: "last used" is written at most once a minute per key, without delaying the response. */
export class LastUsedRecorder {
  private readonly writtenAt = new Map<string, number>();

  constructor(
    private readonly db: Queryable,
    private readonly onError: (error: unknown) => void,
  ) {}

  record(caller: ApiCaller, now = Date.now()): void {
    const previous = this.writtenAt.get(caller.keyId);
    if (previous !== undefined && now - previous < 60_000) return;
    this.writtenAt.set(caller.keyId, now);
    if (this.writtenAt.size > 100_000) this.writtenAt.clear();
    this.db
      .query(
        `UPDATE api_keys SET last_used_at = now() WHERE organization_id = $1 AND id = $2
           AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
        [caller.organization.id, caller.keyId],
      )
      .catch(this.onError);
  }
}
