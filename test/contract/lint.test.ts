// Issue 10, item 3: the live OpenAPI document (GET /api/openapi.json of the in-process app) passes
// Redocly's recommended rules as redocly.yaml sets them and @apidevtools/swagger-parser's
// validation; and it says what the app does: every route under /api/ is one of its paths, every
// query parameter the parse step reads is one of its parameters, every error code of the API's
// statuses is in the `code` enum of that status.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { ERROR_CODES, ERROR_KINDS } from '../../src/errors.js';
import {
  FILTER_DIMENSIONS,
  FILTER_PREFIX,
  parseFormat,
  parseTabularQuery,
  type RawQuery,
} from '../../src/query/parse.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  dereferenced,
  operationsOf,
  type JsonSchema,
  type OpenApiDocument,
} from '../helpers/openapi-document.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REDOCLY = fs.realpathSync(path.join(ROOT, 'node_modules/.bin/redocly'));
const TABULAR = '/api/reports/tabular';
/** The document's own routes: not operations of the API it describes. */
const isDocumentationRoute = (url: string) => url === '/api/openapi.json' || url.startsWith('/api/docs');
/** The statuses the public API answers with a `code` (E3); the others are the web pages' or Node's. */
const API_STATUSES = new Set([400, 401, 404, 405, 408, 429, 431, 500, 503]);

interface RedoclyReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location?: { pointer?: string }[] }[];
}

function redoclyLint(file: string): Promise<{ code: number; report: RedoclyReport; stderr: string }> {
  const args = [REDOCLY, 'lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format=json'];
  const env = {
    ...process.env,
    REDOCLY_TELEMETRY: 'off',
    REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
    NO_COLOR: '1',
  };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: ROOT, env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      try {
        resolve({ code, report: JSON.parse(stdout) as RedoclyReport, stderr });
      } catch {
        reject(new Error(`redocly lint printed no JSON report (exit ${code}):\n${stdout}\n${stderr}`));
      }
    });
  });
}

const problemsOf = (report: RedoclyReport) =>
  report.problems.map((p) => `${p.ruleId} at ${p.location?.[0]?.pointer ?? '?'}: ${p.message}`);

/**
 * The names `read` looks up in a query, each by its name: a `get` or `in` of it. A value read while
 * enumerating the query (Object.entries: a property's descriptor, then its value) is no such
 * lookup; that the query was enumerated is reported apart.
 */
function namesLookedUp(query: Record<string, string>, read: (raw: RawQuery) => void) {
  const named = new Set<string>();
  let enumerated = false;
  let described: string | undefined;
  const watched = new Proxy(query, {
    get(target, name, receiver) {
      if (typeof name === 'string' && name !== described) named.add(name);
      described = undefined;
      return Reflect.get(target, name, receiver) as unknown;
    },
    has(target, name) {
      if (typeof name === 'string') named.add(name);
      return Reflect.has(target, name);
    },
    ownKeys(target) {
      enumerated = true;
      return Reflect.ownKeys(target);
    },
    getOwnPropertyDescriptor(target, name) {
      described = typeof name === 'string' ? name : undefined;
      return Reflect.getOwnPropertyDescriptor(target, name);
    },
  });
  read(watched);
  return { named, enumerated };
}

/** The routes of every Fastify instance created while `build` runs, as `METHOD url`. */
async function routesRegistered(build: () => Promise<FastifyInstance>) {
  const routes: string[] = [];
  const onInitialization = (message: unknown) => {
    const { fastify } = message as { fastify: FastifyInstance };
    fastify.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.push(`${method} ${route.url}`);
    });
  };
  diagnostics.subscribe('fastify.initialization', onInitialization);
  try {
    return { app: await build(), routes };
  } finally {
    diagnostics.unsubscribe('fastify.initialization', onInitialization);
  }
}

