// Reports → Revenue: period picker (UTC days) and grouping (G2: day, week, month, quarter or year),
// chart, table per bucket with totals, CSV download.
// Figures come from revenueReport(), run by the API's own report engine (S3).
import type { FastifyInstance } from 'fastify';
import type { ReportEngine } from '../metrics/engine.js';
import { revenueReport, type RevenueDay } from '../metrics/revenue.js';
import { revenueCsv } from '../metrics/revenue-csv.js';
import { GRANULARITIES, isGranularity, type Granularity } from '../query/dates.js';
import { isPeriodProblem, requirePeriod, resolvePeriod } from '../query/period.js';
import { bucketLabel, revenueChartSvg } from './revenue-chart.js';
import { html, trusted, type Html } from './html.js';
import { field, page } from './layout.js';
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
  errors: { from?: string; to?: string; granularity?: string };
}

/** The choices of the « Regroupement » list, and the table's first column header for each. */
const GROUPINGS: Record<Granularity, { option: string; header: string }> = {
  day: { option: 'Jour', header: 'Jour' },
  week: { option: 'Semaine', header: 'Semaine du' },
  month: { option: 'Mois', header: 'Mois' },
  quarter: { option: 'Trimestre', header: 'Trimestre' },
  year: { option: 'Année', header: 'Année' },
};

/** G2's values; an emptied list means the default. The value itself is never shown back. */
function grouping(text: string | undefined): { granularity: Granularity; error?: string } {
  if (!text) return { granularity: 'day' };
  if (isGranularity(text)) return { granularity: text };
  return { granularity: 'day', error: 'Regroupement invalide : jour, semaine, mois, trimestre ou année.' };
}

/** The period and the grouping chosen, each problem next to the field at fault. */
function choice(query: Record<string, string | undefined>): Period {
  const chosen = period(query);
  const { granularity, error } = grouping(query.granularity);
  return { ...chosen, granularity, errors: error ? { ...chosen.errors, granularity: error } : chosen.errors };
}

const hasErrors = (chosen: Period): boolean =>
  Boolean(chosen.errors.from || chosen.errors.to || chosen.errors.granularity);

/** The Regroupement list, the current choice selected, its error announced with it. */
function groupingField(chosen: Period): Html {
  const error = chosen.errors.granularity;
  const invalid = error ? html` aria-invalid="true" aria-describedby="granularity-error"` : '';
  return html`<label for="granularity">Regroupement</label>
    <select id="granularity" name="granularity" ${invalid}>
      ${GRANULARITIES.map(
        (g) =>
          html`<option value="${g}" ${g === chosen.granularity ? html`selected` : ''}>
            ${GROUPINGS[g].option}
          </option>`,
      )}
    </select>
    ${error ? html`<p class="error" id="granularity-error">${error}</p>` : ''}`;
}

/** A row's label: the day itself for days and weeks (« Semaine du »), else the bucket's name. */
const rowLabel = (date: string, granularity: Granularity): string =>
  granularity === 'day' || granularity === 'week' ? date : bucketLabel(date, granularity);

/** The API's period rules (P3, P4); a problem is shown next to the field at fault. */
function period(query: Record<string, string | undefined>): Omit<Period, 'granularity'> {
  // An emptied date field means "the default", as if it were absent.
  const result = resolvePeriod(query.from || undefined, query.to || undefined);
  if (!isPeriodProblem(result)) return { ...result, errors: {} };
  if (result.problem === 'from-after-to') {
    return {
      from: result.from,
      to: result.to,
      errors: { from: 'La date de début est après la date de fin.' },
    };
  }
  const fallback = requirePeriod(undefined, undefined); // the defaults cannot be wrong
  return { ...fallback, errors: { [result.parameter]: 'Date invalide (AAAA-MM-JJ).' } };
}

