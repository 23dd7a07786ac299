// What every page module gets from the web application (web-app.ts builds it): the database,
// the page context, the session guard and the renderer. Its own module, so that the pages do not
// import the application that registers them.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WebSession } from '../auth/sessions.js';
import type { Database } from '../db/database.js';
import type { StoreSyncSetup } from '../ingest/connectors/registry.js';
import type { PageContext } from './layout.js';

export interface WebTools {
  readonly db: Database;
  context(request: FastifyRequest, reply: FastifyReply): PageContext;
  /** The signed-in person of a route behind requireSession (a route without it gets a 401). */
  session(request: FastifyRequest): WebSession;
  /** preHandler: a signed-in person, else off to the login page. */
  requireSession(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  render(reply: FastifyReply, html: { text: string }, status?: number): FastifyReply;
  cookieSecure(request: FastifyRequest): boolean;
  /** IMPORT_MAX_BYTES. */
  readonly importMaxBytes: number;
  readonly stores: StoreSyncAccess;
}

/** Connected stores (issue 11): the connectors, this instance's worker, the webhook address base. */
export interface StoreSyncAccess {
  readonly setup: StoreSyncSetup;
  /** Tells this instance's worker to look for due stores now. */
  kick(): void;
  /** PUBLIC_URL, else the address the request came to. */
  readonly publicUrl: string | undefined;
}
