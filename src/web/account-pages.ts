// Sign up, log in, log out, switch organization.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { AttemptLimit } from '../limits/attempt-limit.js';
import { checkLogin, createSession, endSession, switchOrganization } from '../auth/sessions.js';
import { signUp } from '../domain/accounts.js';
import { MAX_ORGANIZATION_NAME } from '../domain/organizations.js';
import { MAX_EMAIL_LENGTH, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../domain/users.js';
import { backTo, safeNext } from './redirects.js';
import { html, type Html } from './html.js';
import { csrfField, field, page, type PageContext } from './layout.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { LoginForm, LoginQuery, SignUpForm, SwitchOrganizationForm } from './forms.js';
import type { WebTools } from './web-tools.js';
import { SESSION_COOKIE, SESSION_DAYS } from '../auth/sessions.js';

type Form = Record<string, string | undefined>;

/** Sign-ups per client address per hour (finding 10). */
const SIGNUPS_PER_HOUR = 5;
const SIGNED_UP =
  'Si cette adresse n’avait pas encore de compte, il vient d’être créé avec votre organisation. ' +
  'Connectez-vous avec votre adresse et votre mot de passe.';

function loginForm(context: PageContext, form: Form, error?: string, notice?: string): Html {
  return html`<div class="card narrow">
    ${error ? html`<p class="alert" role="alert" id="login-error">${error}</p>` : ''}
    ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
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
        maxlength="${MAX_EMAIL_LENGTH}"
        value="${(form.email ?? '').slice(0, MAX_EMAIL_LENGTH)}"
        ${error ? html` aria-describedby="login-error"` : ''}
      />
      <label for="password">Mot de passe</label>
      <input
        id="password"
        name="password"
        type="password"
        autocomplete="current-password"
        required
        maxlength="${MAX_PASSWORD_LENGTH}"
      />
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
        attributes: html` required maxlength="${MAX_ORGANIZATION_NAME}"`,
      })}
      ${field({ id: 'email', label: 'Adresse e-mail', type: 'email', value: form.email, error: errors.email, attributes: html` autocomplete="username" required maxlength="${MAX_EMAIL_LENGTH}"` })}
      ${field({
        id: 'password',
        label: `Mot de passe (${MIN_PASSWORD_LENGTH} caractères au moins)`,
        type: 'password',
        error: errors.password,
        attributes: html` autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}"
        maxlength="${MAX_PASSWORD_LENGTH}"`,
      })}
      <div class="actions"><button>Créer le compte</button><a href="/login">J’ai déjà un compte</a></div>
    </form>
  </div>`;
}

export async function accountPages(plain: FastifyInstance, tools: WebTools): Promise<void> {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>();
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
  // Failed logins per address: 10 per 15 minutes; sign-ups that get through: 5 an hour.
  const loginFailures = new AttemptLimit(
    app.createRateLimit({
      max: 10,
      timeWindow: 15 * 60_000,
      keyGenerator: (r) => `login:${r.ip}`,
    }),
  );
  const signups = new AttemptLimit(
    app.createRateLimit({
      max: SIGNUPS_PER_HOUR,
      timeWindow: 60 * 60_000,
      keyGenerator: (r) => `signup:${r.ip}`,
    }),
  );

  app.get('/', async (request, reply) =>
    reply.redirect(request.webSession ? '/reports/revenue' : '/login', 303),
  );

  app.get('/login', { schema: { querystring: LoginQuery } }, async (request, reply) => {
    if (request.webSession) return reply.redirect('/reports/revenue', 303);
    const query = request.query;
    const context = tools.context(request, reply);
    const notice = query.signup ? SIGNED_UP : undefined;
    return tools.render(
      reply,
      page(
        context,
        'Connexion',
        loginForm(
          context,
          { next: query.signup ? '/settings/api-keys?welcome=1' : query.next },
          undefined,
          notice,
        ),
      ),
    );
  });

  app.post(
    '/login',
    { schema: { body: LoginForm }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const form = request.body;
      const email = form.email ?? '';
      const password = form.password ?? '';
      const attempt = await loginFailures.run(
        request,
        // Over-long input is a failed attempt, never hashed (a megabyte password would cost seconds).
        async () =>
          email.length <= MAX_EMAIL_LENGTH && password.length <= MAX_PASSWORD_LENGTH
            ? await checkLogin(tools.db, email, password)
            : undefined,
        (found) => !found, // failures count
      );
      if ('limitedForMs' in attempt) {
        const context = tools.context(request, reply);
        const message = `Trop de tentatives : réessayez dans ${Math.ceil(attempt.limitedForMs / 60_000)} min.`;
        return tools.render(reply, page(context, 'Connexion', loginForm(context, form, message)), 429);
      }
      const login = attempt.outcome;
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
    },
  );

  app.get('/signup', async (request, reply) => {
    const context = tools.context(request, reply);
    return tools.render(reply, page(context, 'Créer un compte', signupForm(context, {})));
  });

  app.post(
    '/signup',
    { schema: { body: SignUpForm }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const form = request.body;
      // Only sign-ups that get through count (finding 10); a mistyped form costs nothing.
      const attempt = await signups.run(
        request,
        () =>
          signUp(tools.db, {
            organization: form.organization ?? '',
            email: form.email ?? '',
            password: form.password ?? '',
          }),
        (result) => result.accepted,
      );
      if ('limitedForMs' in attempt) {
        const context = tools.context(request, reply);
        const message = `Trop de créations de compte depuis cette adresse : réessayez dans ${Math.ceil(attempt.limitedForMs / 60_000)} min.`;
        return tools.render(
          reply,
          page(context, 'Créer un compte', signupForm(context, form, { organization: message })),
          429,
        );
      }
      const result = attempt.outcome;
      if (!result.accepted) {
        const context = tools.context(request, reply);
        const shown = {
          organization: form.organization?.slice(0, MAX_ORGANIZATION_NAME),
          email: form.email?.slice(0, MAX_EMAIL_LENGTH),
        };
        return tools.render(
          reply,
          page(context, 'Créer un compte', signupForm(context, shown, result.errors)),
          400,
        );
      }
      // The same answer whether the account was created or the address was already taken (finding 3).
      return reply.redirect('/login?signup=1', 303);
    },
  );

  app.post('/logout', { preHandler: app.csrfProtection }, async (request, reply) => {
    await endSession(tools.db, request.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/login', 303);
  });

  app.post(
    '/switch-organization',
    { schema: { body: SwitchOrganizationForm }, preHandler: [tools.requireSession, app.csrfProtection] },
    async (request, reply) => {
      const session = request.webSession;
      if (!session) throw new AppError('UNAUTHENTICATED', 'Connectez-vous.');
      await switchOrganization(tools.db, session, request.body.slug ?? '');
      // Back to the page the form was on, when it is a page of this site (finding 4).
      return reply.redirect(backTo(request), 303);
    },
  );
}
