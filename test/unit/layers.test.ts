// STYLE's one-way imports are enforced by the linter (eslint.config.js): check that the rule
// really fires, so that a broken layer fails CI instead of waiting for a review.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = fileURLToPath(new URL('../../../', import.meta.url));

async function lintAs(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(code, { filePath: `${root}${file}` });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

test('an upward import (query → api, db → domain) fails the lint', async () => {
  const upward = await lintAs(
    'src/query/probe.ts',
    "export { sendError } from '../api/error-response.js';\n",
  );
  assert.ok(
    upward.some((m) => m.startsWith('import-x/no-restricted-paths')),
    upward.join('\n'),
  );
  const db = await lintAs(
    'src/db/probe.ts',
    "export { findOrganization } from '../domain/organizations.js';\n",
  );
  assert.ok(
    db.some((m) => m.startsWith('import-x/no-restricted-paths')),
    db.join('\n'),
  );
});

test('delivery modules do not import each other (web → api)', async () => {
  const messages = await lintAs('src/web/probe.ts', "export { reportsApi } from '../api/reports-api.js';\n");
  assert.ok(
    messages.some((m) => m.startsWith('import-x/no-restricted-paths')),
    messages.join('\n'),
  );
});

test('a downward import is allowed (api → query)', async () => {
  const messages = await lintAs('src/api/probe.ts', "export { planReport } from '../query/plan.js';\n");
  assert.deepEqual(
    messages.filter((m) => m.startsWith('import-x')),
    [],
  );
});
