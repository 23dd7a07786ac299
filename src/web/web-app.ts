// The web application (issue 3): server-rendered French pages on the same server as the API,
// calling the same core functions as the CLI. Sessions in the database, CSRF tokens on every form.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import csrf from '@fastify/csrf-protection';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { appError, AppError, errorFields, isAppError } from '../errors.js';
import { SESSION_COOKIE, findSession, type WebSession } from '../auth/sessions.js';
import { sharedCounterStore } from '../limits/rate-limit-store.js';
import { redisFallbackWarning } from '../limits/redis.js';
import { APP_CSS, APP_JS } from './assets.js';
import { html } from './html.js';
import { page, type PageContext } from './layout.js';
import type { StoreSyncAccess, WebTools } from './web-tools.js';
import { accountPages } from './account-pages.js';
import { keyPages } from './key-pages.js';
import { settingsPages } from './settings-pages.js';
import { revenuePage } from './revenue-page.js';
import { productsPage } from './products-page.js';
import { storePages } from './store-pages.js';
import { FORM_BODY_LIMIT } from './forms.js';

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
  readonly stores: StoreSyncAccess;
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

/** What a CSRF token is bound to: the session cookie's hash when signed in. */
function csrfUserInfo(request: FastifyRequest): string {
  const token = request.webSession ? request.cookies[SESSION_COOKIE] : undefined;
  return token ? crypto.createHash('sha256').update(token).digest('base64url') : 'signed-out';
}

/** The CSRF token field of a parsed form body, before the route's schema has checked the body. */
function formToken(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('_csrf' in body)) return undefined;
  return typeof body._csrf === 'string' ? body._csrf : undefined;
}

const derivedKey = (secret: Buffer, purpose: string): Buffer =>
  crypto.createHmac('sha256', secret).update(`sales-metrics:${purpose}`).digest();

/** Errors that say the service is busy or waits for its database, shown as they are to a person. */
const BUSY_CODES = new Set(['SERVICE_BUSY', 'DATABASE_UNAVAILABLE', 'SNAPSHOT_BUILDING']);
/** Retry-After of a page past PAGE_DEADLINE_MS. */
const PAGE_RETRY_AFTER_S = 5;

export async function webApp(app: FastifyInstance, deps: WebDeps): Promise<void> {
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
  // CSRF tokens bound to the session (finding 5): the secret cookie alone is not enough, since a
  // page on a sibling origin of the same site can plant it; the token also carries an HMAC, keyed
  // from SECRET_KEY, of the session cookie, which no other origin knows. Signed-out forms (login,
  // sign-up) are covered by the Origin check below.
  await app.register(csrf, {
    cookieOpts: { path: '/', httpOnly: true, sameSite: 'lax', secure: 'auto' },
    csrfOpts: { hmacKey: derivedKey(deps.config.secretKey, 'csrf') },
    getUserInfo: csrfUserInfo,
    // Forms send the token as a field; the streamed import form as its first multipart field.
    getToken: (request) => formToken(request.body) ?? request.multipartCsrf ?? '',
  });
  // A form posted from another origin is refused before anything else (finding 5), whatever its
  // token: browsers say where a request comes from in Origin, or at least in Sec-Fetch-Site.
  app.addHook('onRequest', async (request) => {
    if (request.method === 'GET' || request.method === 'HEAD') return;
    const origin = request.headers.origin;
    const site = request.headers['sec-fetch-site'];
    const sameOrigin =
      origin !== undefined
        ? origin === `${request.protocol}://${request.host}`
        : site === undefined || site === 'same-origin' || site === 'none';
    if (!sameOrigin) throw appError('FORBIDDEN');
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

  // A page the database cannot serve in time (a large import holds the embedded database's one
  // session for minutes) gets a 503 page saying so, not silence until the connection's timeout
  // (65 s) closes it unanswered. Set before the session is looked up: that lookup waits too.
  // Pages only (GET, HEAD): a form's post, an upload above all, may take its time to arrive.
  const deadlineMs = deps.config.pageDeadlineMs;
  if (deadlineMs > 0)
    app.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      const timer = setTimeout(() => {
        if (reply.sent || reply.raw.headersSent) return;
        request.log.warn({ deadlineMs }, 'web page past its deadline');
        void reply.send(
          new AppError(
            'SERVICE_BUSY',
            'Service occupé : la base de données ne répond pas à temps (un import important est peut-être en cours). Réessayez dans quelques secondes.',
            {},
            { retryAfterS: PAGE_RETRY_AFTER_S },
          ),
        );
      }, deadlineMs);
      reply.raw.once('close', () => clearTimeout(timer));
    });
  app.addHook('onRequest', async (request) => {
    request.webSession = await findSession(deps.db, request.cookies[SESSION_COOKIE]);
  });

  const tools: WebTools = {
    db: deps.db,
    context: (request, reply) => ({
      session: request.webSession,
      csrfToken: reply.generateCsrf({ userInfo: csrfUserInfo(request) }),
      path: request.url.split('?')[0] ?? '/',
    }),
    session(request) {
      if (!request.webSession) throw new AppError('UNAUTHENTICATED', 'Connectez-vous pour voir cette page.');
      return request.webSession;
    },
    async requireSession(request, reply) {
      if (!request.webSession) return reply.redirect(`/login?next=${encodeURIComponent(request.url)}`, 303);
    },
    render: (reply, page, status = 200) =>
      reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page.text),
    cookieSecure: (request) => request.protocol === 'https',
    importMaxBytes: deps.config.importMaxBytes,
    stores: deps.stores,
  };

  // Web errors are pages, not JSON: the same catalogue of messages, shown to a person.
  app.setErrorHandler((error, request, reply) => {
    const { code, statusCode } = errorFields(error);
    const status = isAppError(error) ? error.status : (statusCode ?? 500);
    const message =
      code === 'FST_CSRF_INVALID_TOKEN' || code === 'FST_CSRF_MISSING_SECRET'
        ? 'Formulaire expiré ou invalide : rechargez la page et réessayez.'
        : code === 'FST_REQ_FILE_TOO_LARGE'
          ? `Fichier trop volumineux : ${Math.floor(deps.config.importMaxBytes / 1024 ** 2)} Mio au plus (IMPORT_MAX_BYTES). Aucune commande n’a été importée ; découpez le fichier ou importez-le avec la commande sales-metrics import.`
          : isAppError(error) && (status < 500 || BUSY_CODES.has(error.code))
            ? error.message
            : status < 500
              ? 'Requête invalide.'
              : `Erreur interne (référence ${request.id}).`;
    // Busy or away is the service shedding load or waiting for its database: said, with when to
    // come back, and not logged as a failure of the page.
    const busy = isAppError(error) && BUSY_CODES.has(error.code);
    if (busy && error.retryAfterS !== undefined) reply.header('retry-after', String(error.retryAfterS));
    if (status >= 500 && !busy) request.log.error({ err: error }, 'web page failed');
    const context: PageContext = {
      session: request.webSession,
      csrfToken: reply.generateCsrf({ userInfo: csrfUserInfo(request) }),
      path: request.url.split('?')[0] ?? '/',
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
  await productsPage(app, tools);
  await storePages(app, tools);
}
