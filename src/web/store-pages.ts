// Settings → Stores: connected stores, adding one, importing an order file (same rules as the CLI, I1).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import multipart from '@fastify/multipart';
import { AppError } from '../errors.js';
import { addStore, listStores } from '../domain/stores.js';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { BackgroundImports } from '../ingest/background.js';
import type { ImportResult } from '../ingest/import.js';
import { findJob, type ImportJob } from '../ingest/jobs.js';
import { formatOfFileName } from '../ingest/read-orders.js';
import { formatCount, formatMoment, plural } from './format.js';
import { html, type Html } from './html.js';
import { recentImports } from '../domain/import-history.js';
import { importHistory } from './import-history-view.js';
import { csrfField, page, type PageContext } from './layout.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AddStoreForm, ConnectStoreForm, StoreActionForm } from './forms.js';
import { connectStore, disconnectStore, listConnections, requestSync } from '../domain/store-connections.js';
import { connectionsTable, webhookCard } from './store-connection-views.js';
import { formSecrets, shopifyConnectForm } from './shopify-connect-form.js';
import type { WebTools } from './web-tools.js';
import { AttemptLimit } from '../limits/attempt-limit.js';

const SHOWN_ERRORS = 200;
/** Store connection tries per organization and hour (each one calls the address typed). */
const CONNECT_ATTEMPTS_PER_HOUR = 20;
/** The longest uploaded file name kept (characters): what common file systems allow. */
const MAX_FILE_NAME = 255;

/** « 12 commandes importées, 1 remplacée, 0 ligne refusée ». */
const importCounts = (r: { imported: number; updated: number; rejected: number }): string =>
  `${plural(r.imported, 'commande importée', 'commandes importées')}, ${plural(r.updated, 'remplacée', 'remplacées')}, ${plural(r.rejected, 'ligne refusée', 'lignes refusées')}`;

/** What was imported, from where, when (issue 30, item 9: the result page names its file). */
function importSource(job: ImportJob): Html {
  const origin = job.origin === 'cli' ? 'en ligne de commande' : 'depuis cette page';
  return html`<p class="muted" id="import-source">
    Fichier <strong>${job.fileName ?? 'sans nom'}</strong>, importé ${origin} le
    ${formatMoment(job.createdAt)}. Chaque commande va dans la boutique de son champ <code>store</code>.
  </p>`;
}

