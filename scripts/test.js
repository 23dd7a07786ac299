#!/usr/bin/env node
// Runs the unit tests, the contract tests (embedded engine) and the integration tests once per
// database engine (embedded PGlite, PostgreSQL server), and ends with one line "N passed, N failed,
// N skipped". Under CI=true a skipped test fails the run: a test that needs a service must fail,
// not skip, where CI runs it (engine-specific suites register nothing on the other engine instead
// of skipping).
// PostgreSQL comes from TEST_DATABASE_URL, or else from a throwaway cluster started on 127.0.0.1
// when Debian's server binaries are installed; without either, the PostgreSQL run fails under
// CI=true and is skipped elsewhere.
//
// Lanes (docs/architecture.md#running-the-tests): the shared lane runs the integration files of
// both engines in one queue, TEST_CONCURRENCY at once (3 by default), the longest first. Each file
// runs in its own process and reports whole, under a header line naming its suite. The files of
// SERIAL, whose assertions bound a latency, run afterwards one at a time; beside them only the
// background lane, the unit and contract files at the lowest CPU priority. Each engine gets a
// migrated template database made once, which the test helpers copy instead of migrating each new
// database (test/helpers/database.ts).
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { once } from 'node:events';
import { startTempPostgres } from './temp-postgres.js';

const root = path.resolve(import.meta.dirname, '..');
const only = process.argv.slice(2); // e.g. `npm test -- unit`, `npm test -- contract` or `npm test -- integration:embedded`
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? 3) || 1);

// Files whose assertions bound a latency or a wait in wall-clock time (/healthz within 100 or
// 500 ms while a burst or a 20 MB line is handled, or within 1–2 s under fuzzing; an import
// killed after 6 s; an eviction within 5 s; readers paced in bytes per second against the answer
// budget; the longest stretch of CPU one answer holds the event loop, which a neighbour's cache and
// memory traffic stretch): run alone, as they were written for. Seen failing beside other files on
// a loaded host.
const SERIAL = new Set([
  'integration/abuse/import.test.js',
  'integration/event-loop-answers.test.js',
  'integration/abuse/overload.test.js',
  'integration/abuse/slow-readers.test.js',
  'integration/far-dates.test.js',
  'integration/session-queue.test.js',
  'integration/web-fuzz.test.js',
]);

// The suites whose files bound no latency and run beside the serial lane, at the lowest priority.
const BACKGROUND = new Set(['unit', 'contract']);

// The files that took longest in CI (its "Slowest files"), started first: the shared lane then ends
// with short files side by side instead of one long file alone (25 min against 23 in CI when
// shopify-connector and store-connector-web started last).
const LONGEST_FIRST = [
  'integration/shopify-connector.test.js',
  'integration/store-connector.test.js',
  'integration/abuse/privacy.test.js',
  'integration/oracle.test.js',
  'integration/store-connector-processes.test.js',
  'integration/store-connector-web.test.js',
  'integration/shopify-processes.test.js',
  'integration/columnar-differential.test.js',
  'integration/columnar-live.test.js',
  'integration/oracle-lines.test.js',
  'integration/faults.test.js',
];
const rank = (file) => {
  const at = LONGEST_FIRST.indexOf(file);
  return at < 0 ? LONGEST_FIRST.length : at;
};

