// The page shell: navigation, organization switcher, logout, messages. French, responsive.
import type { WebSession } from '../auth/sessions.js';
import { html, type Html, type HtmlValue } from './html.js';

export interface PageContext {
  readonly session?: WebSession;
  readonly csrfToken: string;
  readonly path: string;
}

const NAV = [
  { href: '/reports/revenue', label: 'Revenus' },
  { href: '/reports/products', label: 'Produits' },
  { href: '/settings/api-keys', label: 'Clés API' },
  { href: '/settings/report', label: 'Paramètres des rapports' },
  { href: '/settings/stores', label: 'Boutiques' },
  { href: '/settings/subscription', label: 'Abonnement' },
];

export const csrfField = (context: PageContext): Html =>
  html`<input type="hidden" name="_csrf" value="${context.csrfToken}" />`;

function header(context: PageContext): HtmlValue {
  const session = context.session;
  if (!session) return html`<header class="top"><a class="brand" href="/">Sales Metrics</a></header>`;
  const others = session.memberships.filter((m) => m.slug !== session.organization.slug);
  return html`<header class="top">
    <a class="brand" href="/">Sales Metrics</a>
    <nav aria-label="Navigation principale">
      <ul>
        ${NAV.map((item) => html`<li><a href="${item.href}" ${context.path.startsWith(item.href) ? html` aria-current="page"` : ''}>${item.label}</a></li>`)}
      </ul>
    </nav>
    <div class="account">
      ${
        others.length > 0
          ? html`<form method="post" action="/switch-organization" class="inline">
              ${csrfField(context)}
              <label for="org-switch" class="visually-hidden">Organisation</label>
              <select id="org-switch" name="slug" data-autosubmit>
                <option value="${session.organization.slug}" selected>${session.organization.name}</option>
                ${others.map((m) => html`<option value="${m.slug}">${m.name}</option>`)}</select
              ><noscript><button>Changer</button></noscript>
            </form>`
          : html`<span class="org">${session.organization.name}</span>`
      }
      <span class="email">${session.email}</span>
      <form method="post" action="/logout" class="inline">
        ${csrfField(context)}<button class="link">Se déconnecter</button>
      </form>
    </div>
  </header>`;
}

export function page(
  context: PageContext,
  title: string,
  body: HtmlValue,
  notice?: string,
  options: { refreshSeconds?: number } = {},
): Html {
  return html`<!doctype html>
    <html lang="fr">
      <head>
        <meta charset="utf-8" />
        ${options.refreshSeconds ? html`<meta http-equiv="refresh" content="${options.refreshSeconds}" />` : ''}
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Sales Metrics</title>
        <link rel="stylesheet" href="/assets/app.css" />
      </head>
      <body>
        ${header(context)}
        <main id="main">
          <h1>${title}</h1>
          ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''} ${body}
        </main>
        <script src="/assets/app.js" defer></script>
      </body>
    </html>`;
}

export interface FieldOptions {
  readonly id: string;
  readonly label: string;
  readonly type: string;
  readonly value?: string;
  /** Shown under the field and announced with it (aria-describedby). */
  readonly error?: string;
  /** Other attributes (required, autocomplete…), built with html``. */
  readonly attributes?: Html;
}

/** A labelled input with its error message next to it. */
export function field(o: FieldOptions): Html {
  const invalid = o.error ? html` aria-invalid="true" aria-describedby="${o.id}-error"` : '';
  return html`<label for="${o.id}">${o.label}</label>
    <input
      id="${o.id}"
      name="${o.id}"
      type="${o.type}"
      value="${o.value ?? ''}"
      ${o.attributes ?? ''}${invalid}
    />
    ${o.error ? html`<p class="error" id="${o.id}-error">${o.error}</p>` : ''}`;
}

/** A list of choices, the current one selected, its error announced with it. */
export function selectField(o: {
  id: string;
  label: string;
  options: readonly { value: string; option: string }[];
  selected: string;
  error: string | undefined;
}): Html {
  const invalid = o.error ? html` aria-invalid="true" aria-describedby="${o.id}-error"` : '';
  return html`<label for="${o.id}">${o.label}</label>
    <select id="${o.id}" name="${o.id}" ${invalid}>
      ${o.options.map(
        (c) =>
          html`<option value="${c.value}" ${c.value === o.selected ? html`selected` : ''}>
            ${c.option}
          </option>`,
      )}
    </select>
    ${o.error ? html`<p class="error" id="${o.id}-error">${o.error}</p>` : ''}`;
}
