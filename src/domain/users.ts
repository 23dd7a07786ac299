// People who log into the web application: sign-up (the web page) and the operator's
// `user create` (the CLI) check addresses and passwords with the same rules, here.
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { hashPassword } from './passwords.js';

export const MIN_PASSWORD_LENGTH = 10;
/** Longer passwords are refused before hashing: hashing megabytes would be a denial of service. */
export const MAX_PASSWORD_LENGTH = 1024;
/** The longest address SMTP can deliver to (RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The address as it is stored (trimmed, lower case), or the French reason it is refused. */
export function checkEmail(email: string): { email: string } | { error: string } {
  const normalized = email.trim().toLowerCase();
  if (normalized.length > MAX_EMAIL_LENGTH)
    return { error: `Adresse e-mail trop longue : ${MAX_EMAIL_LENGTH} caractères au plus.` };
  if (!EMAIL.test(normalized)) return { error: 'Adresse e-mail invalide.' };
  return { email: normalized };
}

/** The French reason a password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `${MIN_PASSWORD_LENGTH} caractères au moins.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `${MAX_PASSWORD_LENGTH} caractères au plus.`;
  return undefined;
}

/** Creates the user (or reuses the one with that email) and makes them a member of the organization. */
export async function addUserToOrganization(
  db: Database,
  organizationId: string,
  email: string,
  password: string,
): Promise<{ userId: string; created: boolean }> {
  const checked = checkEmail(email);
  if ('error' in checked)
    throw new AppError('INVALID_PARAMETER', `${checked.error} (« ${email.slice(0, 80)} »)`);
  const problem = passwordProblem(password);
  if (problem) throw new AppError('INVALID_PARAMETER', `Mot de passe refusé : ${problem}`);
  const normalized = checked.email;
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

/**
 * Gives a member of the organization a new password (the operator's `user password`, issue 30:
 * the demo login's password is shown once, like its key). Every session of that person ends in
 * the same transaction: whoever held the old password, or a browser left signed in with it, is
 * signed out at their next request. Returns how many sessions ended.
 */
export async function resetUserPassword(
  db: Database,
  organizationId: string,
  email: string,
  password: string,
): Promise<{ sessionsEnded: number }> {
  const checked = checkEmail(email);
  if ('error' in checked)
    throw new AppError('INVALID_PARAMETER', `${checked.error} (« ${email.slice(0, 80)} »)`);
  const problem = passwordProblem(password);
  if (problem) throw new AppError('INVALID_PARAMETER', `Mot de passe refusé : ${problem}`);
  const passwordHash = await hashPassword(password);
  return db.transaction(async (tx) => {
    // Only a member of this organization: an operator of one organization resets no one else.
    const updated = await tx.query<{ id: string }>(
      `UPDATE users u SET password_hash = $3 FROM memberships m
       WHERE u.email = $2 AND m.user_id = u.id AND m.organization_id = $1 RETURNING u.id`,
      [organizationId, checked.email, passwordHash],
    );
    const user = updated[0];
    if (!user)
      throw new AppError('NOT_FOUND', `Aucun utilisateur « ${checked.email} » dans cette organisation`);
    const ended = await tx.query('DELETE FROM sessions WHERE user_id = $1 RETURNING id', [user.id]);
    return { sessionsEnded: ended.length };
  });
}
