// Organizations: creation, subscription state (K3) and Report settings (S1, S2, S4).
import crypto from 'node:crypto';
import {
  DEDUCTIONS,
  DEFAULT_DEDUCTIONS,
  DEFAULT_EXCLUDED_STATUSES,
  type Deduction,
  type ReportSettings,
} from '../catalog.js';
import type { Database, Queryable } from '../db/database.js';
import { AppError, quoted } from '../errors.js';
import { refreshFirstOrders } from '../metrics/first-orders.js';
import { addDays, parseDay, todayUtc } from '../query/dates.js';

export type SubscriptionState = 'trialing' | 'active' | 'stopped';
export const SUBSCRIPTION_STATES: readonly SubscriptionState[] = ['trialing', 'active', 'stopped'];
export const TRIAL_DAYS = 14;

export interface Organization {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly currency: string;
  readonly subscriptionState: SubscriptionState;
  /** Last day of the trial (UTC), when trialing. */
  readonly trialEndsOn: string | null;
  readonly settings: ReportSettings;
}

export const ORGANIZATION_COLUMNS = `o.id, o.slug, o.name, o.currency, o.subscription_state, o.trial_ends_on,
  o.excluded_statuses, o.deductions`;

/** A stored value that breaks the schema's promises: a bug or a hand edit, never a client error. */
function corrupt(column: string, value: unknown): AppError {
  return new AppError(
    'INTERNAL',
    `organizations.${column} inattendu : ${quoted(JSON.stringify(value) ?? '')}`,
  );
}

function textArray(column: string, value: unknown): string[] {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  throw corrupt(column, value);
}

const isSubscriptionState = (value: unknown): value is SubscriptionState =>
  SUBSCRIPTION_STATES.some((state) => state === value);
const isDeduction = (value: string): value is Deduction => DEDUCTIONS.some((d) => d === value);

/** The one decoder of a row selected with ORGANIZATION_COLUMNS: checked, not cast. */
export function toOrganization(row: Record<string, unknown>): Organization {
  const state = row.subscription_state;
  if (!isSubscriptionState(state)) throw corrupt('subscription_state', state);
  const trialEndsOn = row.trial_ends_on;
  if (trialEndsOn !== null && typeof trialEndsOn !== 'string') throw corrupt('trial_ends_on', trialEndsOn);
  const deductions = textArray('deductions', row.deductions);
  if (!deductions.every(isDeduction)) throw corrupt('deductions', deductions);
  return {
    id: String(row.id),
    slug: String(row.slug),
    name: String(row.name),
    currency: String(row.currency),
    subscriptionState: state,
    trialEndsOn,
    settings: { excludedStatuses: textArray('excluded_statuses', row.excluded_statuses), deductions },
  };
}

/** K3: stopped, or a trial whose last day (UTC) has passed. */
export function isSubscriptionActive(org: Organization, today = todayUtc()): boolean {
  if (org.subscriptionState === 'stopped') return false;
  if (org.subscriptionState === 'trialing' && org.trialEndsOn !== null) return today <= org.trialEndsOn;
  return true;
}

export async function findOrganization(db: Queryable, slug: string): Promise<Organization> {
  const rows = await db.query(`SELECT ${ORGANIZATION_COLUMNS} FROM organizations o WHERE o.slug = $1`, [
    slug,
  ]);
  if (!rows[0]) throw new AppError('NOT_FOUND', `Organisation inconnue : « ${slug} »`);
  return toOrganization(rows[0]);
}

/** The slug of the oldest organization, if any (the demo's, when the demo seeded the database). */
export async function firstOrganizationSlug(db: Queryable): Promise<string | undefined> {
  const [row] = await db.query<{ slug: string }>('SELECT slug FROM organizations ORDER BY id LIMIT 1');
  return row?.slug;
}

export function slugify(name: string): string {
  const base = name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return base || 'organisation';
}

/** Longest organization name (finding 10): it shows in every page header. */
export const MAX_ORGANIZATION_NAME = 100;

export async function createOrganization(
  db: Queryable,
  input: { name: string; currency?: string; today?: string },
): Promise<Organization> {
  const name = input.name.trim();
  if (name === '') throw new AppError('INVALID_PARAMETER', 'Le nom de l’organisation est requis');
  if (name.length > MAX_ORGANIZATION_NAME) {
    throw new AppError(
      'INVALID_PARAMETER',
      `Nom d’organisation trop long : ${MAX_ORGANIZATION_NAME} caractères au plus`,
    );
  }
  const currency = (input.currency ?? 'EUR').toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) {
    throw new AppError(
      'INVALID_PARAMETER',
      `Devise invalide : « ${input.currency} » (code ISO 4217 attendu, ex. EUR)`,
    );
  }
  const trialEndsOn = addDays(input.today ?? todayUtc(), TRIAL_DAYS);
  const base = slugify(name);
  for (let n = 1; n <= MAX_SLUG_TRIES; n++) {
    const slug = slugCandidate(base, n);
    const rows = await db.query(
      `INSERT INTO organizations AS o (slug, name, currency, trial_ends_on, excluded_statuses, deductions)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (slug) DO NOTHING RETURNING ${ORGANIZATION_COLUMNS}`,
      [slug, name, currency, trialEndsOn, [...DEFAULT_EXCLUDED_STATUSES], [...DEFAULT_DEDUCTIONS]],
    );
    if (rows[0]) return toOrganization(rows[0]);
  }
  throw new AppError('INTERNAL', `aucun identifiant libre pour « ${base} »`);
}

