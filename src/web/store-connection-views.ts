// Connected stores on the Boutiques page (issue 11, item 5): per store, what a shop owner needs to
// read at a glance, in plain French: the backfill's progress (orders so far, the store's estimate,
// the rate), the last successful sync, the next one, the last error; and the one-time webhook card.
import type { StoreConnection } from '../ingest/connectors/connections.js';
import { exportRate, FAILURES_FOR_ERROR, runRate } from '../ingest/connectors/connections.js';
import { formatCount, formatMoment, plural } from './format.js';
import { html, type Html } from './html.js';
import { csrfField, type PageContext } from './layout.js';

const PLATFORM_LABELS = { woocommerce: 'WooCommerce', shopify: 'Shopify' } as const;
const count = formatCount;
const when = (date: Date | null) => formatMoment(date);

/** The connection's state in one sentence. */
export function connectionState(
  connection: StoreConnection,
  now = Date.now(),
): { text: string; alert: boolean } {
  if (connection.failures >= FAILURES_FOR_ERROR) {
    return {
      text: `En erreur : ${connection.lastError ?? 'erreur inconnue'}. Nouvel essai le ${when(connection.nextSyncAt)}.`,
      alert: true,
    };
  }
  if (connection.failures > 0) {
    return {
      text: `Nouvel essai le ${when(connection.nextSyncAt)} après une erreur : ${connection.lastError ?? ''}`,
      alert: true,
    };
  }
  if (connection.phase === 'backfill') {
    const total = connection.backfillTotal === null ? '' : ` sur environ ${count(connection.backfillTotal)}`;
    const rate = runRate(connection, now);
    return {
      text: `Import de l’historique${connection.running ? ' en cours' : ' (reprise imminente)'} : ${exported(connection, now)}${count(connection.runOrders)} commandes lues${total}${rate > 0 ? `, ${count(rate)} commandes/s` : ''}.`,
      alert: false,
    };
  }
  return { text: connection.running ? 'Synchronisation en cours.' : 'À jour.', alert: false };
}

/** A Shopify bulk operation still gathering the history: its objects so far and their rate. */
function exported(connection: StoreConnection, now: number): string {
  if (connection.exportObjects === null || connection.runOrders > 0) return '';
  const rate = exportRate(connection, now);
  return `export de la boutique, ${count(connection.exportObjects)} objets rassemblés${rate > 0 ? ` (${count(rate)} objets/s)` : ''} ; `;
}

function actions(context: PageContext, connection: StoreConnection): Html {
  return html`<form method="post" action="/settings/stores/sync" class="inline">
      ${csrfField(context)}<input type="hidden" name="address" value="${connection.address}" />
      <button class="secondary">Synchroniser maintenant</button>
    </form>
    <form method="post" action="/settings/stores/disconnect" class="inline">
      ${csrfField(context)}<input type="hidden" name="address" value="${connection.address}" />
      <label class="inline"
        ><input type="checkbox" name="remove_orders" value="1" /> supprimer aussi ses commandes</label
      >
      <button class="danger">Déconnecter</button>
    </form>`;
}

/**
 * Every store of the organization, connected by its API or fed by files (issue 30, item 4: a store
 * without a connector is not « no store »), with its orders and how they arrive.
 */
