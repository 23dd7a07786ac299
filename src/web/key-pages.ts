// Settings → API Keys, as the reference describes it: list, create (full value shown once), revoke.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  createApiKey,
  listApiKeys,
  MAX_KEY_NAME,
  revokeApiKey,
  type ApiKeySummary,
} from '../auth/api-keys.js';
import { isAppError } from '../errors.js';
import { formatMoment } from './format.js';
import { html, type Html } from './html.js';
import { csrfField, page, type PageContext } from './layout.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CreateKeyForm, KeysQuery, RevokeKeyForm, RevokeQuery } from './forms.js';
import type { WebTools } from './web-tools.js';

export const frenchDate = (date: Date | null): string => formatMoment(date, 'Jamais');

function createDialog(context: PageContext, error?: string, name = '', open = Boolean(error)): Html {
  return html`<dialog id="create-key" ${open ? ' open data-modal' : ''} aria-labelledby="create-key-title">
    <form method="post" action="/settings/api-keys">
      ${csrfField(context)}
      <h2 id="create-key-title">Créer une clé</h2>
      <label for="key-name">Nom de la clé</label>
      <input
        id="key-name"
        name="name"
        type="text"
        required
        maxlength="100"
        value="${name}"
        placeholder="Ex. : Tableur des ventes"
        ${error ? html` aria-invalid="true" aria-describedby="key-name-error"` : ''}
      />
      ${error ? html`<p class="error" id="key-name-error">${error}</p>` : ''}
      <p class="muted">Une clé par outil : vous pourrez la révoquer sans gêner les autres.</p>
      <div class="actions">
        <button>Confirmer</button><button class="secondary" data-close type="button">Annuler</button>
      </div>
    </form>
  </dialog>`;
}