/**
 * Issue 18: a slug costs a bounded number of tries, however many organizations share a name
 * (every name without a Latin letter is « organisation »): acme, acme-2 … acme-5, then a random
 * suffix, where two tries in a row meeting taken ones is all but impossible.
 */
const SEQUENTIAL_SLUGS = 5;
const MAX_SLUG_TRIES = SEQUENTIAL_SLUGS + 5;
const slugCandidate = (base: string, n: number): string =>
  n === 1
    ? base
    : n <= SEQUENTIAL_SLUGS
      ? `${base}-${n}`
      : `${base}-${crypto.randomBytes(4).toString('hex')}`;

export async function setSubscription(
  db: Queryable,
  organizationId: string,
  state: string,
  trialEndsOn?: string,
): Promise<void> {
  if (!SUBSCRIPTION_STATES.includes(state as SubscriptionState)) {
    throw new AppError(
      'INVALID_PARAMETER',
      `État d’abonnement invalide : « ${state} » (trialing, active ou stopped)`,
    );
  }
  if (trialEndsOn !== undefined && parseDay(trialEndsOn) === undefined) {
    throw new AppError('INVALID_PARAMETER', `Date de fin d’essai invalide : « ${trialEndsOn} » (AAAA-MM-JJ)`);
  }
  await db.query(
    `UPDATE organizations SET subscription_state = $2,
       trial_ends_on = CASE WHEN $2 = 'trialing' THEN coalesce($3::date, trial_ends_on) ELSE trial_ends_on END
     WHERE id = $1`,
    [organizationId, state, trialEndsOn ?? null],
  );
}

export function parseDeductions(values: readonly string[]): Deduction[] {
  const unknown = values.filter((v) => !DEDUCTIONS.includes(v as Deduction));
  if (unknown.length > 0) {
    throw new AppError(
      'INVALID_PARAMETER',
      `Déductions inconnues : ${unknown.join(', ')} (choix possibles : ${DEDUCTIONS.join(', ')})`,
    );
  }
  return DEDUCTIONS.filter((d) => values.includes(d));
}

/** Bounds of the excluded statuses (finding 10), the same as an imported status's length. */
export const MAX_EXCLUDED_STATUSES = 200;
export const MAX_STATUS_LENGTH = 200;

function checkedStatuses(statuses: string[]): string[] {
  if (statuses.length > MAX_EXCLUDED_STATUSES) {
    throw new AppError(
      'INVALID_PARAMETER',
      `Trop de statuts exclus : ${MAX_EXCLUDED_STATUSES} au plus (reçu ${statuses.length})`,
    );
  }
  const tooLong = statuses.find((s) => s.length > MAX_STATUS_LENGTH);
  if (tooLong !== undefined) {
    throw new AppError(
      'INVALID_PARAMETER',
      `Statut trop long : « ${quoted(tooLong)} » (${MAX_STATUS_LENGTH} caractères au plus)`,
    );
  }
  return statuses;
}

/** Shopify's financial statuses of an order whose payment was voided or whose authorization ran out. */
const SHOPIFY_UNPAID_STATUSES = ['voided', 'expired'];

/**
 * The statuses the Report settings page offers (S1): those seen in the organization's orders, the
 * default exclusions and the ones already excluded, in code-point order.
 */
export async function excludableStatuses(db: Queryable, organization: Organization): Promise<string[]> {
  const seen = await db.query<{ status: string }>(
    'SELECT DISTINCT status FROM orders WHERE organization_id = $1 ORDER BY status LIMIT $2',
    [organization.id, MAX_EXCLUDED_STATUSES],
  );
  // A Shopify store's payment that never came (issue 21): offered before such an order arrives.
  const shopify = await db.query(
    `SELECT 1 FROM store_connections WHERE organization_id = $1 AND platform = 'shopify' LIMIT 1`,
    [organization.id],
  );
  const all = new Set([
    ...seen.map((r) => r.status),
    ...DEFAULT_EXCLUDED_STATUSES,
    ...(shopify.length > 0 ? SHOPIFY_UNPAID_STATUSES : []),
    ...organization.settings.excludedStatuses,
  ]);
  return [...all].sort();
}

/** S4: settings apply to every past order; first orders (U2) are recomputed in the same transaction. */
export async function updateReportSettings(
  db: Database,
  organizationId: string,
  change: { excludedStatuses?: readonly string[]; deductions?: readonly string[] },
): Promise<void> {
  const deductions = change.deductions === undefined ? null : parseDeductions(change.deductions);
  const excluded =
    change.excludedStatuses === undefined ? null : checkedStatuses([...new Set(change.excludedStatuses)]);
  await db.transaction(async (tx) => {
    await tx.query(
      `UPDATE organizations SET excluded_statuses = coalesce($2::text[], excluded_statuses),
         deductions = coalesce($3::text[], deductions) WHERE id = $1`,
      [organizationId, excluded, deductions],
    );
    if (excluded !== null) await refreshFirstOrders(tx, organizationId, 'all');
  });
}
