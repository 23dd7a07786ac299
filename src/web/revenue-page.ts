// Reports → Revenue: period picker (UTC days), grouping (G2: day, week, month, quarter or year) and
// « Comparer à » (PC1: previous period or the same period a year earlier), key figures, chart,
// table per bucket with totals, CSV download.
// Figures come from revenueReport() and the catalog metrics, run by the API's own report engine (S3).
import type { FastifyInstance } from 'fastify';
import type { ReportEngine } from '../metrics/engine.js';
import { revenueReport } from '../metrics/revenue.js';
import { comparedRevenueCsvLines, revenueCsvLines } from '../metrics/revenue-csv.js';
import { hasOrders } from '../domain/stores.js';
import { formatPeriod } from './format.js';
import { frenchComparedRevenueCsvPieces, frenchRevenueCsvPieces } from './revenue-csv-fr.js';
import { comparedReports } from '../metrics/revenue-compare.js';
import { joinInSlices } from '../limits/time-slice.js';
import type { Comparison } from '../query/compare.js';
import { GRANULARITIES, isGranularity, type Granularity } from '../query/dates.js';
import { comparedView, GROUPINGS, plainView } from './revenue-views.js';
import { buildingNotice, isSnapshotBuilding } from './revenue-building.js';
import { html, trusted, type Html } from './html.js';
import { page, selectField } from './layout.js';
import {
  chosenComparison,
  chosenPeriod,
  COMPARISONS,
  dayField,
  type CompareChoice,
} from './period-choice.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { RevenueQuery } from './forms.js';
import type { WebTools } from './web-tools.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The report engine of the API (src/app.ts), shared so that both give the same figures (S3). */
    reportEngine: ReportEngine;
  }
}

interface Period {
  from: string;
  to: string;
  granularity: Granularity;
  compare: CompareChoice;
  /** The comparison period (PC1), when one is chosen and the period is valid. */
  comparison?: Comparison;
  errors: { from?: string; to?: string; granularity?: string; compare?: string };
}

/** G2's values; an emptied list means the default. The value itself is never shown back. */
function grouping(text: string | undefined): { granularity: Granularity; error?: string } {
  if (!text) return { granularity: 'day' };
  if (isGranularity(text)) return { granularity: text };
  return { granularity: 'day', error: 'Regroupement invalide : jour, semaine, mois, trimestre ou année.' };
}

/** The period, the grouping and the comparison chosen, each problem next to the field at fault. */
function choice(query: Record<string, string | undefined>): Period {
  const chosen = chosenPeriod(query);
  const { granularity, error } = grouping(query.granularity);
  const { error: compareError, ...compared } = chosenComparison(query.compare, chosen);
  const errors: Period['errors'] = { ...chosen.errors };
  if (error) errors.granularity = error;
  if (compareError) errors.compare = compareError;
  return { ...chosen, granularity, ...compared, errors };
}

const hasErrors = (chosen: Period): boolean =>
  Boolean(chosen.errors.from || chosen.errors.to || chosen.errors.granularity || chosen.errors.compare);

const groupingField = (chosen: Period): Html =>
  selectField({
    id: 'granularity',
    label: 'Regroupement',
    options: GRANULARITIES.map((g) => ({ value: g, option: GROUPINGS[g].option })),
    selected: chosen.granularity,
    error: chosen.errors.granularity,
  });

const compareField = (chosen: Period): Html =>
  selectField({
    id: 'compare',
    label: 'Comparer à',
    options: COMPARISONS,
    selected: chosen.compare,
    error: chosen.errors.compare,
  });

/** The API's period rules (P3, P4); a problem is shown next to the field at fault. */
/** The CSV link's query: the page's own choice, each value encoded (`compare` only when chosen). */
const csvQuery = (chosen: Period): string =>
  new URLSearchParams({
    from: chosen.from,
    to: chosen.to,
    granularity: chosen.granularity,
    ...(chosen.compare ? { compare: chosen.compare } : {}),
  }).toString();