describe('the OpenAPI document: lint, validation, and what the app does (issue 10)', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let routes: string[];
  let document: OpenApiDocument;
  let folder: string;
  let documentFile: string;

  before(async () => {
    database = await openTestDatabase();
    ({ app, routes } = await routesRegistered(() =>
      buildApp(database.config, { db: database.db, logger: false }),
    ));
    const response = await app.inject('/api/openapi.json');
    assert.equal(response.statusCode, 200);
    document = response.json<OpenApiDocument>();
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-lint-'));
    documentFile = path.join(folder, 'openapi.json');
    fs.writeFileSync(documentFile, JSON.stringify(document, null, 2));
  });

  after(async () => {
    await app?.close();
    await database?.cleanup();
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  });

  test('D1: redocly lint with redocly.yaml finds no error and no warning', async () => {
    const { code, report, stderr } = await redoclyLint(documentFile);
    assert.deepEqual(problemsOf(report), [], stderr);
    assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 });
    assert.equal(code, 0, stderr);
  });

  test('redocly lint does check: a document with a repeated operationId fails it', async () => {
    const broken = structuredClone(document) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const catalog = broken.paths['/api/reports/catalog']?.get;
    assert.ok(catalog);
    catalog.operationId = 'getTabularReport';
    const brokenFile = path.join(folder, 'broken.json');
    fs.writeFileSync(brokenFile, JSON.stringify(broken));
    const { code, report } = await redoclyLint(brokenFile);
    assert.notEqual(code, 0);
    assert.ok(report.totals.errors > 0);
    assert.ok(
      report.problems.some((p) => p.ruleId === 'operation-operationId-unique'),
      problemsOf(report).join('\n'),
    );
  });

  test('D1: @apidevtools/swagger-parser validates the document (OpenAPI 3.1)', async () => {
    const api = await SwaggerParser.validate(structuredClone(document) as never);
    assert.equal((api as { openapi?: string }).openapi, '3.1.0');
  });

  test('D1: every route the app registers under /api/ is an operation of the document, and back', () => {
    assert.ok(
      routes.includes('GET /api/openapi.json'),
      `the onRoute hook saw the routes: ${routes.join(', ')}`,
    );
    const apiRoutes = routes
      .filter((route) => {
        const [method = '', url = ''] = route.split(' ');
        return (
          url.startsWith('/api/') && !isDocumentationRoute(url) && method !== 'HEAD' && method !== 'OPTIONS'
        );
      })
      .map((route) => route.replace(/:(\w+)/g, '{$1}')); // Fastify's :id is OpenAPI's {id}
    const documented = operationsOf(document).map(({ method, path: p }) => `${method.toUpperCase()} ${p}`);
    for (const route of apiRoutes) assert.ok(documented.includes(route), `${route} is not in the document`);
    // B2's refusals are documented as operations; the app answers them before routing, for any path.
    const served = documented.filter((operation) => operation.startsWith('GET '));
    assert.deepEqual([...new Set(apiRoutes)].sort(), served.sort());
    const paths = Object.keys(document.paths).sort();
    assert.deepEqual([...new Set(apiRoutes.map((route) => route.split(' ')[1]))].sort(), paths);
  });

  test('D1: the parameters the parse step reads by name, and the F1 filters, are the documented ones', () => {
    const query = {
      metrics: 'orders,net_revenue',
      dimensions: 'date,store',
      from: '2026-01-01',
      to: '2026-01-31',
      timezone: 'Europe/Paris',
      limit: '10',
      offset: '1',
      granularity: 'week',
      format: 'csv',
      ...Object.fromEntries(FILTER_DIMENSIONS.map((d) => [`${FILTER_PREFIX}${d}`, 'x'])),
    };
    const { named, enumerated } = namesLookedUp(query, (raw) => {
      parseTabularQuery(raw, { today: '2026-02-01', isTimeZone: () => true });
      assert.equal(parseFormat(raw), 'csv');
    });
    assert.ok(enumerated, 'F1: the parse step looks for filter.X among all parameters');
    // The instrument itself: enumerating a query looks no name up.
    assert.deepEqual([...namesLookedUp({ a: '1' }, (raw) => void Object.entries(raw)).named], []);
    const read = [...named, ...FILTER_DIMENSIONS.map((d) => `${FILTER_PREFIX}${d}`)];
    const parameters = (document.paths[TABULAR]?.get?.parameters ?? []).filter((p) => p.in === 'query');
    assert.deepEqual([...new Set(read)].sort(), parameters.map((p) => p.name).sort());
  });

  test('E3: every error code of the API’s statuses is in the document’s `code` enum for its status, and only those', async () => {
    const resolved = await dereferenced(document);
    const codeEnum = (schema: JsonSchema | undefined) => (schema?.properties?.code?.enum ?? []).map(String);
    const documented = new Map<number, Set<string>>();
    const add = (status: number, codes: string[]) =>
      documented.set(status, new Set([...(documented.get(status) ?? []), ...codes]));
    for (const { operation } of operationsOf(resolved)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        add(Number(status), codeEnum(response.content?.['application/json']?.schema));
      }
    }
    add(404, codeEnum(resolved.components?.schemas?.NotFoundError)); // E2: unknown paths
    const expected = ERROR_CODES.filter((code) => API_STATUSES.has(ERROR_KINDS[code].status));
    for (const code of expected) {
      const status = ERROR_KINDS[code].status;
      assert.ok(
        documented.get(status)?.has(code),
        `${code} (${status}) is not in the document's ${status} codes`,
      );
    }
    const stale = [...documented].flatMap(([status, codes]) =>
      [...codes].filter((code) => !expected.some((c) => c === code && ERROR_KINDS[c].status === status)),
    );
    assert.deepEqual(stale, [], 'codes documented under a status the catalogue does not give them');
    assert.equal(expected.length, 17); // INCOMPATIBLE_METRICS (L4) the sixteenth, SNAPSHOT_BUILDING (issue 28) the seventeenth
  });
});
