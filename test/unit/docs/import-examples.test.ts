// Issue 30: the example order files of docs/import-format.md are served, byte for byte, at the
// addresses the Boutiques import form links to, and their orders pass the import's checks (I1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { validateOrder } from '../../../src/ingest/validate-order.js';
import { IMPORT_EXAMPLES_PATH, importExamples } from '../../../src/web/import-examples.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const example = (name: string) => fs.readFileSync(path.join(ROOT, 'docs/examples', name));

test('issue 30: the import form’s example files are the docs’ own, as downloads', async () => {
  const app = Fastify();
  await app.register(importExamples);
  const form = fs.readFileSync(path.join(ROOT, 'src/web/store-pages.ts'), 'utf8');
  for (const [name, type] of [
    ['orders-example.ndjson', 'application/x-ndjson; charset=utf-8'],
    ['orders-example.csv', 'text/csv; charset=utf-8'],
  ] as const) {
    const url = `${IMPORT_EXAMPLES_PATH}/${name}`;
    assert.ok(form.includes(`href="${url}"`), `the import form links to ${url}`);
    const response = await app.inject({ url });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], type);
    assert.equal(response.headers['content-disposition'], `attachment; filename="${name}"`);
    assert.deepEqual(response.rawPayload, example(name));
  }
  await app.close();
});

test('I1: every order of the NDJSON example passes the import’s checks, one of them with lines', () => {
  const orders = example('orders-example.ndjson').toString('utf8').trim().split('\n');
  const key = crypto.randomBytes(32);
  for (const line of orders) {
    const record = JSON.parse(line) as Record<string, unknown>;
    const checked = validateOrder(record, key);
    assert.ok(checked.ok, `${line}\n${JSON.stringify(checked)}`);
  }
  assert.ok(orders.some((line) => line.includes('"lines":[')));
});