function importReport(result: ImportResult, source: Html): Html {
  const errors = result.errors.slice(0, SHOWN_ERRORS);
  return html`<section class="card" aria-labelledby="import-result" id="import-report">
    <h2 id="import-result">${result.refused ? 'Import refusé' : 'Import terminé'}</h2>
    ${source}
    ${
      result.refused && result.fileError !== undefined
        ? html`<p class="alert" role="alert">
            Fichier refusé : ${result.fileError}. Aucune commande n’a été importée.
          </p>`
        : result.refused
          ? html`<p class="alert" role="alert">
              ${plural(result.rejected, 'ligne invalide', 'lignes invalides')} : aucune commande n’a été
              importée. Corrigez le fichier, ou cochez « importer les lignes valides ».
            </p>`
          : html`<p class="notice" role="status">${importCounts(result)}.</p>`
    }
    ${
      errors.length > 0
        ? html`<div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Ligne</th>
                    <th>Champ</th>
                    <th>Problème</th>
                  </tr>
                </thead>
                <tbody>
                  ${errors.map(
                    (e) =>
                      html`<tr>
                        <td>${formatCount(e.line)}</td>
                        <td>${e.field}</td>
                        <td>${e.message}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            ${result.errorCount > errors.length ? html`<p class="muted">… et ${plural(result.errorCount - errors.length, 'autre erreur', 'autres erreurs')}.</p>` : ''}`
        : ''
    }
  </section>`;
}

/**
 * An upload answered before its body is read to the end (a stale token, a field before the token)
 * leaves the rest of the body on the connection: the multipart reader waits for a reader of the
 * file part that never comes, so the connection stops reading, while the answer says
 * `Connection: keep-alive`. Node then closes the connection at its keep-alive timeout with the
 * body unread, which resets it under a client still sending: a client that reads the answer once
 * its body is sent (Python's http.client, many API clients) got "connection reset" after 6 s
 * instead of the refusal. The rest is read and dropped instead, as for a file over
 * IMPORT_MAX_BYTES: the answer arrives and the connection serves the next request. The request
 * timeout (60 s for a whole request) bounds how long a client can keep sending. Harmless once
 * the body has been read.
 */
function discardRestOfUpload(raw: IncomingMessage): void {
  if (raw.readableEnded) return;
  raw.unpipe();
  raw.resume();
}

export async function storePages(plain: FastifyInstance, tools: WebTools): Promise<void> {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>();
  // Past IMPORT_MAX_BYTES the file stream fails: the import discards what it staged (I1).
  await app.register(multipart, {
    limits: { files: 1, fileSize: tools.importMaxBytes, fields: 10, fieldSize: 1024 },
  });
  const session = tools.session;
  const imports = new BackgroundImports(tools.db, (error, jobId) =>
    app.log.error({ err: error, jobId }, 'background import failed'),
  );
  app.addHook('onClose', async () => imports.close());
  const connectAttempts = new AttemptLimit(
    app.createRateLimit({
      max: CONNECT_ATTEMPTS_PER_HOUR,
      timeWindow: 60 * 60_000,
      keyGenerator: (r) => `store-connect:${r.webSession?.organization.id ?? r.ip}`,
    }),
  );

  /** Every store and the connected ones' state: on the page, and alone for its script. */
  async function storesSection(request: FastifyRequest, context: PageContext): Promise<Html> {
    const organizationId = session(request).organization.id;
    const connections = await listConnections(tools.db, organizationId);
    return connectionsTable(context, connections, await listStores(tools.db, organizationId));
  }

  async function storesPage(
    request: FastifyRequest,
    context: PageContext,
    extra: {
      addressError?: string;
      address?: string;
      report?: Html;
      notice?: string;
      connect?: { address: string; error: string; field: string; platform: string };
    } = {},
  ) {
    const section = await storesSection(request, context);
    const history = await recentImports(tools.db, session(request).organization.id);
    const connect = extra.connect?.platform === 'shopify' ? undefined : extra.connect;
    const shopify = extra.connect?.platform === 'shopify' ? extra.connect : undefined;
    const body = html`${extra.report ?? ''}
      <section class="card" aria-labelledby="connected-title">
        <h2 id="connected-title">Vos boutiques</h2>
        ${section}
        <p class="muted"><a href="/settings/stores">Rafraîchir</a></p>
      </section>
      <form method="post" action="/settings/stores/connect" class="card" id="connect-form" autocomplete="off">
        ${csrfField(context)}
        <h2>Connecter une boutique WooCommerce</h2>
        <p class="muted">
          Dans WooCommerce : Réglages → Avancé → API REST → Ajouter une clé, avec la permission « Lecture ».
          Le service ne fait que lire les commandes ; il ne modifie rien dans la boutique.
        </p>
        <input type="hidden" name="platform" value="woocommerce" />
        <label for="connect-address">Adresse de la boutique WooCommerce</label>
        <input
          id="connect-address"
          name="address"
          type="url"
          required
          placeholder="https://boutique.example.fr"
          value="${connect?.address ?? ''}"
          ${connect?.field === 'address' ? html` aria-invalid="true" aria-describedby="connect-error"` : ''}
        />
        <label for="consumer-key">Clé client (ck_…)</label>
        <input
          id="consumer-key"
          name="consumer_key"
          type="text"
          required
          spellcheck="false"
          ${connect?.field === 'credentials' ? html` aria-invalid="true" aria-describedby="connect-error"` : ''}
        />
        <label for="consumer-secret">Secret client (cs_…)</label>
        <input
          id="consumer-secret"
          name="consumer_secret"
          type="password"
          required
          autocomplete="new-password"
        />
        ${connect ? html`<p class="error" id="connect-error" role="alert">${connect.error}</p>` : ''}
        <div class="actions"><button>Connecter</button></div>
      </form>
      ${shopifyConnectForm(context, shopify)}
      <form method="post" action="/settings/stores" class="card">
        ${csrfField(context)}
        <h2>Ajouter une boutique sans connexion</h2>
        <p class="muted">Ses commandes arrivent alors par import de fichiers.</p>
        <label for="address">Adresse de la boutique</label>
        <input
          id="address"
          name="address"
          type="url"
          required
          placeholder="https://boutique.example.fr"
          value="${extra.address ?? ''}"
          ${extra.addressError ? html` aria-invalid="true" aria-describedby="address-error"` : ''}
        />
        ${extra.addressError ? html`<p class="error" id="address-error">${extra.addressError}</p>` : ''}
        <div class="actions"><button>Ajouter</button></div>
      </form>
      <form
        method="post"
        action="/settings/stores/import"
        enctype="multipart/form-data"
        class="card"
        id="import-form"
      >
        ${csrfField(context)}<!-- fields before the file: the body is read as a stream, in this order -->
        <h2>Importer des commandes</h2>
        <p class="muted">
          Fichier NDJSON (.ndjson, .jsonl) ou CSV (.csv) avec les champs de l’import (store, id, created_at,
          status, items, total…). Une ligne invalide refuse tout le fichier, sauf si vous cochez la case ; une
          commande déjà importée est remplacée.
        </p>
        <p class="muted">
          Exemples : <a href="/import/examples/orders-example.csv" download>CSV</a>,
          <a href="/import/examples/orders-example.ndjson" download>NDJSON</a> (tous les champs :
          docs/import-format.md).
        </p>
        <label for="skip"
          ><input id="skip" name="skip_invalid" type="checkbox" value="1" /> Importer les lignes valides et
          lister les autres</label
        >
        <label for="file">Fichier</label>
        <input id="file" name="file" type="file" accept=".ndjson,.jsonl,.csv" required />
        <progress id="import-progress" max="100" value="0" hidden></progress>
        <div class="actions"><button>Importer</button></div>
      </form>
      ${importHistory(history)}`;
    return page(context, 'Boutiques', body, extra.notice);
  }

  app.get('/settings/stores', { preHandler: tools.requireSession }, async (request, reply) =>
    tools.render(reply, await storesPage(request, tools.context(request, reply))),
  );

  app.post(
    '/settings/stores',
    { schema: { body: AddStoreForm }, preHandler: [tools.requireSession, app.csrfProtection] },
    async (request, reply) => {
      const address = request.body.address ?? '';
      const context = tools.context(request, reply);
      try {
        const stored = await addStore(tools.db, session(request).organization.id, address);
        return tools.render(
          reply,
          await storesPage(request, context, {
            notice: `Boutique ajoutée : ${stored}. Importez-y des commandes avec un fichier.`,
          }),
        );
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        return tools.render(
          reply,
          await storesPage(request, context, { addressError: error.message, address }),
          400,
        );
      }
    },
  );

  // Issue 11: connecting a store by its REST keys. The keys are checked against the store before
  // anything is saved; the secret is never sent back (the form is shown again without it).
  app.post(
    '/settings/stores/connect',
    { schema: { body: ConnectStoreForm }, preHandler: [tools.requireSession, app.csrfProtection] },
    async (request, reply) => {
      const context = tools.context(request, reply);
      const address = request.body.address ?? '';
      const organizationId = session(request).organization.id;
      // Each try makes this server call the address typed: a few an hour per organization, one
      // at a time per client address.
      const attempt = await connectAttempts.run(
        request,
        () =>
          connectStore(tools.db, tools.stores.setup, {
            organizationId,
            platform: request.body.platform ?? 'woocommerce',
            address,
            ...formSecrets(request.body),
          }).then(
            (connected) => ({ connected }),
            (error: unknown) => ({ error }),
          ),
        () => true,
      );
      const failure =
        'limitedForMs' in attempt
          ? new AppError(
              'RATE_LIMITED',
              `Trop d’essais de connexion : réessayez dans ${Math.ceil(attempt.limitedForMs / 60_000)} min.`,
            )
          : 'error' in attempt.outcome
            ? attempt.outcome.error
            : undefined;
      if (failure === undefined && 'outcome' in attempt && 'connected' in attempt.outcome) {
        const { connected } = attempt.outcome;
        tools.stores.kick();
        const base = tools.stores.publicUrl ?? `${request.protocol}://${request.host}`;
        const card = webhookCard(
          connected.address,
          `${base}${connected.webhookPath}`,
          connected.webhookSecret,
        );
        return tools.render(reply, await storesPage(request, context, { report: card }));
      }
      if (!(failure instanceof AppError) || failure.status >= 500) throw failure;
      const field = typeof failure.body.field === 'string' ? failure.body.field : 'address';
      const platform = request.body.platform ?? 'woocommerce';
      const shown = { address: address.slice(0, 2048), error: failure.message, field, platform };
      return tools.render(reply, await storesPage(request, context, { connect: shown }), failure.status);
    },
  );

  app.post(
    '/settings/stores/sync',
    { schema: { body: StoreActionForm }, preHandler: [tools.requireSession, app.csrfProtection] },
    async (request, reply) => {
      const connection = await requestSync(
        tools.db,
        session(request).organization.id,
        request.body.address ?? '',
      );
      tools.stores.kick();
      const context = tools.context(request, reply);
      return tools.render(
        reply,
        await storesPage(request, context, { notice: `Synchronisation demandée : ${connection.address}` }),
      );
    },
  );

  app.post(
    '/settings/stores/disconnect',
    { schema: { body: StoreActionForm }, preHandler: [tools.requireSession, app.csrfProtection] },
    async (request, reply) => {
      const removeOrders = request.body.remove_orders === '1';
      const done = await disconnectStore(
        tools.db,
        session(request).organization.id,
        request.body.address ?? '',
        {
          removeOrders,
        },
      );
      const notice = removeOrders
        ? `Boutique déconnectée : ${done.address} ; ${plural(done.removedOrders, 'commande supprimée', 'commandes supprimées')}.`
        : `Boutique déconnectée : ${done.address} ; ses commandes sont conservées.`;
      return tools.render(reply, await storesPage(request, tools.context(request, reply), { notice }));
    },
  );

  // The connections table alone: the page's script refreshes it while a sync runs.
  app.get('/settings/stores/connections', { preHandler: tools.requireSession }, async (request, reply) => {
    return tools.render(reply, await storesSection(request, tools.context(request, reply)));
  });

  // A multipart body is streamed, so the CSRF token is the form's first field, checked before the
  // file. The file is spooled to a private file, then imported in the background (finding 7): the
  // answer is the job's page, at once, whatever the file's size.
  app.post('/settings/stores/import', { preHandler: tools.requireSession }, async (request, reply) => {
    try {
      return await receiveImport(request, reply);
    } finally {
      discardRestOfUpload(request.raw);
    }
  });

  async function receiveImport(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    let skipInvalid = false;
    let checked = false;
    let jobId: string | undefined;
    for await (const part of request.parts()) {
      if (part.type === 'field' && part.fieldname === '_csrf') {
        request.multipartCsrf = String(part.value);
        // The plugin's check is synchronous: it calls back for a good token, and answers a bad
        // one itself (403) without calling back, which ends the upload here.
        let passed = false;
        app.csrfProtection.call(app, request, reply, () => (passed = true));
        if (!passed) return reply;
        checked = true;
      }
      if (!checked) {
        if (part.type === 'file') part.file.resume();
        throw Object.assign(new Error('jeton CSRF manquant'), {
          statusCode: 403,
          code: 'FST_CSRF_INVALID_TOKEN',
        });
      }
      if (part.type === 'field' && part.fieldname === 'skip_invalid') skipInvalid = part.value === '1';
      if (part.type !== 'file') continue;
      // A name longer than a file system allows is refused as such: the multipart reader cuts a
      // name of tens of kilobytes short, so its extension would be lost and the error misleading.
      if (part.filename.length > MAX_FILE_NAME) {
        part.file.resume();
        throw new AppError(
          'INVALID_PARAMETER',
          `Nom de fichier trop long (${formatCount(part.filename.length)} caractères, ${MAX_FILE_NAME} au plus) : renommez le fichier`,
        );
      }
      if (!formatOfFileName(part.filename)) {
        part.file.resume();
        throw new AppError(
          'INVALID_PARAMETER',
          `Fichier « ${part.filename.slice(0, 100)} » : extension .ndjson, .jsonl ou .csv attendue`,
        );
      }
      const spooled = imports.spoolPath();
      try {
        // Past IMPORT_MAX_BYTES the upload stream fails (FST_REQ_FILE_TOO_LARGE): nothing is queued.
        await pipeline(part.file, fs.createWriteStream(spooled, { flags: 'wx', mode: 0o600 }));
      } catch (error) {
        await fs.promises.rm(spooled, { force: true });
        throw error;
      }
      jobId = await imports.submit({
        organizationId: session(request).organization.id,
        file: spooled,
        fileName: part.filename,
        skipInvalid,
      });
    }
    if (!jobId) throw new AppError('INVALID_PARAMETER', 'Aucun fichier reçu');
    return reply.redirect(`/settings/stores/imports/${jobId}`, 303);
  }

  app.get<{ Params: { id: string } }>(
    '/settings/stores/imports/:id',
    { preHandler: tools.requireSession },
    async (request, reply) => {
      const job = await findJob(tools.db, session(request).organization.id, request.params.id);
      if (!job) throw new AppError('NOT_FOUND', 'Import inconnu.');
      const context = tools.context(request, reply);
      const pending = job.state === 'queued' || job.state === 'running';
      return tools.render(
        reply,
        page(context, 'Import de commandes', jobView(job), undefined, pending ? { refreshSeconds: 2 } : {}),
        job.state === 'refused' ? 422 : 200,
      );
    },
  );
}