function testFiles(dir) {
  const full = path.join(root, 'dist/test', dir);
  if (!fs.existsSync(full)) return [];
  return fs
    .readdirSync(full, { recursive: true })
    .filter((f) => f.endsWith('.test.js') && fileWanted(f))
    .sort()
    .map((f) => path.join(dir, f));
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

const wanted = (name) => only.length === 0 || only.some((o) => name.startsWith(o));
// TEST_FILES=oracle,cli runs only the files whose path contains one of these words (with the
// run's templates and lanes, as CI runs them).
const fileWords = (process.env.TEST_FILES ?? '').split(',').filter(Boolean);
const fileWanted = (file) => fileWords.length === 0 || fileWords.some((w) => file.includes(w));

let passed = 0;
let failed = 0;
const skipped = [];
/** The failed tests with their errors, printed again at the end: a CI log's tail says why. */
const failures = []; // { where, name, error }
const fileTimes = []; // { suite, file, ms }
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-test-run-'));
const cleanups = [() => fs.rmSync(scratch, { recursive: true, force: true })];

/**
 * A file that sets its suite's environment, prints its header and imports the test file: the
 * runner of node 20 gives every file the same environment, and both engines share one queue.
 */
function entryFor(suite, file) {
  const entry = path.join(scratch, suite.name.replace(':', '-'), file);
  fs.mkdirSync(path.dirname(entry), { recursive: true });
  const header = `\n── ${suite.name} · ${file}`;
  // The background lane's files (below) run at the lowest CPU priority, their children with them.
  const nice = BACKGROUND.has(suite.name) ? `(await import('node:os')).setPriority(19);\n` : '';
  fs.writeFileSync(
    entry,
    `${nice}Object.assign(process.env, ${JSON.stringify(suite.env)});\nconsole.log(${JSON.stringify(header)});\n` +
      `await import(${JSON.stringify(pathToFileURL(path.join(root, 'dist/test', file)).href)});\n`,
  );
  return { entry, suite: suite.name, file };
}

/** The machine's CPU time so far, busy and in all, from /proc/stat (Linux); undefined elsewhere. */
function machineCpu() {
  try {
    const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const ticks = fields.map(Number);
    const idle = ticks[3] + (ticks[4] ?? 0); // idle and iowait
    return {
      busy: ticks.slice(0, 8).reduce((a, b) => a + b, 0) - idle,
      all: ticks.slice(0, 8).reduce((a, b) => a + b, 0),
    };
  } catch {
    return undefined;
  }
}

/**
 * Runs the files of one lane, `lanes` at a time, and prints their reports as they end; `print` gets
 * the report instead (the background lane's, printed after the serial lane's so that they do not
 * interleave).
 */
async function runLane(title, entries, lanes, print = (text) => process.stdout.write(text)) {
  if (entries.length === 0) return;
  print(`\n=== ${title}: ${entries.length} files, ${lanes} at a time\n`);
  const started = Date.now();
  const cpuBefore = machineCpu();
  const byEntry = new Map(entries.map((e) => [e.entry, e]));
  const stream = run({ files: entries.map((e) => e.entry), concurrency: lanes, timeout: 600_000 });
  // Files report whole and in order, their header (standard output) first: the file being reported.
  let reporting;
  stream.on('test:stdout', (t) => (reporting = byEntry.get(t.file) ?? reporting));
  stream.on('test:pass', (t) => {
    const where = reporting ? `${reporting.suite} · ${reporting.file}` : path.relative(root, t.file ?? '');
    if (t.skip !== undefined || t.todo !== undefined) skipped.push(`${where}: ${t.name}`);
    else if (t.details.type !== 'suite') passed++;
  });
  stream.on('test:fail', (t) => {
    if (t.details.type === 'suite') return;
    failed++;
    const where = reporting ? `${reporting.suite} · ${reporting.file}` : path.relative(root, t.file ?? '');
    failures.push({ where, name: t.name, error: t.details.error });
  });
  stream.on('test:complete', (t) => {
    const entry = t.nesting === 0 && byEntry.get(t.file);
    if (entry && path.resolve(t.name) === t.file) fileTimes.push({ ...entry, ms: t.details.duration_ms });
  });
  const reporter = stream.compose(spec);
  reporter.on('data', (chunk) => print(chunk));
  await once(reporter, 'end');
  // How long the lane took and how busy the machine's CPUs were meanwhile: a lane near 100 % is
  // bound by CPU (fewer files at once would not slow it), one far below waits on timers.
  const cpuAfter = machineCpu();
  const busy =
    cpuBefore && cpuAfter ? (cpuAfter.busy - cpuBefore.busy) / (cpuAfter.all - cpuBefore.all) : NaN;
  laneTimes.push(
    `${title}: ${((Date.now() - started) / 1000).toFixed(0)} s, CPUs ${Number.isNaN(busy) ? '?' : Math.round(busy * 100)} % busy (${os.cpus().length} CPUs)`,
  );
}
const laneTimes = [];

/** The suites to run, each with its environment; PostgreSQL's only when a server answers. */
async function suites() {
  const list = [
    { name: 'unit', dir: 'unit', env: {} },
    // Issue 10: the OpenAPI document against the running service (Prism, Redocly), embedded engine only.
    { name: 'contract', dir: 'contract', env: { TEST_ENGINE: 'embedded' } },
    { name: 'integration:embedded', dir: 'integration', env: { TEST_ENGINE: 'embedded' } },
  ].filter((s) => wanted(s.name));
  if (wanted('integration:postgres')) {
    let temp;
    if (!process.env.TEST_DATABASE_URL) {
      temp = await startTempPostgres().catch((error) =>
        console.error(`Could not start PostgreSQL: ${error.message}`),
      );
      if (temp) {
        console.log(`\nStarted a throwaway PostgreSQL at ${temp.url}`);
        cleanups.push(() => temp.stop());
      }
    }
    const url = process.env.TEST_DATABASE_URL || temp?.url;
    if (url && (await postgresReachable(url))) {
      list.push({
        name: 'integration:postgres',
        dir: 'integration',
        env: { TEST_ENGINE: 'postgres', TEST_DATABASE_URL: url },
      });
    } else if (process.env.CI === 'true') {
      console.error('CI=true and PostgreSQL is not reachable: the PostgreSQL run fails.');
      failed++;
    } else {
      console.log('\n=== integration:postgres skipped (no PostgreSQL server; CI fails instead)');
    }
  }
  // One migrated template per engine (test/helpers/database.ts); unit tests open no database.
  const { makeTemplate } = await import(pathToFileURL(path.join(root, 'dist/test/helpers/database.js')).href);
  const templates = new Map();
  await Promise.all(
    list
      .filter((s) => s.name !== 'unit')
      .map(async (s) => {
        const engine = s.env.TEST_ENGINE;
        if (!templates.has(engine)) templates.set(engine, makeTemplate(engine, s.env.TEST_DATABASE_URL));
        const template = await templates.get(engine);
        Object.assign(s.env, template.env);
      }),
  );
  for (const template of templates.values()) cleanups.unshift(async () => (await template).remove());
  return list;
}

try {
  const list = await suites();
  const entries = list.map((s) => testFiles(s.dir).map((file) => entryFor(s, file)));
  console.log(`\n=== ${list.map((s, i) => `${s.name}: ${entries[i].length} files`).join(', ')}`);
  // The integration files of both engines side by side, then contract, then unit.
  const integration = entries.filter((_, i) => list[i].dir === 'integration');
  const interleaved = [];
  for (let i = 0; i < Math.max(0, ...integration.map((e) => e.length)); i++)
    for (const files of integration) if (files[i]) interleaved.push(files[i]);
  interleaved.sort((a, b) => rank(a.file) - rank(b.file)); // stable: the rest keep their order
  const ordered = [
    ...interleaved,
    ...entries.filter((_, i) => list[i].dir === 'contract').flat(),
    ...entries.filter((_, i) => list[i].dir === 'unit').flat(),
  ];
  await runLane(
    'shared lane',
    ordered.filter((e) => !SERIAL.has(e.file) && !BACKGROUND.has(e.suite)),
    concurrency,
  );
  // The serial lane leaves a third of the CPUs idle (its files wait on timers and paced readers):
  // the unit and contract files, which bound no latency, run meanwhile at the lowest priority, so
  // that the serial files still get a CPU whenever they want one. Their report follows the serial
  // lane's.
  const report = [];
  await Promise.all([
    runLane(
      'serial lane',
      ordered.filter((e) => SERIAL.has(e.file)),
      1,
    ),
    runLane(
      'background lane (lowest CPU priority)',
      ordered.filter((e) => BACKGROUND.has(e.suite)),
      2,
      (text) => report.push(text),
    ),
  ]);
  process.stdout.write(report.join(''));
} catch (error) {
  console.error(`The run could not go on: ${error.stack}`);
  failed++;
} finally {
  for (const cleanup of cleanups)
    await Promise.resolve()
      .then(cleanup)
      .catch((error) => console.error(`Cleaning up: ${error.message}`));
}

fileTimes.sort((a, b) => b.ms - a.ms);
console.log(`\nLanes: ${laneTimes.join('; ')}`);
console.log('\nSlowest files:');
for (const { suite, file, ms } of fileTimes.slice(0, 15))
  console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${suite} · ${file}`);
const skipFails = process.env.CI === 'true' && skipped.length > 0;
if (skipped.length > 0) {
  console.log(`\nSkipped${skipFails ? ' (CI=true: each one fails the run)' : ''}:`);
  for (const name of skipped) console.log(`  - ${name}`);
}
if (failures.length > 0) {
  console.log('\nFailures:');
  for (const { where, name, error } of failures) {
    console.log(`  ✖ ${where}: ${name}`);
    // The assertion's own message first (node:test wraps it in its cause), a few lines of it.
    const cause = error?.cause ?? error;
    const lines = String(cause?.stack ?? cause?.message ?? cause)
      .split('\n')
      .slice(0, 12);
    for (const line of lines) console.log(`      ${line}`);
  }
}
console.log(`\n${passed} passed, ${failed} failed, ${skipped.length} skipped`);
process.exitCode = failed > 0 || passed === 0 || skipFails ? 1 : 0;
