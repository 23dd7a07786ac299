// Issue 22, docs that cannot rot: every shell example of README.md and docs/*.md that calls the API
// (test/helpers/doc-examples.ts says which) runs, as written, with Debian's curl and bash against
// the real `sales-metrics serve` with the demo data, and answers 2xx or the status its `# → NNN`
// comment claims. Placeholders: KEY and SALES_METRICS_KEY are the demo key the server printed,
// SALES_METRICS_URL and every http://127.0.0.1:3000 its address. Each runs in an empty folder
// (the paging loop writes files), under `set -o pipefail`, so a `| jq` that fails fails it too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeOn } from '../helpers/database.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { documentedExamples, examplesOf, type DocExample } from '../helpers/doc-examples.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// curl writes each call's status on stderr, after what the example itself prints or pipes.
const PRELUDE = `set -o pipefail
curl() { command curl --max-time 60 "$@" --write-out '%{stderr}\\nHTTP_STATUS %{http_code}\\n'; }
`;

/** The server's log line once the demo organization's report snapshot is built (src/app.ts). */
const SNAPSHOT_BUILT = /report snapshot.*\bbuilt\b|"event":"built".*report snapshot/;

function run(example: DocExample, env: Record<string, string>, cwd: string, baseUrl: string) {
  const script = PRELUDE + example.command.replaceAll('http://127.0.0.1:3000', baseUrl);
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'bash',
      ['-c', script],
      { cwd, env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('issue 22: the examples are found as a reader reads them', () => {
  const markdown = [
    '```sh',
    'KEY=smk_...',
    '# → 200 is no marker on a comment line',
    'curl -s -H "Authorization: Bearer $KEY" \\',
    "  'http://127.0.0.1:3000/api/reports/tabular?metrics=orders'",
    'curl -s "$SALES_METRICS_URL/api/reports/catalog"  # → 401',
    'curl -s https://boutique.example.fr/wp-json/wc/v3/orders',
    '```',
    '',
    '  ```sh',
    '  curl -s http://127.0.0.1:3000/readyz',
    '  ```',
    '```sh',
    'while :; do',
    '  curl -sf "$SALES_METRICS_URL/x" || break',
    'done',
    '```',
    '```json',
    'curl -s http://127.0.0.1:3000/not-shell',
    '```',
  ].join('\n');
  const found = examplesOf('x.md', markdown);
  assert.deepEqual(
    found.map((e) => [e.where, e.expected]),
    [
      ['x.md:4', '2xx'],
      ['x.md:6', 401],
      ['x.md:11', '2xx'],
      ['x.md:14', '2xx'],
    ],
  );
  assert.match(
    found[0]?.command ?? '',
    /Bearer \$KEY"\s+'http:\/\/127\.0\.0\.1:3000\/api\/reports\/tabular\?metrics=orders'$/,
  );
  assert.equal(found[2]?.command, 'curl -s http://127.0.0.1:3000/readyz');
  assert.match(found[3]?.command ?? '', /^while :; do\n {2}curl/);
});

/** Debian's bash, curl and jq, which the examples use; under CI=true a missing one fails the run. */
function missingTools(): string[] {
  const missing = ['bash', 'curl', 'jq'].filter(
    (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
  );
  if (missing.length > 0 && process.env.CI === 'true')
    throw new Error(`CI=true and ${missing.join(', ')} missing`);
  return missing;
}

describeOn('embedded', 'issue 22: the API calls of the README and docs/ against the demo', () => {
  const missing = missingTools();
  if (missing.length > 0) {
    test.skip(`needs ${missing.join(', ')} (apt-get install curl jq)`);
    return;
  }
  let server: ServerProcess;
  let dataDir: string;
  let env: Record<string, string>;
  const examples = documentedExamples(ROOT);

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-docs-examples-'));
    // A rate limit above the number of examples: they are run back to back with one key. Log lines
    // of level info: the snapshot's end is awaited below.
    server = await startServer(
      { DATA_DIR: dataDir, DEMO: '1', RATE_LIMIT_MAX: '10000', LOG_LEVEL: 'info' },
      300_000,
    );
    const key = /smk_[0-9A-Za-z]{38}/.exec(server.output())?.[0];
    assert.ok(key, `no demo key in the banner:\n${server.output()}`);
    env = { KEY: key, SALES_METRICS_KEY: key, SALES_METRICS_URL: server.baseUrl };
    // The examples are a reader's first calls once the demo is ready, as the banner's are. While
    // the demo's snapshot builds, a report SQL cannot answer in its budget is 503 SERVICE_BUSY by
    // design (issue 28, item 3): on a loaded CI machine, that once failed this test.
    const deadline = Date.now() + 120_000;
    while (!SNAPSHOT_BUILT.test(server.output())) {
      assert.ok(Date.now() < deadline, `the demo's report snapshot was not built:\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  after(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('the README and docs/ hold the examples this test is for', () => {
    const files = new Set(examples.map((e) => e.where.split(':')[0]));
    for (const file of ['README.md', 'docs/api.md', 'docs/clients.md', 'docs/operations.md'])
      assert.ok(files.has(file), `no example found in ${file}`);
    assert.ok(examples.length >= 15, `${examples.length} examples`);
    assert.ok(examples.some((e) => e.expected !== '2xx'));
  });

  test('every example answers the status it claims', async () => {
    const failures: string[] = [];
    for (const example of examples) {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-docs-example-'));
      try {
        const { code, stdout, stderr } = await run(example, env, cwd, server.baseUrl);
        const statuses = [...stderr.matchAll(/^HTTP_STATUS (\d{3})$/gm)].map(([, s]) => Number(s));
        const fits = (s: number) =>
          example.expected === '2xx' ? s >= 200 && s < 300 : s === example.expected;
        if (code !== 0 || statuses.length === 0 || !statuses.every(fits))
          failures.push(
            `${example.where}: exit ${code}, statuses [${statuses.join(', ')}], expected ${example.expected}\n` +
              `${example.command}\n${stdout.slice(0, 400)}\n${stderr.slice(0, 400)}`,
          );
      } finally {
        fs.rmSync(cwd, { recursive: true, force: true });
      }
    }
    assert.deepEqual(failures, []);
  });
});