/** The CSV link's query: the page's own choice, each value encoded. */
const csvQuery = (chosen: Period): string =>
  new URLSearchParams({ from: chosen.from, to: chosen.to, granularity: chosen.granularity }).toString();

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
      const money = new Intl.NumberFormat('fr-FR', { style: 'currency', currency: org.currency });
      const picker = html`<form
        method="get"
        action="/reports/revenue"
        class="card actions"
        aria-label="Période"
      >
        <div>
          ${field({ id: 'from', label: 'Du', type: 'date', value: chosen.from, error: chosen.errors.from })}
        </div>
        <div>
          ${field({ id: 'to', label: 'Au', type: 'date', value: chosen.to, error: chosen.errors.to })}
        </div>
        <div>${groupingField(chosen)}</div>
        <div><button>Afficher</button></div>
        <p class="muted">
          Jours UTC, de minuit à minuit, comme l’API. La première et la dernière période d’un regroupement
          peuvent être partielles : seuls les jours choisis comptent.
        </p>
      </form>`;
      if (hasErrors(chosen)) {
        return tools.render(reply, page(context, 'Revenus', picker), 400);
      }
      const report = await revenueReport(app.reportEngine, org, chosen.from, chosen.to, chosen.granularity);
      const row = (label: Html | string, d: Omit<RevenueDay, 'date'>) =>
        html`<th scope="row">${label}</th>
          <td class="num">${d.orders}</td>
          <td class="num">${money.format(d.grossSales)}</td>
          <td class="num">${money.format(d.refunds)}</td>
          <td class="num">${money.format(d.taxes)}</td>
          <td class="num">${money.format(d.shipping)}</td>
          <td class="num">${money.format(d.fees)}</td>
          <td class="num">${money.format(d.netRevenue)}</td>`;
      const query = csvQuery(chosen);
      const body = html`${picker}
        <section class="card chart" aria-label="Graphique">
          ${trusted(revenueChartSvg(report.days, { currency: org.currency, granularity: report.granularity }))}
        </section>
        <div class="actions">
          <a class="button secondary" href="/reports/revenue.csv?${query}" download>Télécharger le CSV</a>
          <span class="muted"
            >CA net selon vos <a href="/settings/report">paramètres des rapports</a> ; mêmes chiffres que
            l’API. Les remboursements comprennent leur part de taxes et de livraison, qui n’est déduite qu’une
            fois du CA net.</span
          >
        </div>
        <div class="table-wrap">
          <table id="revenue-table">
            <thead>
              <tr>
                <th scope="col">${GROUPINGS[report.granularity].header}</th>
                <th class="num" scope="col">Commandes</th>
                <th class="num" scope="col">CA brut</th>
                <th class="num" scope="col">Remboursements</th>
                <th class="num" scope="col">Taxes</th>
                <th class="num" scope="col">Livraison</th>
                <th class="num" scope="col">Frais</th>
                <th class="num" scope="col">CA net</th>
              </tr>
            </thead>
            <tbody>
              ${report.days.map(
                (d) =>
                  html`<tr data-date="${d.date}">
                    ${row(rowLabel(d.date, report.granularity), d)}
                  </tr>`,
              )}
            </tbody>
            <tfoot>
              <tr id="revenue-totals">
                ${row('Total', report.totals)}
              </tr>
            </tfoot>
          </table>
        </div>`;
      return tools.render(reply, page(context, 'Revenus', body));
    },
  );

  app.get(
    '/reports/revenue.csv',
    { schema: { querystring: RevenueQuery }, preHandler: tools.requireSession },
    async (request, reply) => {
      const chosen = choice(request.query);
      if (chosen.errors.from || chosen.errors.to)
        return reply.code(400).type('text/plain; charset=utf-8').send('Période invalide');
      if (chosen.errors.granularity)
        return reply.code(400).type('text/plain; charset=utf-8').send('Regroupement invalide');
      const report = await revenueReport(
        app.reportEngine,
        session(request).organization,
        chosen.from,
        chosen.to,
        chosen.granularity,
      );
      const grouped = chosen.granularity === 'day' ? '' : `-${chosen.granularity}`;
      return reply
        .header(
          'content-disposition',
          `attachment; filename="revenus-${chosen.from}-${chosen.to}${grouped}.csv"`,
        )
        .header('cache-control', 'no-store')
        .type('text/csv; charset=utf-8')
        .send(revenueCsv(report));
    },
  );
}
