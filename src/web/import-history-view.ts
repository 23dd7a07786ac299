// The Boutiques page's past imports (issue 30, item 9): the latest files, when, from where, what
// became of them, each linking to its result page.
import type { PastImport } from '../domain/import-history.js';
import { dataTableHtml } from './data-table.js';
import { formatCount, formatMoment } from './format.js';
import { html, type Html } from './html.js';

const STATES: Record<string, string> = {
  queued: 'En attente',
  running: 'En cours',
  succeeded: 'Terminé',
  refused: 'Refusé',
  failed: 'Échoué',
};

const ORIGINS: Record<string, string> = { web: 'Cette page', cli: 'Ligne de commande', api: 'API' };

export function importHistory(imports: readonly PastImport[]): Html {
  const table =
    imports.length === 0
      ? html`<p class="muted">Aucun import de fichier pour l’instant.</p>`
      : dataTableHtml<PastImport>({
          id: 'import-history',
          caption: 'Derniers imports de fichiers',
          rowHeader: {
            label: 'Fichier',
            cell: (job) =>
              html`<a href="/settings/stores/imports/${job.id}">${job.fileName ?? 'sans nom'}</a>`,
          },
          columns: [
            { id: 'date', label: 'Date', cell: (job) => formatMoment(job.createdAt) },
            { id: 'state', label: 'État', cell: (job) => STATES[job.state] ?? job.state },
            { id: 'imported', label: 'Importées', numeric: true, cell: (job) => formatCount(job.imported) },
            { id: 'updated', label: 'Remplacées', numeric: true, cell: (job) => formatCount(job.updated) },
            { id: 'rejected', label: 'Refusées', numeric: true, cell: (job) => formatCount(job.rejected) },
            { id: 'origin', label: 'Depuis', cell: (job) => ORIGINS[job.origin] ?? job.origin },
          ],
          rows: imports,
        });
  return html`<section class="card" aria-labelledby="history-title" id="import-history-section">
    <h2 id="history-title">Derniers imports</h2>
    ${table}
  </section>`;
}
