// Issue 22, docs that cannot rot: every relative link and #anchor of README.md and docs/*.md
// resolves; issue 30: and none leaves the repository (scripts/remark-links-stay-inside.js). The checker is remark-validate-links (GitHub's heading slugs, offline), run through
// remark-cli with the project's .remarkrc.json, as a reader's `npx remark` would run it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const REMARK = path.join(ROOT, 'node_modules/remark-cli/cli.js');

/** remark-cli over the given paths, failing on any warning (--frail). */
function remark(cwd: string, paths: string[]): Promise<{ code: number; report: string }> {
  const args = [REMARK, '--frail', '--quiet', '--no-stdout', '--no-color'];
  args.push('--rc-path', path.join(ROOT, '.remarkrc.json'), ...paths);
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, report: stderr }),
    );
  });
}

test('issue 22: every relative link and anchor of the README and docs/ resolves', async () => {
  const { code, report } = await remark(ROOT, ['README.md', 'docs']);
  assert.equal(code, 0, report);
});

test('issue 22: the link check fails on a missing file and a missing heading', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-docs-links-'));
  try {
    fs.writeFileSync(path.join(dir, 'other.md'), '# Other\n\n## Here\n');
    fs.writeFileSync(
      path.join(dir, 'index.md'),
      '# Index\n\n[fine](other.md#here), [gone](missing.md), [wrong](other.md#not-here), [self](#nowhere)\n',
    );
    const { code, report } = await remark(dir, ['.']);
    assert.notEqual(code, 0);
    assert.match(report, /missing\.md/);
    assert.match(report, /not-here/);
    assert.match(report, /nowhere/);
    assert.doesNotMatch(report, /#here\b/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('issue 30: the link check refuses links that leave the repository, the old README’s contract link included', async () => {
  // Outside the repository, beside it, a file that exists: remark-validate-links alone accepts the
  // link to it, which a fresh clone would not have (the README's `../shared/SPEC.md`).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-docs-outside-'));
  const repo = path.join(dir, 'repo');
  try {
    fs.mkdirSync(path.join(dir, 'shared'));
    fs.mkdirSync(path.join(repo, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'shared/SPEC.md'), '# Contract\n');
    fs.writeFileSync(
      path.join(repo, 'README.md'),
      '# Readme\n\nThe contract is [`../shared/SPEC.md`](../shared/SPEC.md).\n',
    );
    const old = await remark(repo, ['README.md']);
    assert.notEqual(old.code, 0, 'the old README is refused');
    assert.match(old.report, /`\.\.\/shared\/SPEC\.md` leaves the repository/);
    fs.writeFileSync(
      path.join(repo, 'docs/page.md'),
      [
        '# Page',
        '',
        '[inside](../README.md), [anchor](#page), [up](../../shared/SPEC.md), [absolute](/etc/hosts),',
        '[site](https://example.com/x), [mail](mailto:ops@example.com), ![image](http://example.com/a.png)',
        '',
        '[ref]: //example.com/ref',
        '',
      ].join('\n'),
    );
    const { code, report } = await remark(repo, ['docs/page.md']);
    assert.notEqual(code, 0);
    const refused = [...report.matchAll(/Link to `([^`]+)` leaves the repository/g)].map(([, url]) => url);
    assert.deepEqual(refused.sort(), [
      '../../shared/SPEC.md',
      '//example.com/ref',
      '/etc/hosts',
      'http://example.com/a.png',
      'https://example.com/x',
      'mailto:ops@example.com',
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('issue 22: the README stays short and every page of docs/ is one click from it', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const lines = readme.trimEnd().split('\n').length;
  assert.ok(lines <= 150, `README.md has ${lines} lines`);
  const pages = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
  for (const page of pages)
    assert.ok(readme.includes(`(docs/${page}`), `README.md does not link docs/${page}`);
});