const CSV_FORMS = [
  { path: '/reports/revenue.csv', suffix: '', plain: revenueCsvLines, compared: comparedRevenueCsvLines },
  {
    path: '/reports/revenue-excel.csv',
    suffix: '-excel',
    plain: frenchRevenueCsvPieces,
    compared: frenchComparedRevenueCsvPieces,
  },
] as const;

/** Why a CSV request is refused, in a word (the page itself says it next to the field). */
function csvRefusal(chosen: Period): string | undefined {
  if (chosen.errors.from || chosen.errors.to) return 'Période invalide';
  if (chosen.errors.granularity) return 'Regroupement invalide';
  if (chosen.errors.compare) return 'Comparaison invalide';
  return undefined;
}

/** The two CSV links, each saying what it is for. */
const downloads = (query: string): Html =>
  html`<div class="downloads">
    <a class="button secondary" href="/reports/revenue-excel.csv?${query}" download
      >CSV pour Excel (français)</a
    >
    <a class="button secondary" href="/reports/revenue.csv?${query}" download>CSV de l’API</a>
    <p class="muted">
      « CSV pour Excel » s’ouvre directement dans Excel ou LibreOffice en français : colonnes en français,
      séparateur « ; », virgule décimale, dates JJ/MM/AAAA. « CSV de l’API » a les colonnes et les nombres de
      l’API (séparateur « , », point décimal), pour un programme ou un tableur réglé en anglais.
    </p>
  </div>`;

/**
 * Nothing to show (issue 30, item 4): a new organization is told where orders come from; one
 * whose orders all fall outside the period is told to widen it, not shown rows of zeros.
 */
function emptyState(anyOrder: boolean, chosen: Period): Html {
  if (!anyOrder)
    return html`<section class="card empty" id="empty-state">
      <h2>Aucune commande pour l’instant</h2>
      <p>
        Les revenus s’affichent dès que des commandes arrivent. Sur la page
        <a href="/settings/stores">Boutiques</a>, connectez une boutique WooCommerce ou Shopify (son
        historique est importé tout seul), ou importez un fichier de commandes (CSV ou NDJSON).
      </p>
      <p><a class="button" href="/settings/stores">Aller à Boutiques</a></p>
    </section>`;
  const wider = new URLSearchParams({
    from: defaultWiderStart(chosen.to),
    to: chosen.to,
    granularity: 'month',
  }).toString();
  return html`<section class="card empty" id="empty-state">
    <h2>Aucune commande sur cette période</h2>
    <p>
      Aucune commande comptée
      ${formatPeriod(chosen.from, chosen.to)}${chosen.comparison ? ', ni sur la période de comparaison' : ''}.
      Choisissez une période plus large, ou vérifiez les statuts exclus dans les
      <a href="/settings/report">paramètres des rapports</a>.
    </p>
    <p><a class="button secondary" href="/reports/revenue?${wider}">Voir les 12 derniers mois</a></p>
  </section>`;
}

/** The first day of the twelve months that end on `to` (a wider period to suggest). */
function defaultWiderStart(to: string): string {
  const start = new Date(`${to}T00:00:00Z`);
  if (start.getUTCFullYear() < 2) return to;
  start.setUTCDate(1);
  start.setUTCMonth(start.getUTCMonth() - 11);
  return start.toISOString().slice(0, 10);
}

