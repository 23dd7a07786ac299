// Reports → Produits (issue 27, item 5): what was sold (SPEC section 15) over a period of UTC days,
// grouped by product, variant, SKU or category, optionally compared (PC1): the top sellers by net
// sales as bars, a table sorted on the server (L7), the API's CSV. Figures from the API's report
// engine with the API's own query (S3), so the page, its CSV and `GET /api/reports/tabular` agree.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { tabularBody } from '../domain/tabular-report.js';
import type { Organization } from '../domain/organizations.js';
import { hasOrderLines } from '../domain/stores.js';
import { joinInSlices } from '../limits/time-slice.js';
import {
  PRODUCT_METRICS,
  productsQuery,
  runProducts,
  totalsQuery,
  type ProductGroup,
} from '../metrics/products.js';
import { DEFAULT_LIMIT } from '../query/parse.js';
import { formatPeriod } from './format.js';
import { ProductsQuery } from './forms.js';
import { html, trusted, type Html } from './html.js';
import { page, selectField } from './layout.js';
import { COMPARISONS, dayField } from './period-choice.js';
import {
  hasErrors,
  productsAddress,
  productsChoice,
  sortText,
  type ProductsForm,
} from './products-choice.js';
import { frenchProductsCsvPieces } from './products-csv-fr.js';
import { GROUP_WORDS, PRODUCT_COLUMNS } from './products-table.js';
import { productsView, TABLE_ROWS } from './products-views.js';
import { buildingNotice, isSnapshotBuilding } from './revenue-building.js';
import type { WebTools } from './web-tools.js';

const PATH = '/reports/products';
const CSV_PATH = '/reports/products.csv';
const EXCEL_PATH = '/reports/products-excel.csv';
const TITLE = 'Produits';

/** « Trier par »: each figure, largest first, and the names A to Z (the headers sort both ways). */
function sortOptions(form: ProductsForm): { value: string; option: string }[] {
  const options = [
    ...PRODUCT_COLUMNS.map((c) => ({ value: `-${c.id}`, option: `${c.label} (décroissant)` })),
    { value: 'name', option: `${GROUP_WORDS[form.group].option} (A → Z)` },
  ];
  const current = sortText(form.sort);
  if (!options.some((o) => o.value === current)) {
    const column = PRODUCT_COLUMNS.find((c) => c.id === form.sort.key);
    const label = column?.label ?? GROUP_WORDS[form.group].option;
    const way = form.sort.key === 'name' ? 'Z → A' : 'croissant';
    options.push({ value: current, option: `${label} (${way})` });
  }
  return options;
}

function picker(form: ProductsForm): Html {
  const groups = (Object.keys(GROUP_WORDS) as ProductGroup[]).map((g) => ({
    value: g,
    option: GROUP_WORDS[g].option,
  }));
  return html`<form method="get" action="${PATH}" class="card period-form" aria-label="Période">
    <div>${dayField('from', 'Du', form.from, form.errors.from)}</div>
    <div>${dayField('to', 'Au', form.to, form.errors.to)}</div>
    <div>
      ${selectField({ id: 'group', label: 'Regrouper par', options: groups, selected: form.group, error: form.errors.group })}
    </div>
    <div>
      ${selectField({ id: 'compare', label: 'Comparer à', options: COMPARISONS, selected: form.compare, error: form.errors.compare })}
    </div>
    <div>
      ${selectField({ id: 'sort', label: 'Trier par', options: sortOptions(form), selected: sortText(form.sort), error: form.errors.sort })}
    </div>
    <div class="submit"><button>Afficher</button></div>
    <p class="muted">
      Jours UTC, de minuit à minuit, comme l’API. Montants hors taxes, comme les lignes importées.
    </p>
  </form>`;
}

/**
 * Nothing to show: an organization without any order line is told where lines come from; one
 * whose lines all fall outside the period is told to widen it, not shown an empty table.
 */
