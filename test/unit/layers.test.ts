// STYLE's one-way imports are checked by dependency-cruiser with .dependency-cruiser.cjs (run by
// `npm run lint`): check that its rules really fire, on a small tree laid out like src/, so that
// a broken layer rule fails CI instead of waiting for a review.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const depcruise = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

/** Cruise a throwaway tree holding `files` with the project's rules; the rules that failed. */
async function violations(files: Record<string, string>): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'layers-'));
  try {
    await copyFile(join(root, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
    );
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [depcruise, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
        { cwd: dir },
        // depcruise exits non-zero when it finds violations: the JSON on stdout is what counts.
        (error, stdout) => (stdout ? resolve(stdout) : reject(error ?? new Error('no output'))),
      ),
    );
    const result = JSON.parse(output) as { summary: { violations: { rule: { name: string } }[] } };
    return result.summary.violations.map((v) => v.rule.name).sort();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('an upward import (query → api, db → domain) fails the check', async () => {
  const found = await violations({
    'src/api/error-response.ts': 'export const sendError = 1;\n',
    'src/query/probe.ts': "export { sendError } from '../api/error-response.js';\n",
    'src/domain/organizations.ts': 'export const findOrganization = 1;\n',
    'src/db/probe.ts': "export { findOrganization } from '../domain/organizations.js';\n",
  });
  assert.deepEqual(found, ['upward-from-db', 'upward-from-query']);
});

test('delivery modules do not import each other (web → api)', async () => {
  const found = await violations({
    'src/api/reports-api.ts': 'export const reportsApi = 1;\n',
    'src/web/probe.ts': "export { reportsApi } from '../api/reports-api.js';\n",
  });
  assert.deepEqual(found, ['web-imports-a-sibling']);
});

test('an import cycle and an import that cannot be resolved fail the check', async () => {
  const found = await violations({
    'src/db/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
    'src/db/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    'src/query/lost.ts': "export { gone } from './missing.js';\n",
  });
  assert.deepEqual(found, ['no-cycle', 'unresolvable-import']);
});

test('a downward import is allowed (api → query → db)', async () => {
  const found = await violations({
    'src/db/database.ts': 'export const db = 1;\n',
    'src/query/plan.ts': "export { db as planReport } from '../db/database.js';\n",
    'src/api/probe.ts': "export { planReport } from '../query/plan.js';\n",
  });
  assert.deepEqual(found, []);
});

test('issue 26, item 5: SQL in a delivery module (api, web, cli, demo) fails the lint; below them it is the rule', async () => {
  const { ESLint } = await import('eslint');
  const eslint = new ESLint({ cwd: root });
  const refused = async (path: string, code: string): Promise<boolean> => {
    const [result] = await eslint.lintText(code, { filePath: join(root, path) });
    return (result?.messages ?? []).some((m) => m.ruleId === 'no-restricted-syntax');
  };
  const statement = "export const read = (db: { query(s: string): unknown }) => db.query('SELECT 1');\n";
  const template = 'export const sql = `\n  SELECT version FROM schema_migrations`;\n';
  const literal = "export const sql = 'WITH x AS (SELECT 1) SELECT * FROM x';\n";
  for (const dir of ['src/cli', 'src/web', 'src/api', 'src/demo']) {
    for (const code of [statement, template, literal]) {
      assert.equal(await refused(`${dir}/probe.ts`, code), true, `${dir}: ${code}`);
    }
  }
  assert.equal(await refused('src/db/probe.ts', statement + template), false, 'SQL belongs in db/');
  assert.equal(
    await refused('src/web/probe.ts', "export const label = 'Sélectionner une boutique';\n"),
    false,
  );
});