export async function revenuePage(plain: FastifyInstance, tools: WebTools): Promise<void> {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>();
  const session = tools.session;

  app.get(
    '/reports/revenue',
    { schema: { querystring: RevenueQuery }, preHandler: tools.requireSession },
    async (request, reply) => {
      const org = session(request).organization;
      const chosen = choice(request.query);
      const context = tools.context(request, reply);
      const picker = html`<form
        method="get"
        action="/reports/revenue"
        class="card period-form"
        aria-label="Période"
      >
        <div>${dayField('from', 'Du', chosen.from, chosen.errors.from)}</div>
        <div>${dayField('to', 'Au', chosen.to, chosen.errors.to)}</div>
        <div>${groupingField(chosen)}</div>
        <div>${compareField(chosen)}</div>
        <div class="submit"><button>Afficher</button></div>
        <p class="muted">
          Jours UTC, de minuit à minuit, comme l’API. La première et la dernière période d’un regroupement
          peuvent être partielles : seuls les jours choisis comptent.
        </p>
      </form>`;
      if (hasErrors(chosen)) {
        return tools.render(reply, page(context, 'Revenus', picker), 400);
      }
      const view = await (
        chosen.comparison
          ? comparedView(app.reportEngine, org, chosen, chosen.comparison)
          : plainView(app.reportEngine, org, chosen)
      ).catch((error: unknown) => {
        if (!isSnapshotBuilding(error)) throw error;
        return error; // issue 28: « Calcul en cours… », reloaded when it should be ready
      });
      if (isSnapshotBuilding(view)) {
        const body = html`${picker} ${buildingNotice(view.retryAfterS)}`;
        reply.header('retry-after', String(view.retryAfterS));
        const options = { refreshSeconds: view.retryAfterS };
        return tools.render(reply, page(context, 'Revenus', body, undefined, options), 503);
      }
      if (view.empty) {
        const anyOrder = await hasOrders(tools.db, org.id);
        return tools.render(reply, page(context, 'Revenus', html`${picker} ${emptyState(anyOrder, chosen)}`));
      }
      const query = csvQuery(chosen);
      const body = html`${picker} ${view.figures}
        <section class="card chart" aria-label="Graphique">
          ${trusted(view.chart)}
          <p class="muted">Les valeurs du graphique sont dans le tableau ci-dessous.</p>
        </section>
        <section class="card" aria-labelledby="table-title">
          <h2 id="table-title" class="table-title">Détail par période</h2>
          ${view.table}
          <p class="muted">
            CA net selon vos <a href="/settings/report">paramètres des rapports</a> ; mêmes chiffres que
            l’API. Les remboursements comprennent leur part de taxes et de livraison, qui n’est déduite qu’une
            fois du CA net.
          </p>
          ${downloads(query)}
        </section>`;
      return tools.render(reply, page(context, 'Revenus', body));
    },
  );

  // Two downloads of the same table (issue 30, item 5): the API's CSV (V1) for programs, and the
  // French spreadsheet's (`;`, decimal comma, BOM) for Excel or LibreOffice in French.
  for (const form of CSV_FORMS) {
    app.get(
      form.path,
      { schema: { querystring: RevenueQuery }, preHandler: tools.requireSession },
      async (request, reply) => {
        const chosen = choice(request.query);
        const refusal = csvRefusal(chosen);
        if (refusal) return reply.code(400).type('text/plain; charset=utf-8').send(refusal);
        const org = session(request).organization;
        const { comparison } = chosen;
        // Up to 733 lines, written in time slices (issue 26, item 6).
        const csv = await joinInSlices(
          comparison
            ? form.compared(
                await comparedReports(app.reportEngine, org, chosen, comparison, chosen.granularity),
              )
            : form.plain(
                await revenueReport(app.reportEngine, org, chosen.from, chosen.to, chosen.granularity),
              ),
        );
        const grouped = chosen.granularity === 'day' ? '' : `-${chosen.granularity}`;
        const compared = comparison ? `-comparaison-${comparison.from}-${comparison.to}` : '';
        return reply
          .header(
            'content-disposition',
            `attachment; filename="revenus-${chosen.from}-${chosen.to}${grouped}${compared}${form.suffix}.csv"`,
          )
          .header('cache-control', 'no-store')
          .type('text/csv; charset=utf-8')
          .send(csv);
      },
    );
  }
}