function emptyState(anyLine: boolean, form: ProductsForm): Html {
  if (!anyLine)
    return html`<section class="card empty" id="empty-state">
      <h2>Aucun produit vendu pour l’instant</h2>
      <p>
        Cette page montre ce que vos commandes ont vendu : il lui faut les lignes des commandes (produit,
        quantité, montants). Sur la page <a href="/settings/stores">Boutiques</a>, connectez une boutique
        WooCommerce ou Shopify (ses commandes arrivent avec leurs lignes), ou importez un fichier de commandes
        avec leurs lignes : le champ <code>lines</code> en NDJSON, ou une ligne de produit par ligne de CSV
        (voir le fichier d’exemple proposé sur la page Boutiques).
      </p>
      <p><a class="button" href="/settings/stores">Aller à Boutiques</a></p>
    </section>`;
  const wider = productsAddress(PATH, { ...form, from: twelveMonthsBefore(form.to) });
  return html`<section class="card empty" id="empty-state">
    <h2>Aucune vente de produit sur cette période</h2>
    <p>
      Aucune ligne de commande comptée
      ${formatPeriod(form.from, form.to)}${form.comparison ? ', ni sur la période de comparaison' : ''}.
      Choisissez une période plus large, ou vérifiez les statuts exclus dans les
      <a href="/settings/report">paramètres des rapports</a>.
    </p>
    <p><a class="button secondary" href="${wider}">Voir les 12 derniers mois</a></p>
  </section>`;
}

/** The first day of the twelve months that end on `to`. */
function twelveMonthsBefore(to: string): string {
  const start = new Date(`${to}T00:00:00Z`);
  if (start.getUTCFullYear() < 2) return to;
  start.setUTCDate(1);
  start.setUTCMonth(start.getUTCMonth() - 11);
  return start.toISOString().slice(0, 10);
}

/** The two CSV links, each saying what it is for (as on the Revenue page). */
function download(form: ProductsForm): Html {
  return html`<div class="downloads">
    <a class="button secondary" href="${productsAddress(EXCEL_PATH, form)}" download
      >CSV pour Excel (français)</a
    >
    <a class="button secondary" href="${productsAddress(CSV_PATH, form)}" download>CSV de l’API</a>
    <p class="muted">
      « CSV pour Excel » s’ouvre directement dans Excel ou LibreOffice en français : les colonnes du tableau,
      séparateur « ; », virgule décimale, la ligne Total à la fin. « CSV de l’API » a les colonnes
      <code>${PRODUCT_METRICS.join(', ')}</code> (séparateur « , », point décimal), pour un programme. Les
      deux dans l’ordre du tableau, jusqu’à ${DEFAULT_LIMIT.toLocaleString('fr-FR')} lignes.
    </p>
  </div>`;
}

/** The file name of a download: the grouping, the period and the comparison's. */
function fileName(form: ProductsForm, suffix: string): string {
  const compared = form.comparison ? `-comparaison-${form.comparison.from}-${form.comparison.to}` : '';
  return `produits-${form.group}-${form.from}-${form.to}${compared}${suffix}.csv`;
}

/** What the table's figures mean, in a shop owner's words (L4, L5). */
function notes(form: ProductsForm, truncated: boolean): Html {
  return html`<p class="muted">
    Ventes nettes = ventes brutes − remises − remboursements, hors taxes ; mêmes chiffres que l’API. «
    Commandes » compte les commandes qui contiennent la ligne : une commande de plusieurs produits compte pour
    chacun, mais une seule fois dans le total, qui compte toutes les commandes de la période comme la page
    Revenus.
    ${
      form.group === 'category'
        ? 'Un produit de plusieurs catégories compte dans chacune : la somme des lignes peut dépasser le total.'
        : ''
    }
    ${truncated ? `Le tableau montre les ${TABLE_ROWS} premières lignes selon le tri ; le CSV les contient toutes.` : ''}
  </p>`;
}