function jobView(job: ImportJob): Html {
  const file = job.fileName ? html` du fichier « ${job.fileName} »` : '';
  if (job.state === 'queued')
    return html`<p class="notice" role="status" id="import-state">
      Import${file} en attente : il commence dès que l’import précédent est fini. Cette page se met à jour
      seule.
    </p>`;
  if (job.state === 'running')
    return html`<p class="notice" role="status" id="import-state">
      Import${file} en cours : ${plural(job.linesRead, 'ligne lue', 'lignes lues')}
      (${formatCount(job.ordersPerSecond)} commandes/s). Cette page se met à jour seule.
    </p>`;
  if (job.state === 'failed')
    return html`<section class="card" id="import-report">
      <h2>Import échoué</h2>
      ${importSource(job)}
      <p class="alert" role="alert">${job.message ?? 'Import échoué.'}</p>
      <p><a href="/settings/stores">Retour aux boutiques</a></p>
    </section>`;
  const refused = job.state === 'refused';
  // A refused job's message is why the whole file was (its encoding: issue 18, finding 3).
  const fileError = refused && job.message !== null ? { fileError: job.message } : {};
  return html`${importReport({ ...job, errors: [...job.errors], refused, ...fileError }, importSource(job))}
    <p><a href="/settings/stores">Retour aux boutiques</a></p>`;
}
