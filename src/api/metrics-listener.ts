// Issue 29, item 4: GET /metrics on a listener of its own (METRICS_PORT on METRICS_HOST, loopback
// by default), never on the public port: the figures name no organization, but how busy the
// service is, and how many snapshots it holds, is for the operator. Off unless METRICS_PORT is set.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { exposition } from '../observability/metrics.js';

export interface MetricsListenerOptions {
  readonly port: number | undefined;
  readonly host: string;
}

function answer(request: http.IncomingMessage, response: http.ServerResponse): void {
  const path = (request.url ?? '/').split('?')[0];
  if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
    response
      .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
      .end('Seul GET /metrics est servi ici.\n');
    return;
  }
  exposition().then(
    ({ body, contentType }) => {
      response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    },
    () =>
      response
        .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Mesures indisponibles.\n'),
  );
}

/** Listens once the app is ready, closes with it; its address for the tests (port 0: any). */
export async function metricsListener(app: FastifyInstance, options: MetricsListenerOptions): Promise<void> {
  const { port, host } = options;
  if (port === undefined) return;
  const server = http.createServer(answer);
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  app.decorate('metricsAddress', (): AddressInfo | undefined => {
    const address = server.address();
    return address && typeof address === 'object' ? address : undefined;
  });
  app.addHook(
    'onReady',
    () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      }),
  );
  app.addHook(
    'onClose',
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Where /metrics listens (undefined when METRICS_PORT is unset or not yet listening). */
    metricsAddress?: () => AddressInfo | undefined;
  }
}
