// DEMO=1: on an empty database, a demo organization with two years of orders (DEMO_DAYS), a login
// and a key.
import crypto from 'node:crypto';
import type { Writable } from 'node:stream';
import type { Database } from '../db/database.js';
import { createApiKey } from '../auth/api-keys.js';
import { createOrganization, firstOrganizationSlug, setSubscription } from '../domain/organizations.js';
import { addStore } from '../domain/stores.js';
import { addUserToOrganization } from '../domain/users.js';
import { importOrderRecords } from '../ingest/import.js';
import { todayUtc } from '../query/dates.js';
import { DEFAULT_DEMO_STORES, generateDemoOrders } from './generate.js';

export interface DemoAccess {
  readonly created: boolean;
  readonly slug: string;
  /** Shown once, on the start that created the demo. */
  readonly apiKey?: string;
  readonly email?: string;
  readonly password?: string;
  readonly orders?: number;
  /** The days of orders it was made with (DEMO_DAYS). */
  readonly days?: number;
}

export const DEMO_EMAIL = 'demo@sales-metrics.test';

/** The banner's figures as a French reader writes them: « 46 162 », « 22,8 » (issue 30, item 2). */
const COUNT = new Intl.NumberFormat('fr-FR', { maximumFractionDigits: 0 });
const SECONDS = new Intl.NumberFormat('fr-FR', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** The span of the demo's orders in words: « deux ans » by default (730 days), else its days. */
const span = (days: number) =>
  days === 730 ? 'deux ans' : `${COUNT.format(days)} jour${days > 1 ? 's' : ''}`;

export async function seedDemo(db: Database, days: number, log: (line: string) => void): Promise<DemoAccess> {
  const existing = await firstOrganizationSlug(db);
  if (existing !== undefined) return { created: false, slug: existing };
  log(`Base vide : création de la démo (${span(days)} de commandes)…`);
  const org = await createOrganization(db, { name: 'Démo', currency: 'EUR' });
  await setSubscription(db, org.id, 'active');
  for (const address of DEFAULT_DEMO_STORES) await addStore(db, org.id, address);
  const started = Date.now();
  // Issue 30, item 7: nothing after now, so that today grows as the day goes; lines from the
  // stores' catalogues (issue 27), for the reports by product.
  const demo = generateDemoOrders({ endDate: todayUtc(), days, until: Date.now(), lines: true });
  const result = await importOrderRecords(db, org.id, demo, {
    onProgress: (p) =>
      log(`  … ${COUNT.format(p.lines)} commandes générées (${COUNT.format(p.ordersPerSecond)}/s)`),
  });
  log(
    `  ${COUNT.format(result.imported)} commandes importées en ${SECONDS.format((Date.now() - started) / 1000)} s`,
  );
  const { key } = await createApiKey(db, org.id, 'Démo (curl)');
  // SPEC 13: a demo login too, for the web application (shown once, like the key).
  const password = crypto.randomBytes(12).toString('base64url');
  await addUserToOrganization(db, org.id, DEMO_EMAIL, password);
  return {
    created: true,
    slug: org.slug,
    apiKey: key,
    email: DEMO_EMAIL,
    password,
    orders: result.imported,
    days,
  };
}

/** Writes the demo's access to out: the terminal (stderr), never the JSON logs (finding 9). */
export function printDemo(demo: DemoAccess, baseUrl: string, out: Writable): void {
  const lines = [
    ``,
    `Sales Metrics écoute sur ${baseUrl}`,
    `Documentation de l’API : ${baseUrl}/api/docs (OpenAPI : ${baseUrl}/api/openapi.json)`,
  ];
  if (demo.created && demo.apiKey) {
    lines.push(
      ``,
      `Démo créée : organisation « ${demo.slug} », ${COUNT.format(demo.orders ?? 0)} commandes sur ${span(demo.days ?? 730)}.`,
      `Clé API de démo (affichée cette fois seulement) : ${demo.apiKey}`,
      `Connexion de démo (application web) : ${demo.email} / ${demo.password}`,
      ``,
      `Essayez :`,
      `  curl -s -H 'Authorization: Bearer ${demo.apiKey}' '${baseUrl}/api/reports/catalog'`,
      `  curl -s -H 'Authorization: Bearer ${demo.apiKey}' '${baseUrl}/api/reports/tabular?metrics=orders,net_revenue,average_order_value&dimensions=store'`,
      `  curl -s -H 'Authorization: Bearer ${demo.apiKey}' -H 'Accept: text/csv' '${baseUrl}/api/reports/tabular?metrics=orders,net_revenue&dimensions=date,store&granularity=month'`,
    );
  } else {
    lines.push(
      ``,
      `Démo déjà présente (organisation « ${demo.slug} ») : sa clé et le mot de passe de`,
      `sa connexion (${DEMO_EMAIL}) ne sont plus affichables.`,
      `Nouvelle clé : npx sales-metrics key create --org ${demo.slug} --name "Ma clé"`,
      `Nouveau mot de passe (10 caractères au moins, tapé sans écho) :`,
      `  read -rs MDP && printf '%s' "$MDP" | npx sales-metrics user password --org ${demo.slug} --email ${DEMO_EMAIL} --password-stdin`,
    );
  }
  out.write(`${lines.join('\n')}\n\n`);
}
