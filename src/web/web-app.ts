// The web application (issue 3): server-rendered French pages on the same server as the API,
// calling the same core functions as the CLI. Sessions in the database, CSRF tokens on every form.
import type { FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import csrf from '@fastify/csrf-protection';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { isAppError } from '../errors.js';
import { SESSION_COOKIE, findSession, type WebSession } from '../auth/sessions.js';
import { sharedCounterStore } from '../limits/rate-limit-store.js';
import { redisFallbackWarning } from '../limits/redis.js';
import { APP_CSS, APP_JS } from './assets.js';
import { html } from './html.js';
import { page, type PageContext } from './layout.js';
import type { WebTools } from './web-tools.js';
import { accountPages } from './account-pages.js';
import { keyPages } from './key-pages.js';
import { settingsPages } from './settings-pages.js';
import { revenuePage } from './revenue-page.js';
import { storePages } from './store-pages.js';

declare module 'fastify' {
  interface FastifyRequest {
    webSession?: WebSession;
    multipartCsrf?: string;
  }
}

export interface WebDeps {
  readonly config: Config;
  readonly db: Database;
  readonly redis?: Redis;
}

/** The stylesheet and script, outside webApp: no session lookup for a static file. */
export async function webAssets(app: FastifyInstance): Promise<void> {
  app.get('/assets/app.css', async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('text/css; charset=utf-8').send(APP_CSS),
  );
  app.get('/assets/app.js', async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(APP_JS),
  );
}

export async function webApp(app: FastifyInstance, deps: WebDeps): Promise<void> {
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(csrf, {
    cookieOpts: { path: '/', httpOnly: true, sameSite: 'lax' },
    // Forms send the token as a field; the streamed import form as its first multipart field.
    getToken: (request) =>
      (request.body as Record<string, string> | undefined)?._csrf ?? request.multipartCsrf ?? '',
  });
  await app.register(rateLimit, {
    global: false,
    ...(deps.redis
      ? {
          store: sharedCounterStore(
            deps.redis,
            redisFallbackWarning(app.log, 'compteurs de connexion locaux'),
          ),
        }
      : {}),
  });

  app.addHook('onRequest', async (request) => {
    request.webSession = await findSession(deps.db, request.cookies[SESSION_COOKIE]);
  });

  const tools: WebTools = {
    db: deps.db,
    context: (request, reply) => ({
      session: request.webSession,
      csrfToken: reply.generateCsrf(),
      path: request.url.split('?')[0] ?? '/',
    }),
    async requireSession(request, reply) {
      if (!request.webSession) return reply.redirect(`/login?next=${encodeURIComponent(request.url)}`, 303);
    },
    render: (reply, page, status = 200) =>
      reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page.text),
    cookieSecure: (request) => request.protocol === 'https',
  };

  // Web errors are pages, not JSON: the same catalogue of messages, shown to a person.
  app.setErrorHandler((error, request, reply) => {
    const status = isAppError(error) ? error.status : ((error as { statusCode?: number }).statusCode ?? 500);
    const message =
      (error as { code?: string }).code === 'FST_CSRF_INVALID_TOKEN' ||
      (error as { code?: string }).code === 'FST_CSRF_MISSING_SECRET'
        ? 'Formulaire expiré ou invalide : rechargez la page et réessayez.'
        : isAppError(error) && status < 500
          ? error.message
          : status < 500
            ? 'Requête invalide.'
            : `Erreur interne (référence ${request.id}).`;
    if (status >= 500) request.log.error({ err: error }, 'web page failed');
    const context: PageContext = {
      session: request.webSession,
      csrfToken: reply.generateCsrf(),
      path: request.url,
    };
    return tools.render(
      reply,
      page(
        context,
        'Erreur',
        html`<p class="alert" role="alert">${message}</p>
          <p><a href="/">Retour</a></p>`,
      ),
      status,
    );
  });

  await accountPages(app, tools);
  await keyPages(app, tools);
  await settingsPages(app, tools);
  await revenuePage(app, tools);
  await storePages(app, tools);
}
