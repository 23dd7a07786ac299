// Issue 29, item 4: what /metrics shows of this app: every response's time by route pattern
// (never the path itself: it would carry ids), method and status; the gauges read at each scrape
// (snapshots, answer memory, report slots, connector lag); and the listener that serves them.
import type { FastifyInstance } from 'fastify';
import type { Queryable } from '../db/database.js';
import { connectorLagByPlatform } from '../domain/connector-lag.js';
import type { AnswerBudget } from '../limits/answer-budget.js';
import type { ReportSlots } from '../limits/report-slots.js';
import type { ReportEngine } from '../metrics/engine.js';
import { observeEngine } from '../metrics/report-engine.js';
import {
  httpRequestDuration,
  observeAnswerBytes,
  observeConnectorLag,
  observeReportsQueued,
  observeReportsRunning,
} from '../observability/metrics.js';
import { metricsListener } from './metrics-listener.js';

export interface InstrumentationDeps {
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  readonly db: Queryable;
  /** The engine behind the slots (the columnar one: its snapshots). */
  readonly computing: ReportEngine;
  readonly slots: ReportSlots;
  readonly answers: AnswerBudget;
}

const METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** A scrape never waits long for the database (the embedded one may be busy with a report). */
const LAG_READ_MS = 2_000;

function lagWithin(db: Queryable): Promise<Map<string, number>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Map<string, number>>((resolve) => {
    timer = setTimeout(() => resolve(new Map()), LAG_READ_MS);
  });
  return Promise.race([connectorLagByPlatform(db), late]).finally(() => clearTimeout(timer));
}

async function instrumentationPlugin(app: FastifyInstance, deps: InstrumentationDeps): Promise<void> {
  app.addHook('onResponse', (request, reply, done) => {
    httpRequestDuration.observe(
      {
        route: request.routeOptions.url ?? 'unmatched',
        method: METHODS.has(request.method) ? request.method : 'other',
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
  const stops = [
    observeEngine(deps.computing),
    observeAnswerBytes(() => deps.answers.heldBytes),
    observeReportsRunning(() => deps.slots.running),
    observeReportsQueued(() => deps.slots.queued),
    observeConnectorLag(() => lagWithin(deps.db)),
  ];
  app.addHook('onClose', async () => stops.forEach((stop) => stop()));
  await metricsListener(app, { port: deps.metricsPort, host: deps.metricsHost });
}

// On the root context (as fastify-plugin does), so that the hook sees every route.
export const instrumentation = Object.assign(instrumentationPlugin, {
  [Symbol.for('skip-override')]: true,
});
