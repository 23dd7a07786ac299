// Issue 10, item 3: contract fuzzing. The service runs in-process on a real socket with a few
// hundred varied orders. Requests generated from its own GET /api/openapi.json go through Stoplight
// Prism run as a validation proxy (--errors): Prism answers 422 itself to a request that breaks the
// document, and turns any answer of the service that breaks it into a 500 problem+json with an
// `sl-violations` header. Then every status the document gives is reached on purpose, each answer
// validated by Prism too, or the test says why not. Answers Prism makes itself are counted apart:
// they are not the service's (the service's routes and hooks put X-Request-Id on every answer,
// Prism never does).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createApiKey } from '../../src/auth/api-keys.js';
import { mintKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { setSubscription } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { TEST_SECRET_KEY } from '../helpers/database.js';
import {
  BodyChecker,
  dereferenced,
  operationsOf,
  type OpenApiDocument,
  type Operation,
} from '../helpers/openapi-document.js';
import { documentedRequests, type RequestHints } from '../helpers/openapi-requests.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startValidationProxy, UPSTREAM_HEADER, type ValidationProxy } from '../helpers/validation-proxy.js';
import { VARIED_COUNTRIES, VARIED_STATUSES, VARIED_STORES, variedOrders } from '../helpers/varied-orders.js';

const SEED = Number(process.env.CONTRACT_SEED ?? 20261124);
const RUNS = Number(process.env.CONTRACT_RUNS ?? 300);
const TABULAR = '/api/reports/tabular';
const CATALOG = '/api/reports/catalog';

/** Around the orders' days (2025-01-01 … 2026-11-21) and past today, so that P3's 400s happen too. */
const HINTS: RequestHints = {
  dates: { min: new Date('2024-10-01T00:00:00Z'), max: new Date('2027-01-31T00:00:00Z') },
  texts: {
    // P5: real IANA names, offsets of quarter and half hours, an alias; and one the service refuses.
    timezone: fc.constantFrom(
      'UTC',
      'Europe/Paris',
      'Asia/Kolkata',
      'US/Eastern',
      'America/St_Johns',
      'Pacific/Chatham',
      'Asia/Kathmandu',
      'Mars/Olympus',
    ),
    'filter.store': fc.constantFrom(...VARIED_STORES, 'https://ailleurs.example'),
    'filter.country': fc.constantFrom(...VARIED_COUNTRIES, 'ZZ'),
    'filter.status': fc.constantFrom(...new Set(VARIED_STATUSES), 'cancelled'),
    'filter.customer_type': fc.constantFrom('new', 'returning', 'anonymous'),
  },
};
const ACCEPTS = [undefined, 'application/json', 'text/csv', 'text/csv;q=0.9, application/json;q=0.5', '*/*'];

/** Documented statuses this file does not reach, and where they are. */
const NOT_REACHED_HERE: Readonly<Record<number, string>> = {
  408: 'a client must stall its headers past 10 s, and Node checks stalled connections every 30 s: too slow for this suite. Node refuses it before any route; the French JSON body comes from frenchClientError (src/app.ts), the same path as the 431 reached below',
  500: 'an unexpected failure needs the database broken under a running service: test/integration/api-access.test.ts renames a table for it ("E2: an unexpected failure is a 500 JSON…"); here, no generated request may cause one',
};

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** False for an answer Prism made itself: the service sets X-Request-Id on each of its answers. */
  readonly fromService: boolean;
  /** Prism's findings on the service's answer, when it breaks the document. */
  readonly violations: string | null;
}

interface Send {
  readonly method?: string;
  readonly key?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Which upstream Prism forwards to: the service with data unless said otherwise. */
  readonly upstream?: 'main' | 'limited' | 'unreachable' | 'broken';
}

const count = (counts: Map<number, number>, status: number) =>
  counts.set(status, (counts.get(status) ?? 0) + 1);
