// Issue 10, a typed client as a real client (D1): openapi-typescript turns the live
// /api/openapi.json into types, the project's own tsc (strict, NodeNext) compiles
// docs/examples/typed-client.ts against them, and the compiled program, built on openapi-fetch,
// calls the live server. Its answers must be the API's, fetched directly; and a document that
// stopped describing what the client uses must fail the compilation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { importOrderRecords } from '../../src/ingest/import.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { YEAR_FROM, YEAR_TO, yearOfOrders } from '../helpers/year-of-orders.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const EXAMPLE = path.join(ROOT, 'docs/examples/typed-client.ts');
const TSC = path.join(ROOT, 'node_modules/.bin/tsc');
const run = promisify(execFile);

/** The client's first call, written by hand: the server's answer to it is the reference. */
const MONTHLY =
  `metrics=orders,net_revenue&dimensions=date,country&filter.country=FR,Unknown&granularity=month` +
  `&timezone=Europe/Paris&from=${YEAR_FROM}&to=${YEAR_TO}&offset=2&limit=5`;

interface ClientOutput {
  sent: string[];
  monthly: {
    body: { rows: Record<string, unknown>[]; rowCount: number };
    rowCount: number;
    truncated: string | null;
    netRevenue: number;
  };
  csv: string;
  catalog: { dimensions: { id: string }[]; metrics: { id: string }[] };
  metricIds: string[];
}

let service: TestService;
let key: string;
let document: OpenAPI3;
const folders: string[] = [];

/** A folder with the generated types, the example and a strict NodeNext tsconfig. */
async function clientProject(doc: OpenAPI3): Promise<string> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-typed-client-'));
  folders.push(folder);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(folder, 'node_modules'), 'dir');
  fs.writeFileSync(path.join(folder, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  fs.writeFileSync(
    path.join(folder, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: true,
        types: ['node'],
        lib: ['ES2023'],
        outDir: 'out',
      },
      files: ['typed-client.ts', 'sales-metrics-api.d.ts'],
    }),
  );
  fs.writeFileSync(
    path.join(folder, 'sales-metrics-api.d.ts'),
    astToString(await openapiTS(doc, { silent: true })),
  );
  fs.copyFileSync(EXAMPLE, path.join(folder, 'typed-client.ts'));
  return folder;
}

async function compile(folder: string, ...options: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(TSC, ['-p', folder, ...options], { cwd: folder });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

async function direct(query: string, headers: Record<string, string> = {}) {
  const response = await service.get(`/api/reports/${query}`, key, headers);
  assert.equal(response.status, 200, query);
  return response;
}

describe('issue 10: a typed client generated from the live OpenAPI document', () => {
  before(async () => {
    service = await startTestService();
    const created = await service.addOrganization('Client typé', []);
    key = created.key;
    const imported = await importOrderRecords(service.db, created.org.id, yearOfOrders(800, 7));
    assert.equal(imported.refused, false, JSON.stringify(imported.errors));
    const response = await fetch(`${service.baseUrl}/api/openapi.json`); // D1: no key
    assert.equal(response.status, 200);
    document = (await response.json()) as OpenAPI3;
  });
  after(async () => {
    for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
    await service?.cleanup();
  });

  test('D1: the example compiles against the generated types and answers what the API answers', async () => {
    const folder = await clientProject(document);
    const compiled = await compile(folder);
    assert.equal(compiled.output, '', 'tsc: no error, and every @ts-expect-error line is refused');
    assert.equal(compiled.code, 0);

    const { stdout } = await run(
      process.execPath,
      [path.join(folder, 'out/typed-client.js'), YEAR_FROM, YEAR_TO],
      {
        env: { ...process.env, SALES_METRICS_URL: service.baseUrl, SALES_METRICS_KEY: key },
      },
    );
    const output = JSON.parse(stdout) as ClientOutput;

    // What openapi-fetch sent: arrays as one comma-separated parameter (form, explode: false).
    const [first, csvCall, catalogCall] = output.sent.map((url) => new URL(url));
    assert.ok(first && csvCall && catalogCall, JSON.stringify(output.sent));
    assert.equal(first.pathname, '/api/reports/tabular');
    assert.match(first.search, /[?&]metrics=orders,net_revenue(&|$)/);
    assert.match(first.search, /[?&]dimensions=date,country(&|$)/);
    assert.match(first.search, /[?&]filter\.country=FR,Unknown(&|$)/);
    assert.deepEqual(
      Object.fromEntries(first.searchParams),
      Object.fromEntries(new URLSearchParams(MONTHLY)),
      'exactly the hand-written query, each parameter once',
    );
    assert.equal(csvCall.searchParams.get('format'), 'csv');
    assert.equal(catalogCall.pathname, '/api/reports/catalog');

    // What it got: the API's own answers, fetched directly (F1, G2, O1, V1, G1).
    const monthly = await direct(`tabular?${MONTHLY}`);
    assert.deepEqual(output.monthly.body, await monthly.json());
    assert.equal(output.monthly.truncated, monthly.headers.get('x-rows-truncated'));
    assert.equal(output.monthly.truncated, 'true', 'rows remain after offset 2 + limit 5 (O1)');
    assert.equal(output.monthly.rowCount, 5);
    for (const row of output.monthly.body.rows) {
      assert.ok(['FR', 'Unknown'].includes(String(row.country)), `F1: ${String(row.country)}`);
      assert.match(String(row.date), /^2025-\d\d-01$/, 'G2: the first day of a month');
    }
    assert.ok(output.monthly.netRevenue !== 0);
    assert.equal(output.csv, await (await direct(`tabular?${MONTHLY}`, { accept: 'text/csv' })).text());
    assert.deepEqual(output.catalog, await (await direct('catalog')).json());
    assert.equal(output.metricIds.length, 10);
  });

  test('D1: a document that stops describing what the client uses fails its compilation', async () => {
    const shrunk = structuredClone(document) as unknown as {
      paths: Record<string, Record<string, ShrinkableOperation>>;
    };
    const tabular = shrunk.paths['/api/reports/tabular']?.get;
    assert.ok(tabular, 'the document describes GET /api/reports/tabular');
    tabular.parameters = tabular.parameters.filter((parameter) => parameter.name !== 'filter.country');
    const metrics = tabular.parameters.find((parameter) => parameter.name === 'metrics');
    assert.ok(metrics);
    metrics.schema = { type: 'array', items: { type: 'string' } };
    const body = tabular.responses['200']?.content['application/json']?.schema;
    assert.ok(body?.properties && body.required);
    delete body.properties.rowCount;
    body.required = body.required.filter((field) => field !== 'rowCount');

    const compiled = await compile(await clientProject(shrunk as unknown as OpenAPI3), '--noEmit');
    assert.notEqual(compiled.code, 0, compiled.output);
    assert.match(compiled.output, /filter\.country'* does not exist in type/, 'a parameter that is gone');
    assert.match(compiled.output, /Property 'rowCount' does not exist/, 'a field that is gone');
    assert.match(
      compiled.output,
      /TS2578: Unused '@ts-expect-error'/,
      'an id the document no longer restricts',
    );
  });
});

interface ShrinkableOperation {
  parameters: { name: string; schema: unknown }[];
  responses: Record<
    string,
    { content: Record<string, { schema?: { properties?: Record<string, unknown>; required?: string[] } }> }
  >;
}
