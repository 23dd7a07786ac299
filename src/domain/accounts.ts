// Sign-up, the one use case that creates a person and their organization (issue 7, finding 3).
// One transaction, and the database's unique address decides: two parallel sign-ups with one
// address give one account, and the second person never gets into the first one's organization.
// The answer is the same whether the address was free or not, so the page cannot be used to
// learn who has an account: no session is opened, the person logs in with their password.
import type { Database } from '../db/database.js';
import { createOrganization, MAX_ORGANIZATION_NAME } from './organizations.js';
import { hashPassword } from './passwords.js';
import { checkEmail, passwordProblem } from './users.js';

export interface SignUpInput {
  readonly organization: string;
  readonly email: string;
  readonly password: string;
}

export type SignUpField = keyof SignUpInput;

export type SignUpResult =
  /** The form is wrong; nothing was written. Says nothing of existing accounts. */
  | { readonly accepted: false; readonly errors: Partial<Record<SignUpField, string>> }
  /** Done, or the address already had an account: the caller must answer both the same way. */
  | { readonly accepted: true; readonly created: boolean };

export function signUpProblems(input: SignUpInput): Partial<Record<SignUpField, string>> {
  const errors: Partial<Record<SignUpField, string>> = {};
  const name = input.organization.trim();
  if (name === '') errors.organization = 'Le nom de l’organisation est requis.';
  else if (name.length > MAX_ORGANIZATION_NAME)
    errors.organization = `${MAX_ORGANIZATION_NAME} caractères au plus.`;
  const email = checkEmail(input.email);
  if ('error' in email) errors.email = email.error;
  const password = passwordProblem(input.password);
  if (password) errors.password = password;
  return errors;
}

export async function signUp(db: Database, input: SignUpInput): Promise<SignUpResult> {
  const errors = signUpProblems(input);
  const email = checkEmail(input.email);
  if (Object.keys(errors).length > 0 || 'error' in email) return { accepted: false, errors };
  // Hashed whether or not the address is taken, so both answers take the same time.
  const passwordHash = await hashPassword(input.password);
  const created = await db.transaction(async (tx) => {
    const [user] = await tx.query<{ id: string }>(
      'INSERT INTO users (email, password_hash) VALUES ($1, $2) ON CONFLICT (email) DO NOTHING RETURNING id',
      [email.email, passwordHash],
    );
    if (!user) return false; // taken: nothing else is written, the existing account is untouched
    const organization = await createOrganization(tx, { name: input.organization });
    await tx.query('INSERT INTO memberships (organization_id, user_id) VALUES ($1, $2)', [
      organization.id,
      user.id,
    ]);
    return true;
  });
  return { accepted: true, created };
}