function storesTable(
  stores: readonly { address: string; orders: number }[],
  connected: ReadonlySet<string>,
): Html {
  return html`<h3>Toutes les boutiques</h3>
    ${
      stores.length === 0
        ? html`<p class="muted" id="no-store">
            Aucune boutique pour l’instant : connectez-en une ci-dessous, ou importez un fichier de commandes.
          </p>`
        : html`<div class="table-wrap">
            <table class="stack" id="stores">
              <thead>
                <tr>
                  <th>Boutique</th>
                  <th>Commandes reçues par</th>
                  <th class="num">Commandes</th>
                </tr>
              </thead>
              <tbody>
                ${stores.map(
                  (s) =>
                    html`<tr>
                      <td data-label="Boutique">${s.address}</td>
                      <td data-label="Reçues par">
                        ${connected.has(s.address) ? 'Connexion (API)' : 'Import de fichiers'}
                      </td>
                      <td data-label="Commandes" class="num">${count(s.orders)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }`;
}

/**
 * Connected stores, then every store; `data-refresh` lets the page's script fetch it again every
 * few seconds while a sync runs.
 */
export function connectionsTable(
  context: PageContext,
  connections: readonly StoreConnection[],
  stores: readonly { address: string; orders: number }[],
): Html {
  const active = connections.some((c) => c.running || c.phase === 'backfill');
  return html`<div
    id="connections"
    data-refresh="/settings/stores/connections"
    data-active="${active ? '1' : '0'}"
  >
    ${
      connections.length === 0
        ? html`<h3>Connectées par leur API</h3>
            <p class="muted" id="no-connection">
              ${
                stores.length === 0
                  ? 'Aucune boutique connectée par son API.'
                  : `Aucune boutique connectée par son API : ${plural(stores.length, 'boutique reçoit ses', 'boutiques reçoivent leurs')} commandes par import de fichiers.`
              }
            </p>`
        : html`<h3>Connectées par leur API</h3>
            <div class="table-wrap">
              <table class="stack connections">
                <thead>
                  <tr>
                    <th>Boutique</th>
                    <th>État</th>
                    <th class="num">Commandes</th>
                    <th>Dernière réussite</th>
                    <th>Prochaine</th>
                    <th>Actions</th>
                  </tr>
                </thead>
                <tbody>
                  ${connections.map((c) => {
                    const state = connectionState(c);
                    const progress =
                      c.phase === 'backfill' && c.backfillTotal
                        ? html`<progress
                            max="${c.backfillTotal}"
                            value="${Math.min(c.runOrders, c.backfillTotal)}"
                          ></progress>`
                        : '';
                    return html`<tr data-store="${c.address}">
                      <td data-label="Boutique">
                        ${c.address}<br /><span class="muted"
                          >${PLATFORM_LABELS[c.platform]} · secret ••••${c.secretHint}</span
                        >
                      </td>
                      <td data-label="État" class="${state.alert ? 'error' : ''}">
                        ${state.text} ${progress}
                        ${c.lastSkipped ? html`<br /><span class="muted">${plural(c.skippedOrders, 'commande de l’historique non comptée', 'commandes de l’historique non comptées')} ; dernière : ${c.lastSkipped}</span>` : ''}
                      </td>
                      <td data-label="Commandes" class="num">${count(c.orders)}</td>
                      <td data-label="Dernière synchronisation réussie">${when(c.lastSuccessAt)}</td>
                      <td data-label="Prochaine">${c.running ? 'en cours' : when(c.nextSyncAt)}</td>
                      <td data-label="Actions">${actions(context, c)}</td>
                    </tr>`;
                  })}
                </tbody>
              </table>
            </div>`
    }
    ${storesTable(stores, new Set(connections.map((c) => c.address)))}
  </div>`;
}

/**
 * Shown once after connecting: where the store should send its webhooks; WooCommerce's with the
 * secret made for them (`secret`), Shopify's signed by the app's own secret (undefined).
 */
export function webhookCard(address: string, webhookUrl: string, secret: string | undefined): Html {
  if (secret === undefined) return shopifyWebhookCard(address, webhookUrl);
  return html`<section class="card" aria-labelledby="webhook-title" id="webhook-card">
    <h2 id="webhook-title">Boutique connectée : ${address}</h2>
    <p>
      L’historique des commandes est en cours d’import ; les changements sont ensuite lus toutes les quelques
      minutes. Pour des chiffres à jour à la seconde, ajoutez dans WooCommerce (Réglages → Avancé → Webhooks)
      trois webhooks, « Commande créée », « Commande mise à jour » et « Commande supprimée », avec :
    </p>
    <label for="webhook-url">URL de livraison</label>
    <code class="key" id="webhook-url">${webhookUrl}</code>
    <label for="webhook-secret">Secret</label>
    <code class="key" id="webhook-secret">${secret}</code>
    <p class="alert" role="alert">Ce secret n’est affiché qu’une fois : copiez-le maintenant.</p>
    <div class="actions">
      <button type="button" class="secondary" data-copy="webhook-secret">Copier le secret</button>
    </div>
  </section>`;
}

function shopifyWebhookCard(address: string, webhookUrl: string): Html {
  return html`<section class="card" aria-labelledby="webhook-title" id="webhook-card">
    <h2 id="webhook-title">Boutique connectée : ${address}</h2>
    <p>
      L’historique des commandes est en cours d’import ; les changements sont ensuite lus toutes les quelques
      minutes. Pour des chiffres à jour à la seconde, abonnez l’application aux webhooks « orders/create », «
      orders/updated » et « orders/delete » (format JSON) avec l’URL ci-dessous. Shopify les signe avec le
      secret de l’application : donnez-le à la connexion (sans lui, les livraisons sont refusées et seules les
      synchronisations régulières tiennent la boutique à jour).
    </p>
    <label for="webhook-url">URL de livraison</label>
    <code class="key" id="webhook-url">${webhookUrl}</code>
  </section>`;
}
