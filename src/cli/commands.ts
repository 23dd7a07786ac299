// The sub-commands. Each opens the database like the server does (joining a running server's
// embedded database through its socket, X1), calls one core function, prints the result.
// Issue 28 (a command's start): what only some commands use — the import and its metrics, the
// report engines, the store connectors, the server — is loaded by those commands when they run,
// not by every `sales-metrics` process (half a CPU-second each, more than most commands' work).
import type { ReportSettings } from '../catalog.js';
import { AppError } from '../errors.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../auth/api-keys.js';
import {
  createOrganization,
  findOrganization,
  setSubscription,
  updateReportSettings,
} from '../domain/organizations.js';
import { addUserToOrganization, resetUserPassword } from '../domain/users.js';
import type { ImportResult } from '../ingest/import.js';
import {
  list,
  readStdin,
  required,
  text,
  withDatabase,
  type Command,
  type CommandContext,
} from './command-tools.js';
import type { ImportSnapshot } from '../metrics/columnar/import-snapshot.js';
import { prepareReports, snapshotWhileWriting, type Refresh } from './prepare-reports.js';
import { STORE_COMMANDS } from './store-commands.js';

export type { CommandContext } from './command-tools.js';

function settingsText(settings: ReportSettings): string {
  return `Statuts exclus : ${settings.excludedStatuses.join(', ') || '(aucun)'}\nDéductions : ${settings.deductions.join(', ') || '(aucune)'}`;
}

function importSummary(r: { imported: number; updated: number; rejected: number }): string {
  return `${r.imported} commandes importées, ${r.updated} remplacées, ${r.rejected} lignes refusées`;
}

/**
 * A password is read on standard input only: in the arguments it would be seen by every user of
 * the machine (ps, /proc) and kept in the shell's history. One trailing line end is the shell's.
 */
async function passwordFromStdin(context: CommandContext): Promise<string> {
  if (context.values['password-stdin'] !== true) {
    throw new AppError(
      'INVALID_PARAMETER',
      'le mot de passe se donne sur l’entrée standard : ajoutez --password-stdin',
    );
  }
  return (await readStdin()).replace(/\r?\n$/, '');
}

