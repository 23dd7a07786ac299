// The page a browser gets for an unknown path (API clients get the JSON 404 of E2).
import { html } from './html.js';
import { page } from './layout.js';

export const notFoundPage = (path: string): string =>
  page(
    { csrfToken: '', path },
    'Page introuvable',
    html`<p>Aucune page à l’adresse <code>${path}</code>.</p>
      <p><a href="/">Retour à l’accueil</a></p>`,
  ).text;
