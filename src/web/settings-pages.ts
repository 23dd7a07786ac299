// Settings → Report settings (S1, S2) and Settings → Subscription.
import type { FastifyInstance } from 'fastify';
import { DEDUCTIONS, type Deduction } from '../catalog.js';
import { excludableStatuses, isSubscriptionActive, updateReportSettings } from '../domain/organizations.js';
import { formatLongDay, statusLabel } from './format.js';
import { html } from './html.js';
import { csrfField, page } from './layout.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ReportSettingsForm, SettingsQuery } from './forms.js';
import type { WebTools } from './web-tools.js';

const DEDUCTION_LABELS: Record<Deduction, string> = {
  refunds: 'Remboursements',
  taxes: 'Taxes',
  shipping: 'Frais de livraison',
  fees: 'Frais (paiement, commissions)',
};

export async function settingsPages(plain: FastifyInstance, tools: WebTools): Promise<void> {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>();
  const session = tools.session;

  app.get(
    '/settings/report',
    { schema: { querystring: SettingsQuery }, preHandler: tools.requireSession },
    async (request, reply) => {
      const org = session(request).organization;
      const statuses = await excludableStatuses(tools.db, org);
      const context = tools.context(request, reply);
      const body = html`<form method="post" action="/settings/report" class="card">
        ${csrfField(context)}
        <fieldset>
          <legend>Statuts exclus</legend>
          <p class="muted">
            Les commandes dans ces statuts ne comptent nulle part : ni dans les chiffres, ni comme première
            commande d’un client.
          </p>
          ${statuses.map((status, i) => html`<label for="status-${i}"><input type="checkbox" id="status-${i}" name="excluded" value="${status}" ${org.settings.excludedStatuses.includes(status) ? ' checked' : ''} /> ${statusLabel(status)}</label>`)}
        </fieldset>
        <fieldset>
          <legend>Déductions du CA net</legend>
          <p class="muted">
            Retirées du total de chaque commande pour obtenir son CA net ; un montant remboursé n’est jamais
            retiré deux fois.
          </p>
          ${DEDUCTIONS.map((d) => html`<label for="deduction-${d}"><input type="checkbox" id="deduction-${d}" name="deductions" value="${d}" ${org.settings.deductions.includes(d) ? ' checked' : ''} /> ${DEDUCTION_LABELS[d]}</label>`)}
        </fieldset>
        <div class="actions"><button>Enregistrer</button></div>
      </form>`;
      const notice = request.query.saved
        ? 'Paramètres enregistrés : le rapport Revenus et l’API en tiennent compte dès maintenant.'
        : undefined;
      return tools.render(reply, page(context, 'Paramètres des rapports', body, notice));
    },
  );

  app.post(
    '/settings/report',
    { schema: { body: ReportSettingsForm }, preHandler: [tools.requireSession, app.csrfProtection] },
    async (request, reply) => {
      await updateReportSettings(tools.db, session(request).organization.id, {
        excludedStatuses: request.body.excluded ?? [],
        deductions: request.body.deductions ?? [],
      });
      return reply.redirect('/settings/report?saved=1', 303);
    },
  );

  app.get('/settings/subscription', { preHandler: tools.requireSession }, async (request, reply) => {
    const org = session(request).organization;
    const active = isSubscriptionActive(org);
    const state =
      org.subscriptionState === 'trialing'
        ? org.trialEndsOn
          ? active
            ? `Essai gratuit jusqu’au ${formatLongDay(org.trialEndsOn)} inclus.`
            : `Essai gratuit terminé le ${formatLongDay(org.trialEndsOn)}.`
          : 'Essai gratuit en cours.'
        : org.subscriptionState === 'active'
          ? 'Abonnement actif.'
          : 'Abonnement arrêté.';
    const body = html`<div class="card">
      <p><strong>${state}</strong></p>
      <p>
        ${active ? 'Vos clés API fonctionnent.' : html`<span class="alert">Vos clés API sont refusées (401) jusqu’à la reprise de l’abonnement.</span>`}
      </p>
      <p class="muted">Organisation : ${org.name} (${org.slug}) · devise ${org.currency}</p>
    </div>`;
    return tools.render(reply, page(tools.context(request, reply), 'Abonnement', body));
  });
}
