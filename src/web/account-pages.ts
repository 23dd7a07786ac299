// Sign up, log in, log out, switch organization.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { KeyedLock } from '../limits/keyed-lock.js';
import { checkLogin, createSession, endSession, switchOrganization } from '../auth/sessions.js';
import { createOrganization } from '../domain/organizations.js';
import { addUserToOrganization, MIN_PASSWORD_LENGTH } from '../domain/users.js';
import { html, type Html } from './html.js';
import { csrfField, field, page, type PageContext } from './layout.js';
import type { WebTools } from './web-tools.js';
import { SESSION_COOKIE, SESSION_DAYS } from '../auth/sessions.js';

type Form = Record<string, string | undefined>;

/** Only same-site paths, so that ?next= cannot send a person to another site. */
const safeNext = (next: string | undefined): string =>
  next && /^\/(?!\/)[^\s]*$/.test(next) ? next : '/reports/revenue';

function loginForm(context: PageContext, form: Form, error?: string): Html {
  return html`<div class="card narrow">
    ${error ? html`<p class="alert" role="alert" id="login-error">${error}</p>` : ''}
    <form method="post" action="/login">
      ${csrfField(context)}
      <input type="hidden" name="next" value="${safeNext(form.next)}" />
      <label for="email">Adresse e-mail</label>
      <input
        id="email"
        name="email"
        type="email"
        autocomplete="username"
        required
        value="${form.email ?? ''}"
        ${error ? html` aria-describedby="login-error"` : ''}
      />
      <label for="password">Mot de passe</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required />
      <div class="actions"><button>Se connecter</button><a href="/signup">Créer un compte</a></div>
    </form>
  </div>`;
}

function signupForm(context: PageContext, form: Form, errors: Form = {}): Html {
  return html`<div class="card narrow">
    <p class="muted">Un compte crée votre organisation, avec un essai gratuit de 14 jours.</p>
    <form method="post" action="/signup" novalidate>
      ${csrfField(context)}
      ${field({
        id: 'organization',
        label: 'Nom de l’organisation',
        type: 'text',
        value: form.organization,
        error: errors.organization,
        attributes: html` required maxlength="100"`,
      })}
      ${field({ id: 'email', label: 'Adresse e-mail', type: 'email', value: form.email, error: errors.email, attributes: html` autocomplete="username" required` })}
      ${field({
        id: 'password',
        label: `Mot de passe (${MIN_PASSWORD_LENGTH} caractères au moins)`,
        type: 'password',
        error: errors.password,
        attributes: html` autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}"`,
      })}
      <div class="actions"><button>Créer le compte</button><a href="/login">J’ai déjà un compte</a></div>
    </form>
  </div>`;
}

export async function accountPages(app: FastifyInstance, tools: WebTools): Promise<void> {
  const startSession = async (
    reply: import('fastify').FastifyReply,
    secure: boolean,
    userId: string,
    orgId: string,
  ) => {
    const token = await createSession(tools.db, userId, orgId);
    reply.setCookie(SESSION_COOKIE, token, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure,
      maxAge: SESSION_DAYS * 86_400,
    });
  };
  // Failed logins per address: 10 per 15 minutes.
  const attempts = new KeyedLock();
  const loginFailures = app.createRateLimit({
    max: 10,
    timeWindow: 15 * 60_000,
    keyGenerator: (r) => `login:${r.ip}`,
  });

  app.get('/', async (request, reply) =>
    reply.redirect(request.webSession ? '/reports/revenue' : '/login', 303),
  );

  app.get('/login', async (request, reply) => {
    if (request.webSession) return reply.redirect('/reports/revenue', 303);
    const next = (request.query as Form).next;
    return tools.render(
      reply,
      page(tools.context(request, reply), 'Connexion', loginForm(tools.context(request, reply), { next })),
    );
  });

  app.post('/login', { preHandler: app.csrfProtection }, async (request, reply) => {
    const form = request.body as Form;
    // Check, verify and count one attempt at a time per address, or parallel guesses would all
    // pass the check before any failure is counted (as for R2).
    const login = await attempts.run(request.ip, async () => {
      const status = await loginFailures(request, { increment: false });
      if (!status.isAllowed && status.remaining === 0) return { limitedForMs: status.ttl };
      const found = await checkLogin(tools.db, form.email ?? '', form.password ?? '');
      if (!found) await loginFailures(request);
      return found;
    });
    if (login && 'limitedForMs' in login) {
      const context = tools.context(request, reply);
      const message = `Trop de tentatives : réessayez dans ${Math.ceil(login.limitedForMs / 60_000)} min.`;
      return tools.render(reply, page(context, 'Connexion', loginForm(context, form, message)), 429);
    }
    if (!login) {
      const context = tools.context(request, reply);
      return tools.render(
        reply,
        page(context, 'Connexion', loginForm(context, form, 'Adresse e-mail ou mot de passe incorrect.')),
        401,
      );
    }
    await startSession(reply, tools.cookieSecure(request), login.userId, login.organizationId);
    return reply.redirect(safeNext(form.next), 303);
  });

  app.get('/signup', async (request, reply) => {
    const context = tools.context(request, reply);
    return tools.render(reply, page(context, 'Créer un compte', signupForm(context, {})));
  });

  app.post('/signup', { preHandler: app.csrfProtection }, async (request, reply) => {
    const form = request.body as Form;
    const errors: Form = {};
    if (!form.organization?.trim()) errors.organization = 'Le nom de l’organisation est requis.';
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(form.email?.trim() ?? ''))
      errors.email = 'Adresse e-mail invalide.';
    if ((form.password ?? '').length < MIN_PASSWORD_LENGTH)
      errors.password = `${MIN_PASSWORD_LENGTH} caractères au moins.`;
    const exists = await tools.db.query('SELECT 1 FROM users WHERE email = $1', [
      form.email?.trim().toLowerCase() ?? '',
    ]);
    if (exists.length > 0) errors.email = 'Un compte existe déjà avec cette adresse : connectez-vous.';
    if (Object.keys(errors).length > 0) {
      const context = tools.context(request, reply);
      return tools.render(reply, page(context, 'Créer un compte', signupForm(context, form, errors)), 400);
    }
    const org = await createOrganization(tools.db, { name: form.organization ?? '' });
    const { userId } = await addUserToOrganization(tools.db, org.id, form.email ?? '', form.password ?? '');
    await startSession(reply, tools.cookieSecure(request), userId, org.id);
    return reply.redirect('/settings/api-keys?welcome=1', 303);
  });

  app.post('/logout', { preHandler: app.csrfProtection }, async (request, reply) => {
    await endSession(tools.db, request.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/login', 303);
  });

  app.post(
    '/switch-organization',
    { preHandler: [tools.requireSession, app.csrfProtection] },
    async (request, reply) => {
      const session = request.webSession;
      if (!session) throw new AppError('UNAUTHENTICATED', 'Connectez-vous.');
      await switchOrganization(tools.db, session, (request.body as Form).slug ?? '');
      // Back to the same page, by its path only (never to another site).
      const referer = request.headers.referer;
      return reply.redirect(referer ? new URL(referer, 'http://x').pathname : '/', 303);
    },
  );
}
