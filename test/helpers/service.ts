// A running service for integration tests: fresh database, an organization with a key, orders
// imported through the real import path, and the Fastify app (in-process and on a real socket).
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppDeps } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createApiKey } from '../../src/auth/api-keys.js';
import { createOrganization, setSubscription, type Organization } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { openTestDatabase, type TestDatabase } from './database.js';

export interface TestService extends TestDatabase {
  app: FastifyInstance;
  baseUrl: string;
  addOrganization(
    name: string,
    orders: Record<string, unknown>[],
  ): Promise<{ org: Organization; key: string }>;
  get(path: string, key?: string, headers?: Record<string, string>): Promise<Response>;
}

/** Listens on a free loopback port; its base URL. */
async function listenOnLoopback(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

/** GET with the key in the Authorization header, as clients call the API. */
const getter =
  (baseUrl: string) =>
  (path: string, key?: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${baseUrl}${path}`, {
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    });

export async function startTestService(
  env: Record<string, string> = {},
  deps: Pick<AppDeps, 'storeCa' | 'logger'> = {},
): Promise<TestService> {
  const database = await openTestDatabase(env);
  const app = await buildApp(database.config, { db: database.db, logger: false, ...deps });
  const baseUrl = await listenOnLoopback(app);
  return {
    ...database,
    app,
    baseUrl,
    async addOrganization(name, orders) {
      const org = await createOrganization(database.db, { name });
      await setSubscription(database.db, org.id, 'active');
      if (orders.length > 0) {
        const result = await importOrderRecords(database.db, org.id, orders);
        // A fixture the import refuses (I1) would quietly leave an empty organization.
        if (result.refused) throw new Error(`fixture refused: ${JSON.stringify(result).slice(0, 500)}`);
      }
      const { key } = await createApiKey(database.db, org.id, `${name} tests`);
      return { org, key };
    },
    get: getter(baseUrl),
    async cleanup() {
      await app.close();
      await database.cleanup();
    },
  };
}

/**
 * A second app on the service's database that answers with the SQL engine alone
 * (REPORT_ENGINE=sql, the reference), beside the service's default engine.
 */
export async function startSqlEngineApp(
  service: TestService,
): Promise<Pick<TestService, 'baseUrl' | 'get'> & { close(): Promise<void> }> {
  const app = await buildApp(
    {
      ...service.config,
      secretKey: service.config.secretKey, // a getter, not copied by the spread
      reportEngine: 'sql',
    },
    { db: service.db, logger: false },
  );
  const baseUrl = await listenOnLoopback(app);
  return { baseUrl, get: getter(baseUrl), close: () => app.close() };
}

/**
 * Another app on a database already open, its configuration the database's variables with env
 * over them: its own in-memory limits (R2, logins) and settings, without the seconds another
 * embedded database costs to start.
 */
export async function startTestApp(
  database: Pick<TestDatabase, 'db' | 'env'>,
  env: Record<string, string>,
): Promise<Pick<TestService, 'app' | 'baseUrl' | 'get'> & { close(): Promise<void> }> {
  const app = await buildApp(loadConfig({ ...database.env, ...env }), { db: database.db, logger: false });
  const baseUrl = await listenOnLoopback(app);
  return { app, baseUrl, get: getter(baseUrl), close: () => app.close() };
}
