// A running service for integration tests: fresh database, an organization with a key, orders
// imported through the real import path, and the Fastify app (in-process and on a real socket).
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
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

export async function startTestService(env: Record<string, string> = {}): Promise<TestService> {
  const database = await openTestDatabase(env);
  const app = await buildApp(database.config, { db: database.db, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
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
        if ('refused' in result && result.refused)
          throw new Error(`fixture refused: ${JSON.stringify(result).slice(0, 500)}`);
      }
      const { key } = await createApiKey(database.db, org.id, `${name} tests`);
      return { org, key };
    },
    get(path, key, headers = {}) {
      return fetch(`${baseUrl}${path}`, {
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
      });
    },
    async cleanup() {
      await app.close();
      await database.cleanup();
    },
  };
}
