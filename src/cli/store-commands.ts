// `sales-metrics store …` (SPEC 12 and issue 11): add a store by its address, connect one through
// its platform's REST API (the secret on standard input, never in the arguments: they show in the
// process list and the shell history), list connected stores with their sync status, sync one now,
// disconnect one.
import { AppError } from '../errors.js';
import { findOrganization } from '../domain/organizations.js';
import { addStore } from '../domain/stores.js';
import type { StoreConnection } from '../domain/store-connections.js';
import { exportRate, runRate } from '../ingest/connectors/connections.js';
import { readStdin, required, text, withDatabase, type Command } from './command-tools.js';

/**
 * The connections and their platforms' connectors (Shopify, WooCommerce, the sync and its
 * metrics) are loaded by the commands that use them, not by every `sales-metrics` process
 * (issue 28: a command's start).
 */
const connections = () => import('../domain/store-connections.js');
const connectors = () => import('../ingest/connectors/registry.js');

const iso = (date: Date | null) => date?.toISOString() ?? null;

function statusOf(c: StoreConnection) {
  return {
    address: c.address,
    platform: c.platform,
    phase: c.phase,
    state: c.failures >= 3 ? 'error' : c.running ? 'running' : c.phase === 'backfill' ? 'backfilling' : 'ok',
    orders: c.orders,
    backfill:
      c.phase === 'backfill'
        ? {
            read: c.runOrders,
            estimatedTotal: c.backfillTotal,
            ordersPerSecond: runRate(c),
            exportObjects: c.exportObjects,
            exportObjectsPerSecond: exportRate(c),
          }
        : null,
    lastSuccessAt: iso(c.lastSuccessAt),
    nextSyncAt: iso(c.nextSyncAt),
    failures: c.failures,
    lastError: c.lastError,
    skippedOrders: c.skippedOrders,
  };
}

/** A Shopify bulk operation's objects so far, while no order is read from it yet. */
const exportText = (b: { read: number; exportObjects: number | null; exportObjectsPerSecond: number }) =>
  b.exportObjects === null || b.read > 0
    ? ''
    : `  export ${b.exportObjects} objets (${b.exportObjectsPerSecond} objets/s)`;

function statusLine(c: ReturnType<typeof statusOf>): string {
  const backfill = c.backfill
    ? `  historique ${c.backfill.read}/${c.backfill.estimatedTotal ?? '?'} (${c.backfill.ordersPerSecond} commandes/s)${exportText(c.backfill)}`
    : '';
  const error = c.lastError ? `  erreur (${c.failures}×) : ${c.lastError}` : '';
  return `${c.address}  ${c.platform}  ${c.state}  ${c.orders} commandes${backfill}  dernière réussite ${c.lastSuccessAt ?? 'jamais'}  prochaine ${c.nextSyncAt ?? '—'}${error}`;
}

const needsStdin = (flag: string, what: string) =>
  new AppError('INVALID_PARAMETER', `${what} se donne sur l’entrée standard : ajoutez --${flag}`);

/**
 * The secrets of `store connect`, on standard input (never in the arguments: they show in the
 * process list and the shell history), one a line: WooCommerce's consumer secret; Shopify's access
 * token or client secret, then its webhook secret when --webhook-secret-stdin is given.
 */
async function secretsOf(context: Parameters<Command['run']>[0], platform: string) {
  const flagged = (name: string) => context.values[name] === true;
  const lines = async () => (await readStdin()).slice(0, 4096).split(/\r?\n/);
  if (platform !== 'shopify') {
    if (!flagged('consumer-secret-stdin')) throw needsStdin('consumer-secret-stdin', 'le secret client');
    const [secret = ''] = await lines();
    return { consumerKey: required(context, 'consumer-key'), consumerSecret: secret };
  }
  const clientId = context.values['client-id'];
  if (typeof clientId === 'string' ? !flagged('client-secret-stdin') : !flagged('access-token-stdin')) {
    throw typeof clientId === 'string'
      ? needsStdin('client-secret-stdin', 'le secret client')
      : needsStdin('access-token-stdin', 'le jeton d’accès (ou --client-id avec --client-secret-stdin)');
  }
  const [secret = '', webhookSecret = ''] = await lines();
  return {
    consumerKey: typeof clientId === 'string' ? clientId : '',
    consumerSecret: secret,
    ...(flagged('webhook-secret-stdin') ? { webhookSecret } : {}),
  };
}

/** The longest wait `store sync` sits through when the store limits its requests (issue 26 item 2). */
const MANUAL_WAIT_S = 300;

/**
 * How `store sync` treats a store that limits its requests (Shopify's cost bucket, a 429's
 * Retry-After): it waits up to MANUAL_WAIT_S in place, saying so on the terminal; a longer wait
 * is handed over to the server's worker. The seconds waited go in the final answer.
 */
function patientWaits(context: Parameters<Command['run']>[0]) {
  const waits = {
    waitedS: 0,
    handedOverInS: undefined as number | undefined,
    patience: {
      maxRetryAfterS: MANUAL_WAIT_S,
      onWait: ({ seconds, waited }: { seconds: number; waited: boolean }) => {
        if (seconds <= 0) return;
        if (!waited) {
          waits.handedOverInS = seconds;
          return;
        }
        waits.waitedS += seconds;
        context.progress(`La boutique limite les requêtes : attente de ${seconds} s avant de continuer…`);
      },
    },
  };
  return waits;
}