export async function productsPage(plain: FastifyInstance, tools: WebTools): Promise<void> {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    PATH,
    { schema: { querystring: ProductsQuery }, preHandler: tools.requireSession },
    async (request, reply) => {
      const org = tools.session(request).organization;
      const form = productsChoice(request.query);
      const context = tools.context(request, reply);
      const chosen = picker(form);
      if (hasErrors(form)) return tools.render(reply, page(context, TITLE, chosen), 400);
      const view = await productsView(app.reportEngine, org, form, (sort) =>
        productsAddress(PATH, form, sort),
      ).catch((error: unknown) => {
        if (!isSnapshotBuilding(error)) throw error;
        return error; // issue 28: « Calcul en cours… », reloaded when it should be ready
      });
      if (isSnapshotBuilding(view)) {
        reply.header('retry-after', String(view.retryAfterS));
        const body = html`${chosen} ${buildingNotice(view.retryAfterS)}`;
        return tools.render(
          reply,
          page(context, TITLE, body, undefined, { refreshSeconds: view.retryAfterS }),
          503,
        );
      }
      if (view === undefined) {
        const anyLine = await hasOrderLines(tools.db, org.id);
        return tools.render(reply, page(context, TITLE, html`${chosen} ${emptyState(anyLine, form)}`));
      }
      const words = GROUP_WORDS[form.group];
      const body = html`${chosen}
        <section class="card chart" aria-labelledby="chart-title">
          <h2 id="chart-title" class="table-title">Meilleures ventes nettes</h2>
          ${trusted(view.chart)}
          <p class="muted">Les valeurs du graphique sont dans le tableau ci-dessous.</p>
        </section>
        <section class="card" aria-labelledby="table-title">
          <h2 id="table-title" class="table-title">Ventes par ${words.per}</h2>
          ${view.table} ${notes(form, view.truncated)} ${download(form)}
        </section>`;
      return tools.render(reply, page(context, TITLE, body));
    },
  );

  /** A download of the page's query: the form checked as the page checks it, sent as an attachment. */
  const csvRoute = (
    path: string,
    suffix: string,
    csv: (form: ProductsForm, org: Organization) => Promise<{ body: Buffer | string; truncated: boolean }>,
  ) =>
    app.get(
      path,
      { schema: { querystring: ProductsQuery }, preHandler: tools.requireSession },
      async (request, reply) => {
        const form = productsChoice(request.query);
        if (hasErrors(form))
          return reply.code(400).type('text/plain; charset=utf-8').send('Paramètres invalides');
        const { body, truncated } = await csv(form, tools.session(request).organization);
        if (truncated) reply.header('x-rows-truncated', 'true'); // T6, as the API
        return reply
          .header('content-disposition', `attachment; filename="${fileName(form, suffix)}"`)
          .header('cache-control', 'no-store')
          .type('text/csv; charset=utf-8')
          .send(body);
      },
    );

  // The API's CSV (V1) of the same query as the table, up to the API's default limit.
  csvRoute(CSV_PATH, '', async (form, org) => {
    const query = productsQuery(form, DEFAULT_LIMIT);
    const { rows, truncated } = await runProducts(app.reportEngine, org, query);
    return { body: await tabularBody(query, 'csv', rows), truncated };
  });

  // The same rows for a French spreadsheet (products-csv-fr.ts), with the page's total row.
  csvRoute(EXCEL_PATH, '-excel', async (form, org) => {
    const { rows, truncated } = await runProducts(app.reportEngine, org, productsQuery(form, DEFAULT_LIMIT));
    const totals = (await runProducts(app.reportEngine, org, totalsQuery(form))).rows[0] ?? {};
    const sheet = { group: form.group, rows, totals, compared: form.comparison !== undefined };
    return { body: await joinInSlices(frenchProductsCsvPieces(sheet)), truncated };
  });
}