const summary = (counts: Map<number, number>) =>
  [...counts]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status}×${n}`)
    .join(' ') || 'none';

function bodyOf(answer: Answer): Record<string, unknown> {
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/, answer.text);
  return JSON.parse(answer.text) as Record<string, unknown>;
}

/** The rows of a 200 (JSON or CSV); the catalog's entries. */
function rowsIn(answer: Answer): number {
  if (/^text\/csv/.test(answer.headers.get('content-type') ?? ''))
    return answer.text.split('\r\n').length - 2;
  const body = bodyOf(answer);
  return Array.isArray(body.rows) ? body.rows.length : Object.keys(body).length;
}

/** A 200 the document forbids (rowCount is an integer): Prism must refuse to pass it on. */
function startBrokenUpstream(): Promise<http.Server> {
  const server = http.createServer((_request, response) => {
    const body = { dimensions: [], metrics: ['orders'], from: '2026-01-01', to: '2026-01-31' };
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ...body, timezone: 'UTC', rows: [], rowCount: 'many' }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const urlOf = (server: http.Server | FastifyInstance) => {
  const address = 'server' in server ? server.server.address() : server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
};

describe('contract fuzzing through Prism (issue 10)', () => {
  let main: TestService; // the orders; limits out of the way
  let limited: FastifyInstance; // R1 and R2 after 3 requests, on the same database
  let unreachableDb: Database; // E2's 503
  let unreachable: FastifyInstance;
  let broken: http.Server;
  let proxy: ValidationProxy;
  let document: OpenApiDocument;
  let dereferencedDocument: OpenApiDocument;
  let folder: string;
  let key: string;
  let stoppedKey: string;
  let limitedKeys: string[];
  const checker = new BodyChecker();
  const serviceStatuses = new Map<number, number>(); // the service's answers, validated by Prism
  const directStatuses = new Map<number, number>(); // the service's answers, checked with ajv
  const prismStatuses = new Map<number, number>(); // Prism's own answers: never the service's

  before(async () => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-contract-'));
    main = await startTestService({ RATE_LIMIT_MAX: '100000', AUTH_FAILURE_LIMIT: '100000' });
    const contract = await main.addOrganization('Contract', []);
    const orders = variedOrders();
    const imported = await importOrderRecords(main.db, contract.org.id, orders);
    assert.equal(imported.imported, orders.length, JSON.stringify(imported.errors.slice(0, 3)));
    key = contract.key;
    const stopped = await main.addOrganization('Stopped', []);
    await setSubscription(main.db, stopped.org.id, 'stopped');
    stoppedKey = stopped.key;

    // A second server on the same database (without Redis, each instance counts its own limits).
    const limitedConfig = loadConfig({
      DATA_DIR: main.config.dataDir,
      RATE_LIMIT_MAX: '3',
      AUTH_FAILURE_LIMIT: '3',
    });
    limited = await buildApp(limitedConfig, { db: main.db, logger: false });
    await limited.listen({ port: 0, host: '127.0.0.1' });
    const limitedOrg = await main.addOrganization('Limited', []);
    limitedKeys = [limitedOrg.key, (await createApiKey(main.db, limitedOrg.org.id, 'second')).key];

    const config = loadConfig({
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      SECRET_KEY: TEST_SECRET_KEY,
    });
    unreachableDb = await openDatabase(config, { role: 'server' });
    unreachable = await buildApp(config, { db: unreachableDb, logger: false });
    await unreachable.listen({ port: 0, host: '127.0.0.1' });
    broken = await startBrokenUpstream();

    const response = await fetch(`${main.baseUrl}/api/openapi.json`);
    assert.equal(response.status, 200);
    document = (await response.json()) as OpenApiDocument;
    dereferencedDocument = await dereferenced(document);
    const documentFile = path.join(folder, 'openapi.json');
    fs.writeFileSync(documentFile, JSON.stringify(document));
    proxy = await startValidationProxy(documentFile, {
      main: main.baseUrl,
      limited: urlOf(limited),
      unreachable: urlOf(unreachable),
      broken: urlOf(broken),
    });
  });

  after(async () => {
    await proxy?.stop();
    await new Promise((resolve) => broken?.close(resolve));
    await unreachable?.close();
    await unreachableDb?.close();
    await limited?.close();
    await main?.cleanup();
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  });

  async function answerOf(response: Response): Promise<Answer> {
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      fromService: response.headers.has('x-request-id') && !response.headers.has('sl-violations'),
      violations: response.headers.get('sl-violations'),
    };
  }

  function headersOf(options: Send): Record<string, string> {
    return {
      ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
      ...options.headers,
    };
  }

  /** Through Prism: the answer, counted as the service's or as Prism's own. */
  async function viaPrism(target: string, options: Send = {}): Promise<Answer> {
    const answer = await answerOf(
      await fetch(`${proxy.url}${target}`, {
        method: options.method ?? 'GET',
        headers: { ...headersOf(options), [UPSTREAM_HEADER]: options.upstream ?? 'main' },
      }),
    );
    if (answer.violations === null)
      count(answer.fromService ? serviceStatuses : prismStatuses, answer.status);
    return answer;
  }

  /** Straight to the service with data, for what Prism answers itself. */
  async function direct(target: string, options: Send = {}): Promise<Answer> {
    const answer = await answerOf(
      await fetch(`${main.baseUrl}${target}`, {
        method: options.method ?? 'GET',
        headers: headersOf(options),
      }),
    );
    assert.ok(answer.fromService, `${target}: an answer of the service`);
    count(directStatuses, answer.status);
    return answer;
  }

  const operation = (pathName: string, method = 'get'): Operation => {
    const found = dereferencedDocument.paths[pathName]?.[method];
    assert.ok(found, `${method} ${pathName} is documented`);
    return found;
  };

  function conforms(answer: Answer, label: string): void {
    assert.equal(
      answer.violations,
      null,
      `${label}: Prism finds that the answer breaks the document:\n${answer.text}\n${proxy.output().slice(-2000)}`,
    );
  }

  /** A service error through Prism, with its status and E3 code; Prism found nothing wrong. */
  async function expectError(target: string, status: number, code: string, options: Send = {}) {
    const answer = await viaPrism(target, options);
    conforms(answer, target);
    assert.ok(answer.fromService, `${target}: the service's answer, not Prism's: ${answer.text}`);
    assert.equal(answer.status, status, `${target}: ${answer.text}`);
    assert.equal(bodyOf(answer).code, code, target);
    return answer;
  }

  /** A request the document forbids: Prism's own 422; the service's own answer, checked with ajv. */
  async function expectPrismRefusal(target: string, status: number, code: string) {
    const refused = await viaPrism(target, { key });
    assert.equal(refused.status, 422, `${target}: ${refused.text}`);
    assert.ok(!refused.fromService, `${target}: Prism's answer`);
    assert.match(refused.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const answer = await direct(target, { key });
    assert.equal(answer.status, status, `${target}: ${answer.text}`);
    const body = bodyOf(answer);
    assert.equal(body.code, code, target);
    assert.deepEqual(checker.responseProblems(operation(TABULAR), status, body), [], target);
  }

  test('generated requests: no 5xx from the service, no answer that breaks the document', async (t) => {
    const requests = fc.sample(fc.tuple(documentedRequests(document, HINTS), fc.constantFrom(...ACCEPTS)), {
      seed: SEED,
      numRuns: RUNS,
    });
    const problems: string[] = [];
    const reached = new Map<number, number>();
    const refusedByPrism = new Map<number, number>(); // the service's answers to Prism's 422s
    const operationsSent = new Set<string>();
    const parametersSent = new Set<string>();
    let withRows = 0; // answers that are not empty tables
    for (const [request, accept] of requests) {
      const label = `${request.method} ${request.target}${accept ? ` (Accept: ${accept})` : ''}`;
      operationsSent.add(`${request.method} ${request.path}`);
      for (const name of Object.keys(request.parameters)) parametersSent.add(name);
      const options: Send = { method: request.method, key, headers: accept ? { accept } : {} };
      const answer = await viaPrism(request.target, options);
      if (answer.violations !== null) {
        problems.push(`${label}: breaks the document: ${answer.violations}`);
      } else if (answer.fromService) {
        count(reached, answer.status);
        if (answer.status === 200 && rowsIn(answer) > 0) withRows++;
        if (answer.status >= 500) problems.push(`${label}: ${answer.status} ${answer.text}`);
      } else if (answer.status === 422) {
        // Prism and this generator read the document differently: what does the service say?
        const served = await direct(request.target, options);
        count(refusedByPrism, served.status);
        problems.push(`${label}: Prism refused it (${answer.text}); the service answers ${served.status}`);
      } else {
        problems.push(`${label}: Prism answered ${answer.status} itself: ${answer.text}`);
      }
    }
    t.diagnostic(
      `seed ${SEED}, ${requests.length} requests: service ${summary(reached)} (${withRows} with rows); Prism's 422: ${summary(refusedByPrism)} (service's answers)`,
    );
    assert.deepEqual(problems, [], `Prism output:\n${proxy.output().slice(-3000)}`);
    const documentedOperations = operationsOf(document).map((o) => `${o.method.toUpperCase()} ${o.path}`);
    assert.deepEqual([...operationsSent].sort(), documentedOperations.sort(), 'every operation drawn');
    const parameters = operationsOf(document).flatMap((o) =>
      (o.operation.parameters ?? []).map((p) => p.name),
    );
    assert.deepEqual([...parametersSent].sort(), [...new Set(parameters)].sort(), 'every parameter drawn');
    assert.deepEqual(
      [...reached.keys()].sort((a, b) => a - b),
      [200, 400, 405],
      'the statuses generated requests reach: answers, refusals (P3, P5, F1), the read-only methods',
    );
  });

  test('200: the table as JSON, as CSV by format=csv and by Accept: text/csv; the catalog', async () => {
    const query = `${TABULAR}?metrics=orders,net_revenue&dimensions=status,country&from=2025-01-01&to=2026-11-21`;
    const json = await viaPrism(query, { key });
    conforms(json, query);
    assert.equal(json.status, 200, json.text);
    const rows = bodyOf(json).rows as { status: string }[];
    assert.ok(
      rows.some((row) => row.status === '=cmd'),
      'formula-looking statuses are shown as sent',
    );
    for (const [target, headers] of [
      [`${query}&format=csv`, {}],
      [query, { accept: 'text/csv' }],
    ] as const) {
      const csv = await viaPrism(target, { key, headers });
      conforms(csv, target);
      assert.equal(csv.status, 200, csv.text);
      assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
      assert.match(csv.text, /^status,country,orders,net_revenue\r\n/);
      assert.match(csv.text, /\r\n'=cmd,/, 'V1: a formula-looking cell is quoted');
    }
    const catalog = await viaPrism(CATALOG, { key });
    conforms(catalog, CATALOG);
    assert.equal(catalog.status, 200, catalog.text);
  });

  test('400: requests the document allows and the service refuses reach the service, through Prism', async () => {
    const q = `${TABULAR}?metrics=orders`;
    await expectError(`${q}&from=2026-03-10&to=2026-03-01`, 400, 'INVALID_PARAMETER', { key }); // P3
    await expectError(`${q}&from=2099-01-01`, 400, 'INVALID_PARAMETER', { key }); // P3: after today
    await expectError(`${q}&timezone=Mars/Olympus`, 400, 'INVALID_PARAMETER', { key }); // P5
    await expectError(`${q}&filter.status=%20`, 400, 'INVALID_PARAMETER', { key }); // F1: blank
    const unknown = await expectError(`${q}&filter.date=2026-01-01`, 400, 'UNKNOWN_IDENTIFIERS', { key });
    assert.deepEqual(bodyOf(unknown).unknownDimensions, ['date']); // F1: date is no filter
  });

  test('400: requests the document forbids are Prism’s 422s; sent directly, the service’s 400s conform', async () => {
    await expectPrismRefusal(`${TABULAR}?metrics=`, 400, 'MISSING_METRICS'); // P1
    await expectPrismRefusal(`${TABULAR}?metrics=bogus`, 400, 'UNKNOWN_IDENTIFIERS'); // P2
    await expectPrismRefusal(`${TABULAR}?metrics=orders&limit=0`, 400, 'INVALID_PARAMETER'); // P6
    await expectPrismRefusal(`${TABULAR}?metrics=orders&from=2026-02-30`, 400, 'INVALID_PARAMETER'); // P3
    await expectPrismRefusal(`${TABULAR}?metrics=orders&granularity=hour`, 400, 'INVALID_PARAMETER'); // G2
    await expectPrismRefusal(`${TABULAR}?metrics=orders&format=xml`, 400, 'INVALID_PARAMETER'); // V1
  });

  test('401: a wrong key or an inactive subscription, through Prism; no key at all is Prism’s own 401', async () => {
    for (const target of [`${TABULAR}?metrics=orders`, CATALOG]) {
      await expectError(target, 401, 'UNAUTHENTICATED', { key: mintKey() }); // K3: unknown
      await expectError(target, 401, 'UNAUTHENTICATED', { key: 'smk_pas-une-cle' }); // K3: malformed
      await expectError(target, 401, 'SUBSCRIPTION_INACTIVE', { key: stoppedKey }); // K3
      const own = await viaPrism(target);
      assert.equal(own.status, 401);
      assert.ok(!own.fromService, `${target} without a key: Prism's answer, the service never sees it`);
      const answer = await direct(target);
      assert.equal(answer.status, 401);
      const body = bodyOf(answer);
      assert.equal(body.code, 'UNAUTHENTICATED');
      const documented = operation(target.split('?')[0] ?? target);
      assert.deepEqual(checker.responseProblems(documented, 401, body), [], target);
    }
  });

  test('405: POST, PUT, PATCH and DELETE, documented operations, answer 405 with Allow (B2)', async () => {
    const refused = operationsOf(document).filter((o) => o.method !== 'get');
    assert.equal(refused.length, 8);
    for (const { path: target, method } of refused) {
      const answer = await expectError(target, 405, 'METHOD_NOT_ALLOWED', {
        method: method.toUpperCase(),
        key,
      });
      assert.equal(answer.headers.get('allow'), 'GET, HEAD, OPTIONS');
    }
  });

  test('429: R1 past 3 requests of a key, then R2 past 3 failed authentications, even for a valid key', async () => {
    const [first, second] = limitedKeys;
    for (let i = 0; i < 3; i++) {
      const answer = await viaPrism(CATALOG, { key: first, upstream: 'limited' });
      conforms(answer, CATALOG);
      assert.equal(answer.status, 200, answer.text);
    }
    const limitedAnswer = await expectError(CATALOG, 429, 'RATE_LIMITED', {
      key: first,
      upstream: 'limited',
    });
    assert.ok(Number(limitedAnswer.headers.get('retry-after')) > 0, 'R1: Retry-After');
    assert.equal(limitedAnswer.headers.get('x-ratelimit-remaining'), '0');
    for (let i = 0; i < 3; i++) {
      await expectError(CATALOG, 401, 'UNAUTHENTICATED', { key: mintKey(), upstream: 'limited' });
    }
    await expectError(CATALOG, 429, 'AUTH_FAILURES_LIMITED', { key: mintKey(), upstream: 'limited' });
    const blocked = await expectError(`${TABULAR}?metrics=orders`, 429, 'AUTH_FAILURES_LIMITED', {
      key: second,
      upstream: 'limited',
    });
    assert.ok(Number(blocked.headers.get('retry-after')) > 0, 'R2: Retry-After');
  });

  test('503: with the database unreachable, through Prism (E2)', async () => {
    for (const target of [`${TABULAR}?metrics=orders`, CATALOG]) {
      const answer = await expectError(target, 503, 'DATABASE_UNAVAILABLE', {
        key: mintKey(),
        upstream: 'unreachable',
      });
      assert.ok(Number(answer.headers.get('retry-after')) > 0, 'Retry-After');
    }
  });

  test('404: an unknown path under /api/ answers components.schemas.NotFoundError (E2), straight from the service', async () => {
    const notFound = dereferencedDocument.components?.schemas?.NotFoundError;
    assert.ok(notFound, 'components.schemas.NotFoundError');
    for (const target of ['/api/nope', '/api/reports/nope', `${TABULAR}/extra`, '/api/reports']) {
      // Prism knows only the document's paths: its own 404, never the service's.
      const own = await viaPrism(target, { key });
      assert.equal(own.status, 404);
      assert.ok(!own.fromService, `${target}: Prism's answer`);
      for (const options of [{ key }, {}]) {
        const answer = await direct(target, options);
        assert.equal(answer.status, 404, `${target}: ${answer.text}`);
        assert.deepEqual(checker.problems(notFound, bodyOf(answer)), [], target);
      }
    }
  });

  test('431: headers over 16 KiB get the documented JSON body, before any route (straight from the service)', async () => {
    const response = await fetch(`${main.baseUrl}${TABULAR}?metrics=orders`, {
      headers: { authorization: `Bearer ${key}`, 'x-padding': 'x'.repeat(17 * 1024) },
    });
    assert.equal(response.status, 431);
    count(directStatuses, 431);
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(body.code, 'HEADERS_TOO_LARGE');
    for (const path of [TABULAR, CATALOG])
      assert.deepEqual(checker.responseProblems(operation(path), 431, body), [], path);
  });

  test('Prism does refuse an answer that breaks the document (the proxy is no rubber stamp)', async () => {
    const answer = await viaPrism(`${TABULAR}?metrics=orders`, { key, upstream: 'broken' });
    assert.equal(answer.status, 500, answer.text);
    assert.ok(!answer.fromService);
    assert.match(answer.violations ?? '', /rowCount/);
  });

  // Sums up the tests above (a suite's tests run in order, one at a time).
  test('every status the document gives is reached, or the test says where', (t) => {
    const documented = new Set(
      operationsOf(document).flatMap(({ operation: o }) => Object.keys(o.responses).map(Number)),
    );
    documented.add(404); // components.schemas.NotFoundError: the answer to any path not in the document
    const reached = new Set([...serviceStatuses.keys(), ...directStatuses.keys()]);
    t.diagnostic(
      `statuses: service through Prism ${summary(serviceStatuses)}; service directly ${summary(directStatuses)}; Prism's own ${summary(prismStatuses)}`,
    );
    for (const status of [...documented].sort((a, b) => a - b)) {
      assert.ok(
        reached.has(status) || status in NOT_REACHED_HERE,
        `${status} is documented and never reached`,
      );
    }
    for (const status of reached)
      assert.ok(documented.has(status), `${status} is reached and not documented`);
    for (const status of Object.keys(NOT_REACHED_HERE).map(Number)) assert.ok(!reached.has(status));
  });
});