export const STORE_COMMANDS: Record<string, Command> = {
  'store add': {
    options: { org: text, address: text },
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const address = await addStore(db, org.id, required(context, 'address'));
        context.print({ address }, `Boutique connectée : ${address}`);
        return 0;
      }),
  },
  'store connect': {
    options: {
      org: text,
      platform: text,
      address: text,
      'consumer-key': text,
      'consumer-secret-stdin': { type: 'boolean' },
      'access-token-stdin': { type: 'boolean' },
      'client-id': text,
      'client-secret-stdin': { type: 'boolean' },
      'webhook-secret-stdin': { type: 'boolean' },
    },
    run: async (context) => {
      const platform = typeof context.values.platform === 'string' ? context.values.platform : 'woocommerce';
      const secrets = await secretsOf(context, platform);
      const { config } = context;
      return withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const [{ connectStore }, { storeSyncSetup }] = await Promise.all([connections(), connectors()]);
        const connected = await connectStore(db, storeSyncSetup(config), {
          organizationId: org.id,
          platform,
          address: required(context, 'address'),
          ...secrets,
        });
        // The server's public address is known only from PUBLIC_URL (this command may run
        // elsewhere, with another HOST and PORT): without it, the path alone, to append to it.
        const webhookUrl = config.publicUrl
          ? `${config.publicUrl}${connected.webhookPath}`
          : connected.webhookPath;
        const where = config.publicUrl
          ? `  URL de livraison : ${webhookUrl}`
          : `  URL de livraison : l’adresse publique du serveur suivie de ${webhookUrl} (ou définissez PUBLIC_URL)`;
        const secret = connected.webhookSecret;
        context.print(
          {
            address: connected.address,
            webhookUrl,
            ...(secret ? { webhookSecret: secret } : {}),
          },
          [
            `Boutique connectée : ${connected.address}`,
            'Le serveur importe son historique en arrière-plan (ou maintenant : sales-metrics store sync).',
            ...(secret === undefined
              ? ['Webhooks Shopify (orders/create, orders/updated, orders/delete, format JSON) :', where]
              : [
                  'Webhooks WooCommerce (Commande créée, mise à jour, supprimée) :',
                  where,
                  `  Secret : ${secret}`,
                  'Ce secret ne sera plus affiché : copiez-le maintenant.',
                ]),
          ].join('\n'),
        );
        return 0;
      });
    },
  },
  'store list': {
    options: { org: text },
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const { listConnections } = await connections();
        const stores = (await listConnections(db, org.id)).map(statusOf);
        context.print(
          { stores },
          stores.length ? stores.map(statusLine).join('\n') : 'Aucune boutique connectée par API',
        );
        return 0;
      }),
  },
  'store sync': {
    options: { org: text, address: text },
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const waits = patientWaits(context);
        const [{ syncStoreNow }, { storeSyncSetup }] = await Promise.all([connections(), connectors()]);
        const result = await syncStoreNow(
          db,
          storeSyncSetup(context.config, undefined, waits.patience),
          org.id,
          required(context, 'address'),
          (n) => context.progress(`${n} commandes synchronisées`),
        );
        context.progress('');
        if (!result.ran) {
          context.print(
            { address: result.address, running: true },
            `Une synchronisation de ${result.address} est déjà en cours (serveur) : une nouvelle passe, avec recherche des commandes supprimées, est demandée.`,
          );
          return 0;
        }
        const done = { address: result.address, written: result.written, waitedS: waits.waitedS };
        if (result.error !== undefined && waits.handedOverInS !== undefined) {
          // The store asks for a longer wait than a person should sit through: the server's
          // worker takes the pass up then (its next try is set to that time), and we say so.
          context.print(
            { ...done, handedOver: true, retryInS: waits.handedOverInS },
            `La boutique ${result.address} limite les requêtes pour encore ${waits.handedOverInS} s : la suite de la synchronisation est confiée au serveur (sales-metrics serve), qui la reprendra à ce moment-là. ${result.written} commande(s) écrite(s) jusqu’ici.`,
          );
          return 0;
        }
        if (result.error !== undefined) {
          context.warn(`Synchronisation de ${result.address} échouée : ${result.error}`);
          if (context.json) context.print({ ...done, error: result.error }, '');
          return 1;
        }
        context.print(
          done,
          `Synchronisation de ${result.address} terminée : ${result.written} commande(s) écrite(s) ou retirée(s)${waits.waitedS > 0 ? ` (${waits.waitedS} s d’attente demandée par la boutique)` : ''}`,
        );
        return 0;
      }),
  },
  'store disconnect': {
    options: { org: text, address: text, 'remove-orders': { type: 'boolean' } },
    run: (context) =>
      withDatabase(context, async (db) => {
        const org = await findOrganization(db, required(context, 'org'));
        const removeOrders = context.values['remove-orders'] === true;
        const { disconnectStore } = await connections();
        const done = await disconnectStore(db, org.id, required(context, 'address'), { removeOrders });
        context.print(
          done,
          removeOrders
            ? `Boutique déconnectée : ${done.address} ; ${done.removedOrders} commande(s) supprimée(s)`
            : `Boutique déconnectée : ${done.address} ; ses commandes sont conservées`,
        );
        return 0;
      }),
  },
};
