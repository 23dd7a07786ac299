// Web sessions: a random token in an HttpOnly cookie, only its hash in the database.
import crypto from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { ORGANIZATION_COLUMNS, toOrganization, type Organization } from '../domain/organizations.js';
import { hashPassword, verifyPassword } from '../domain/passwords.js';

/** The cookie that carries the session token (HttpOnly; only its hash is stored). */
export const SESSION_COOKIE = 'sm_session';
export const SESSION_DAYS = 14;

export interface WebSession {
  readonly id: string;
  readonly userId: string;
  readonly email: string;
  readonly organization: Organization;
  /** Every organization the person belongs to, to switch between them. */
  readonly memberships: readonly { slug: string; name: string }[];
}

const hashToken = (token: string): Buffer => crypto.createHash('sha256').update(token).digest();

export async function createSession(db: Queryable, userId: string, organizationId: string): Promise<string> {
  const token = crypto.randomBytes(32).toString('base64url');
  // Expired sessions go as new ones come (finding 14): the table holds live sessions only.
  await db.query('DELETE FROM sessions WHERE expires_at <= now()');
  await db.query(
    `INSERT INTO sessions (token_hash, user_id, organization_id, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(days => $4))`,
    [hashToken(token), userId, organizationId, SESSION_DAYS],
  );
  return token;
}

export async function findSession(db: Queryable, token: string | undefined): Promise<WebSession | undefined> {
  if (!token || token.length > 100) return undefined;
  const rows = await db.query(
    `SELECT s.id AS session_id, u.id AS user_id, u.email, ${ORGANIZATION_COLUMNS}
     FROM sessions s JOIN users u ON u.id = s.user_id JOIN organizations o ON o.id = s.organization_id
     WHERE s.token_hash = $1 AND s.expires_at > now()
       AND EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id AND m.organization_id = o.id)`,
    [hashToken(token)],
  );
  const row = rows[0];
  if (!row) return undefined;
  const memberships = await db.query<{ slug: string; name: string }>(
    `SELECT o.slug, o.name FROM memberships m JOIN organizations o ON o.id = m.organization_id
     WHERE m.user_id = $1 ORDER BY o.name, o.slug`,
    [row.user_id],
  );
  return {
    id: String(row.session_id),
    userId: String(row.user_id),
    email: String(row.email),
    organization: toOrganization(row),
    memberships,
  };
}

export async function endSession(db: Queryable, token: string | undefined): Promise<void> {
  if (token) await db.query('DELETE FROM sessions WHERE token_hash = $1', [hashToken(token)]);
}

/** Moves the session to another organization the person belongs to. */
export async function switchOrganization(db: Queryable, session: WebSession, slug: string): Promise<void> {
  const rows = await db.query(
    `UPDATE sessions s SET organization_id = o.id FROM organizations o
     JOIN memberships m ON m.organization_id = o.id AND m.user_id = $2
     WHERE s.id = $1 AND o.slug = $3 RETURNING s.id`,
    [session.id, session.userId, slug],
  );
  if (rows.length === 0) throw new AppError('NOT_FOUND', `Organisation inconnue : « ${slug} »`);
}

// Verifying against a fixed hash when the email is unknown keeps the answer time the same.
let dummyHash: Promise<string> | undefined;

/** The user and their first organization when the password is right; undefined otherwise. */
export async function checkLogin(
  db: Database,
  email: string,
  password: string,
): Promise<{ userId: string; organizationId: string } | undefined> {
  const rows = await db.query<{ id: string; password_hash: string; organization_id: string | null }>(
    `SELECT u.id, u.password_hash,
       (SELECT m.organization_id FROM memberships m WHERE m.user_id = u.id ORDER BY m.created_at LIMIT 1) AS organization_id
     FROM users u WHERE u.email = $1`,
    [email.trim().toLowerCase()],
  );
  const user = rows[0];
  dummyHash ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  const ok = await verifyPassword(password, user?.password_hash ?? (await dummyHash));
  if (!ok || !user || user.organization_id === null) return undefined;
  return { userId: String(user.id), organizationId: String(user.organization_id) };
}
