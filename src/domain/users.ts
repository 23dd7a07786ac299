// People who log into the web application (the operator's `user create`).
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { hashPassword } from './passwords.js';

export const MIN_PASSWORD_LENGTH = 10;

/** Creates the user (or reuses the one with that email) and makes them a member of the organization. */
export async function addUserToOrganization(
  db: Database,
  organizationId: string,
  email: string,
  password: string,
): Promise<{ userId: string; created: boolean }> {
  const normalized = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalized)) {
    throw new AppError('INVALID_PARAMETER', `Adresse e-mail invalide : « ${email} »`);
  }
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError(
      'INVALID_PARAMETER',
      `Mot de passe trop court : ${MIN_PASSWORD_LENGTH} caractères au moins`,
    );
  }
  const passwordHash = await hashPassword(password);
  return db.transaction(async (tx) => {
    const inserted = await tx.query<{ id: string }>(
      'INSERT INTO users (email, password_hash) VALUES ($1, $2) ON CONFLICT (email) DO NOTHING RETURNING id',
      [normalized, passwordHash],
    );
    const existing =
      inserted[0] ??
      (await tx.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [normalized]))[0];
    if (!existing) throw new AppError('INTERNAL', 'utilisateur introuvable après création');
    await tx.query(
      'INSERT INTO memberships (organization_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING',
      [organizationId, existing.id],
    );
    return { userId: String(existing.id), created: inserted.length > 0 };
  });
}