export const COMMANDS: Record<string, Command> = {
  serve: {
    options: {},
    async run(context) {
      // Loaded here only: the server's modules (Fastify, the web pages, the report engines) take
      // half a second to load, which every other command, a small import above all, would pay.
      const { serve } = await import('../serve.js');
      await serve(context.config);
      return 0;
    },
  },
  migrate: {
    options: {},
    run: (context) =>
      withDatabase(context, async (db) => {
        const { migrate } = await import('../db/migrate.js');
        const applied = await migrate(db);
        context.print(
          { applied },
          applied.length ? `Migrations appliquées : ${applied.join(', ')}` : 'Schéma à jour',
        );
        return 0;
      }),
  },
  'org create': {
    options: { name: text, currency: text },
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await createOrganization(db, {
          name: required(context, 'name'),
          currency: typeof context.values.currency === 'string' ? context.values.currency : undefined,
        });
        context.print(
          { slug: org.slug },
          `Organisation créée : ${org.slug} (essai jusqu’au ${org.trialEndsOn})`,
        );
        return 0;
      }),
  },
  import: {
    options: { org: text, 'skip-invalid': { type: 'boolean' } },
    positionals: true,
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        if (context.positionals.length === 0)
          throw new AppError('INVALID_PARAMETER', 'aucun fichier à importer');
        const { importOrderFile, refreshAfterImport, refusalMessage } = await import('../ingest/import.js');
        const total = { imported: 0, updated: 0, rejected: 0 };
        let failed = false;
        // Issue 27: a first import's snapshot built as its orders are written (the last file's:
        // any file after the first finds orders, and a snapshot of it alone would be stale).
        let built: ImportSnapshot | undefined;
        // The last file's statistics refreshed by prepareReports, with its snapshot saved meanwhile.
        let refresh: Refresh | undefined;
        for (const [n, file] of context.positionals.entries()) {
          built = await snapshotWhileWriting(context.config, db, org.id);
          const last = built !== undefined && n === context.positionals.length - 1;
          const result: ImportResult = await importOrderFile(db, org.id, file, {
            ...(built ? { written: built } : {}),
            ...(last ? { refreshStatistics: false } : {}),
            skipInvalid: context.values['skip-invalid'] === true,
            onProgress: (p) =>
              context.progress(
                `${file} : ${p.lines} lignes lues, ${Math.round(p.ordersPerSecond)} commandes/s`,
              ),
          });
          context.progress('');
          if (result.refused) {
            failed = true;
            context.warn(`${file} : ${refusalMessage(result)}`);
          } else if (last) {
            const written = result.imported + result.updated;
            refresh = (beside) => refreshAfterImport(db, org.id, written, beside);
          }
          for (const e of result.errors) context.warn(`${file}:${e.line} : ${e.field} : ${e.message}`);
          if (result.errorCount > result.errors.length)
            context.warn(`${file} : … et ${result.errorCount - result.errors.length} autres erreurs`);
          total.imported += result.imported;
          total.updated += result.updated;
          total.rejected += result.rejected;
        }
        // SPEC 12: stdout holds exactly the three counts; refused lines went to stderr above.
        const { imported, updated, rejected } = total;
        context.print({ imported, updated, rejected }, importSummary(total));
        // Issue 28, item 1: the first report after a large import takes the fast path.
        context.progress('Préparation des rapports…');
        const preparation = await prepareReports(
          context.config,
          db,
          org.id,
          imported + updated,
          built,
          refresh,
        );
        context.progress('');
        if (preparation.prepared)
          context.warn(
            `Rapports prêts : ${preparation.orders} commandes en mémoire et enregistrées (${preparation.ms} ms)`,
          );
        else if (preparation.reason !== 'small' && preparation.reason !== 'no-snapshots')
          context.warn(`Rapports non préparés (${preparation.reason}) : le serveur les préparera.`);
        return failed ? 1 : 0;
      }),
  },
  'key create': {
    options: { org: text, name: text },
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const { key, prefix } = await createApiKey(db, org.id, required(context, 'name'));
        context.print(
          { key, prefix },
          `${key}\n\nCette clé ne sera plus affichée : copiez-la maintenant (préfixe ${prefix}).`,
        );
        return 0;
      }),
  },
  'key list': {
    options: { org: text },
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const keys = (await listApiKeys(db, org.id)).map((k) => ({
          name: k.name,
          prefix: k.prefix,
          createdAt: k.createdAt.toISOString(),
          lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
          state: k.revokedAt ? 'revoked' : 'active',
        }));
        const lines = keys.map(
          (k) =>
            `${k.prefix}  ${k.state.padEnd(7)}  créée ${k.createdAt}  utilisée ${k.lastUsedAt ?? 'jamais'}  ${k.name}`,
        );
        context.print({ keys }, lines.length ? lines.join('\n') : 'Aucune clé');
        return 0;
      }),
  },
  'key revoke': {
    options: { org: text, prefix: text },
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const prefix = required(context, 'prefix');
        await revokeApiKey(db, org.id, prefix);
        context.print({ revoked: prefix }, `Clé ${prefix} révoquée`);
        return 0;
      }),
  },
  'settings set': {
    options: { org: text, 'excluded-statuses': text, deductions: text },
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        await updateReportSettings(db, org.id, {
          excludedStatuses: list(context.values['excluded-statuses']),
          deductions: list(context.values.deductions),
        });
        const { settings } = await findOrganization(db, org.slug);
        context.print(settings, settingsText(settings));
        return 0;
      }),
  },
  'settings show': {
    options: { org: text },
    run: (context) =>
      withDatabase(context, async (db) => {
        const { settings } = await findOrganization(db, required(context, 'org'));
        context.print(settings, settingsText(settings));
        return 0;
      }),
  },
  'subscription set': {
    options: { org: text, state: text, 'trial-ends': text },
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const trialEnds = context.values['trial-ends'];
        await setSubscription(
          db,
          org.id,
          required(context, 'state'),
          typeof trialEnds === 'string' ? trialEnds : undefined,
        );
        const updated = await findOrganization(db, org.slug);
        context.print(
          { state: updated.subscriptionState, trialEndsOn: updated.trialEndsOn },
          `Abonnement : ${updated.subscriptionState}${updated.subscriptionState === 'trialing' ? ` (essai jusqu’au ${updated.trialEndsOn ?? '—'})` : ''}`,
        );
        return 0;
      }),
  },
  'user create': {
    options: { org: text, email: text, 'password-stdin': { type: 'boolean' } },
    run: async (context) => {
      const password = await passwordFromStdin(context);
      return withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const email = required(context, 'email');
        const { created } = await addUserToOrganization(db, org.id, email, password);
        context.print(
          { email: email.toLowerCase(), created },
          created
            ? `Utilisateur créé : ${email}`
            : `Utilisateur existant ajouté à ${org.slug} (mot de passe inchangé)`,
        );
        return 0;
      });
    },
  },
  'user password': {
    options: { org: text, email: text, 'password-stdin': { type: 'boolean' } },
    run: async (context) => {
      const password = await passwordFromStdin(context);
      return withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const email = required(context, 'email').toLowerCase();
        const { sessionsEnded } = await resetUserPassword(db, org.id, email, password);
        context.print(
          { email, sessionsEnded },
          `Mot de passe de ${email} changé ; ${sessionsEnded} session(s) fermée(s)`,
        );
        return 0;
      });
    },
  },
  ...STORE_COMMANDS,
};
