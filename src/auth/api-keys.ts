// K2, K5, K6: storing, listing and revoking API keys. The full key is returned once, by createApiKey.
import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { displayPrefix, hashKey, mintKey } from './keys.js';

export interface ApiKeySummary {
  readonly name: string;
  readonly prefix: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
}

export const MAX_KEY_NAME = 100;

export async function createApiKey(
  db: Queryable,
  organizationId: string,
  name: string,
): Promise<{ key: string; prefix: string }> {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > MAX_KEY_NAME) {
    throw new AppError('INVALID_PARAMETER', `Donnez un nom à la clé (${MAX_KEY_NAME} caractères au plus).`);
  }
  const key = mintKey();
  await db.query('INSERT INTO api_keys (organization_id, name, prefix, key_hash) VALUES ($1, $2, $3, $4)', [
    organizationId,
    trimmed,
    displayPrefix(key),
    hashKey(key),
  ]);
  return { key, prefix: displayPrefix(key) };
}

export async function listApiKeys(db: Queryable, organizationId: string): Promise<ApiKeySummary[]> {
  const rows = await db.query<{
    name: string;
    prefix: string;
    created_at: Date;
    last_used_at: Date | null;
    revoked_at: Date | null;
  }>(
    `SELECT name, prefix, created_at, last_used_at, revoked_at FROM api_keys
     WHERE organization_id = $1 ORDER BY created_at, id`,
    [organizationId],
  );
  return rows.map((r) => ({
    name: r.name,
    prefix: r.prefix,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  }));
}

/** Revokes the organization's active key with that display prefix; the next request with it gets 401 (K4). */
export async function revokeApiKey(db: Queryable, organizationId: string, prefix: string): Promise<void> {
  const rows = await db.query(
    `UPDATE api_keys SET revoked_at = now()
     WHERE organization_id = $1 AND prefix = $2 AND revoked_at IS NULL RETURNING id`,
    [organizationId, prefix],
  );
  if (rows.length === 0) {
    throw new AppError(
      'NOT_FOUND',
      `Aucune clé active avec le préfixe « ${prefix} » dans cette organisation`,
    );
  }
}