function keyTable(context: PageContext, keys: ApiKeySummary[]): Html {
  if (keys.length === 0) return html`<p class="muted">Aucune clé pour l’instant.</p>`;
  return html`<div class="table-wrap">
    <table class="stack">
      <thead>
        <tr>
          <th>Nom</th>
          <th>Préfixe</th>
          <th>Créée le</th>
          <th>Dernière utilisation</th>
          <th><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${keys.map(
          (k, i) =>
            html`<tr data-prefix="${k.prefix}">
              <td data-label="Nom">${k.name}</td>
              <td data-label="Préfixe"><code>${k.prefix}…</code></td>
              <td data-label="Créée le">${frenchDate(k.createdAt)}</td>
              <td data-label="Dernière utilisation">${frenchDate(k.lastUsedAt)}</td>
              <td>
                ${
                  k.revokedAt
                    ? html`<span class="muted">Révoquée le ${frenchDate(k.revokedAt)}</span>`
                    : html`<a
                          class="button danger"
                          href="/settings/api-keys/revoke?prefix=${encodeURIComponent(k.prefix)}"
                          data-dialog="revoke-${i}"
                          >Révoquer</a
                        >
                        <dialog id="revoke-${i}" aria-labelledby="revoke-${i}-title">
                          ${revokeForm(context, k, `revoke-${i}-title`)}
                        </dialog>`
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function revokeForm(context: PageContext, key: ApiKeySummary, titleId: string): Html {
  return html`<form method="post" action="/settings/api-keys/revoke">
    ${csrfField(context)}
    <input type="hidden" name="prefix" value="${key.prefix}" />
    <h2 id="${titleId}">Révoquer « ${key.name} » ?</h2>
    <p>
      Toutes les intégrations qui utilisent la clé <code>${key.prefix}…</code> cesseront de fonctionner
      immédiatement (réponse 401). Cette action est définitive.
    </p>
    <div class="actions">
      <button class="danger">Révoquer la clé</button><a href="/settings/api-keys" data-close>Annuler</a>
    </div>
  </form>`;
}

export async function keyPages(plain: FastifyInstance, tools: WebTools): Promise<void> {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>();
  const session = tools.session;
  const guarded = { preHandler: tools.requireSession };
  const guardedPost = { preHandler: [tools.requireSession, app.csrfProtection] };

  async function listPage(
    request: FastifyRequest,
    context: PageContext,
    extra: { notice?: string; created?: { key: string; name: string }; error?: string; name?: string },
  ) {
    const keys = await listApiKeys(tools.db, session(request).organization.id);
    const body = html` ${
        extra.created
          ? html`<dialog open data-modal id="new-key" aria-labelledby="new-key-title">
              <h2 id="new-key-title">Clé « ${extra.created.name} » créée</h2>
              <p class="alert" role="alert">
                Copiez cette clé maintenant : elle ne sera plus jamais affichée. Une clé perdue ne se récupère
                pas ; créez-en une autre et révoquez l’ancienne.
              </p>
              <code class="key" id="new-key-value">${extra.created.key}</code>
              <div class="actions">
                <button type="button" data-copy="new-key-value">Copier</button
                ><a class="button secondary" href="/settings/api-keys">J’ai copié la clé, fermer</a>
              </div>
              <p class="muted">
                Utilisez-la depuis un serveur, un script ou un outil, jamais dans le code d’une page web :
                <code>Authorization: Bearer &lt;clé&gt;</code>.
              </p>
            </dialog>`
          : ''
      }
      <div class="card">
        <p>
          Les clés API donnent accès en lecture aux chiffres de
          <strong>${session(request).organization.name}</strong> par l’API.
        </p>
        <a class="button" href="/settings/api-keys/new" data-dialog="create-key">Créer une clé</a>
        ${createDialog(context, extra.error, extra.name)}
      </div>
      ${keyTable(context, keys)}`;
    return page(context, 'Clés API', body, extra.notice);
  }

  app.get(
    '/settings/api-keys',
    { ...guarded, schema: { querystring: KeysQuery } },
    async (request, reply) => {
      const query = request.query;
      const notice = query.welcome
        ? 'Compte créé. Créez votre première clé API pour appeler l’API.'
        : query.revoked
          ? `Clé ${query.revoked}… révoquée.`
          : undefined;
      return tools.render(reply, await listPage(request, tools.context(request, reply), { notice }));
    },
  );

  // Without JavaScript, "Créer une clé" leads here.
  app.get('/settings/api-keys/new', guarded, async (request, reply) => {
    const context = tools.context(request, reply);
    return tools.render(reply, page(context, 'Créer une clé', createDialog(context, undefined, '', true)));
  });

  app.post(
    '/settings/api-keys',
    { ...guardedPost, schema: { body: CreateKeyForm } },
    async (request, reply) => {
      const name = (request.body.name ?? '').trim();
      const context = tools.context(request, reply);
      const created = await createApiKey(tools.db, session(request).organization.id, name).catch(
        (error: unknown) => {
          if (isAppError(error) && error.code === 'INVALID_PARAMETER') return error;
          throw error;
        },
      );
      if (isAppError(created)) {
        // The core's rule and message (K6 names), shown next to the field; the name is cut to its bound.
        const shown = name.slice(0, MAX_KEY_NAME);
        return tools.render(
          reply,
          await listPage(request, context, { error: created.message, name: shown }),
          400,
        );
      }
      const { key } = created;
      return tools.render(reply, await listPage(request, context, { created: { key, name } }));
    },
  );

  // Without JavaScript, "Révoquer" leads to this confirmation page.
  app.get(
    '/settings/api-keys/revoke',
    { ...guarded, schema: { querystring: RevokeQuery } },
    async (request, reply) => {
      const prefix = request.query.prefix ?? '';
      const key = (await listApiKeys(tools.db, session(request).organization.id)).find(
        (k) => k.prefix === prefix && !k.revokedAt,
      );
      const context = tools.context(request, reply);
      if (!key)
        return tools.render(
          reply,
          page(
            context,
            'Révoquer une clé',
            html`<p class="alert">Aucune clé active avec ce préfixe.</p>
              <a href="/settings/api-keys">Retour</a>`,
          ),
          404,
        );
      return tools.render(
        reply,
        page(
          context,
          'Révoquer une clé',
          html`<div class="card">${revokeForm(context, key, 'revoke-title')}</div>`,
        ),
      );
    },
  );

  app.post(
    '/settings/api-keys/revoke',
    { ...guardedPost, schema: { body: RevokeKeyForm } },
    async (request, reply) => {
      const prefix = request.body.prefix ?? '';
      await revokeApiKey(tools.db, session(request).organization.id, prefix); // only this organization's keys
      return reply.redirect(`/settings/api-keys?revoked=${encodeURIComponent(prefix)}`, 303);
    },
  );
}
