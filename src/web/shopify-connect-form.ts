// « Connecter une boutique Shopify » on the Boutiques page (issue 21): the shop's address and
// either a custom app's Admin API access token, or a Dev Dashboard app's client id and secret;
// optionally the app's API secret key, which signs its webhooks. Secrets are password fields,
// never sent back: a refused form comes back with the address alone.
import { html, type Html } from './html.js';
import { csrfField, type PageContext } from './layout.js';

export interface ShownConnectError {
  readonly address: string;
  readonly error: string;
  readonly field: string;
}

const invalid = (shown: ShownConnectError | undefined, field: string) =>
  shown?.field === field ? html` aria-invalid="true" aria-describedby="shopify-connect-error"` : '';

export function shopifyConnectForm(context: PageContext, shown: ShownConnectError | undefined): Html {
  return html`<form
    method="post"
    action="/settings/stores/connect"
    class="card"
    id="shopify-connect-form"
    autocomplete="off"
  >
    ${csrfField(context)}
    <h2>Connecter une boutique Shopify</h2>
    <p class="muted">
      Dans Shopify : Paramètres → Applications → Développer des applications, une application avec les
      permissions read_orders et read_all_orders (les commandes de plus de 60 jours), puis son jeton d’accès
      de l’API Admin (shpat_…) ; ou, pour une application du Dev Dashboard, son identifiant et son secret
      client. Le service ne fait que lire les commandes ; il ne modifie rien dans la boutique.
    </p>
    <input type="hidden" name="platform" value="shopify" />
    <label for="shopify-address">Adresse de la boutique Shopify</label>
    <input
      id="shopify-address"
      name="address"
      type="url"
      required
      placeholder="https://NOM.myshopify.com"
      value="${shown?.address ?? ''}"
      ${invalid(shown, 'address')}
    />
    <label for="shopify-access-token">Jeton d’accès de l’API Admin (shpat_…)</label>
    <input
      id="shopify-access-token"
      name="access_token"
      type="password"
      autocomplete="new-password"
      ${invalid(shown, 'credentials')}
    />
    <details>
      <summary>Ou une application du Dev Dashboard (identifiant et secret client)</summary>
      <label for="shopify-client-id">Identifiant client</label>
      <input id="shopify-client-id" name="client_id" type="text" spellcheck="false" />
      <label for="shopify-client-secret">Secret client</label>
      <input id="shopify-client-secret" name="client_secret" type="password" autocomplete="new-password" />
    </details>
    <label for="shopify-webhook-secret">Secret de l’application, qui signe ses webhooks (facultatif)</label>
    <input id="shopify-webhook-secret" name="webhook_secret" type="password" autocomplete="new-password" />
    ${shown ? html`<p class="error" id="shopify-connect-error" role="alert">${shown.error}</p>` : ''}
    <div class="actions"><button>Connecter la boutique Shopify</button></div>
  </form>`;
}

/** The connection request's secrets from the form, by platform. */
export function formSecrets(body: {
  platform?: string | undefined;
  consumer_key?: string | undefined;
  consumer_secret?: string | undefined;
  access_token?: string | undefined;
  client_id?: string | undefined;
  client_secret?: string | undefined;
  webhook_secret?: string | undefined;
}): { consumerKey: string; consumerSecret: string; webhookSecret?: string } {
  if (body.platform !== 'shopify') {
    return { consumerKey: body.consumer_key ?? '', consumerSecret: body.consumer_secret ?? '' };
  }
  const clientId = body.client_id?.trim() ?? '';
  const webhookSecret = body.webhook_secret?.trim() ?? '';
  return {
    consumerKey: clientId,
    consumerSecret: clientId === '' ? (body.access_token ?? '') : (body.client_secret ?? ''),
    ...(webhookSecret === '' ? {} : { webhookSecret }),
  };
}
