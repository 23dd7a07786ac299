#!/usr/bin/env node
// Runs the unit tests, the contract tests (embedded engine), then the integration tests once per
// database engine (embedded PGlite, PostgreSQL server), and ends with one line "N passed, N failed,
// N skipped". Under CI=true a skipped test fails the run: a test that needs a service must fail,
// not skip, where CI runs it (engine-specific suites register nothing on the other engine instead
// of skipping).
// PostgreSQL comes from TEST_DATABASE_URL, or else from a throwaway cluster started on 127.0.0.1
// when Debian's server binaries are installed; without either, the PostgreSQL run fails under
// CI=true and is skipped elsewhere.
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { once } from 'node:events';
import { startTempPostgres } from './temp-postgres.js';

const root = path.resolve(import.meta.dirname, '..');
const only = process.argv.slice(2); // e.g. `npm test -- unit`, `npm test -- contract` or `npm test -- integration:embedded`

function testFiles(dir) {
  const full = path.join(root, 'dist/test', dir);
  if (!fs.existsSync(full)) return [];
  return fs
    .readdirSync(full, { recursive: true })
    .filter((f) => f.endsWith('.test.js'))
    .sort()
    .map((f) => path.join(full, f));
}

async function postgresReachable(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (error) {
    console.error(`PostgreSQL unreachable at ${url.replace(/:[^:@/]*@/, ':***@')}: ${error.message}`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

let passed = 0;
let failed = 0;
const skipped = [];

async function suite(name, dir, env) {
  if (only.length > 0 && !only.some((o) => name.startsWith(o))) return;
  const files = testFiles(dir);
  console.log(`\n=== ${name}: ${files.length} files`);
  Object.assign(process.env, env);
  const stream = run({ files, concurrency: 1, timeout: 300_000 });
  stream.on('test:pass', (t) => {
    if (t.skip !== undefined || t.todo !== undefined) skipped.push(`${name}: ${t.name}`);
    else if (t.details.type !== 'suite') passed++;
  });
  stream.on('test:fail', (t) => t.details.type !== 'suite' && failed++);
  const reporter = stream.compose(spec);
  reporter.on('data', (chunk) => process.stdout.write(chunk));
  await once(reporter, 'end');
}

await suite('unit', 'unit', {});
// Issue 10: the OpenAPI document against the running service (Prism, Redocly), embedded engine only.
await suite('contract', 'contract', { TEST_ENGINE: 'embedded' });
await suite('integration:embedded', 'integration', { TEST_ENGINE: 'embedded' });
if (only.length === 0 || only.some((o) => 'integration:postgres'.startsWith(o))) {
  let temp;
  if (!process.env.TEST_DATABASE_URL) {
    temp = await startTempPostgres().catch((error) =>
      console.error(`Could not start PostgreSQL: ${error.message}`),
    );
    if (temp) console.log(`\nStarted a throwaway PostgreSQL at ${temp.url}`);
  }
  const pgUrl = process.env.TEST_DATABASE_URL || temp?.url;
  if (pgUrl && (await postgresReachable(pgUrl))) {
    await suite('integration:postgres', 'integration', { TEST_ENGINE: 'postgres', TEST_DATABASE_URL: pgUrl });
  } else if (process.env.CI === 'true') {
    console.error('CI=true and PostgreSQL is not reachable: the PostgreSQL run fails.');
    failed++;
  } else {
    console.log('\n=== integration:postgres skipped (no PostgreSQL server; CI fails instead)');
  }
  temp?.stop();
}
const skipFails = process.env.CI === 'true' && skipped.length > 0;
if (skipped.length > 0) {
  console.log(`\nSkipped${skipFails ? ' (CI=true: each one fails the run)' : ''}:`);
  for (const name of skipped) console.log(`  - ${name}`);
}
console.log(`\n${passed} passed, ${failed} failed, ${skipped.length} skipped`);
process.exitCode = failed > 0 || passed === 0 || skipFails ? 1 : 0;
