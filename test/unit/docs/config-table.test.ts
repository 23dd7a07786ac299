// Issue 22, docs that cannot rot: the configuration table of docs/operations.md names exactly the
// variables src/config.ts reads (SPEC section 13), in both directions, as the error catalogue's
// table is checked against src/errors.ts (test/unit/errors.test.ts); and every table of
// docs/benchmarks.md says where its figures come from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../../src/config.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The text of one `## title` section of a Markdown file, up to the next `## `. */
function section(markdown: string, title: string): string {
  const start = markdown.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `no "## ${title}" section`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The variables of the configuration table: the backticked names of each row's first cell. */
function documentedVariables(): string[] {
  const table = section(read('docs/operations.md'), 'Configuration');
  const firstCells = [...table.matchAll(/^\|([^|]*)\|/gm)].map(([, cell]) => cell ?? '');
  return firstCells.flatMap((cell) =>
    [...cell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map(([, name]) => name ?? ''),
  );
}

/** Every variable loadConfig reads, seen through an environment that records each read. */
function variablesRead(): Set<string> {
  const names = new Set<string>();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-docs-config-'));
  const env = new Proxy({ DATA_DIR: dataDir } as NodeJS.ProcessEnv, {
    get(target, name) {
      if (typeof name === 'string') names.add(name);
      return Reflect.get(target, name) as unknown;
    },
  });
  try {
    void loadConfig(env).secretKey; // the key is read lazily: read it too
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return names;
}

/** What is wrong between the documented variables and those read, in words; none when they agree. */
function mismatches(documented: readonly string[], read: ReadonlySet<string>): string[] {
  return [
    ...documented.filter((name, i) => documented.indexOf(name) !== i).map((n) => `${n} is documented twice`),
    ...[...read]
      .filter((n) => !documented.includes(n))
      .map((n) => `${n} is read by src/config.ts but not documented`),
    ...documented
      .filter((n) => !read.has(n))
      .map((n) => `${n} is documented but src/config.ts never reads it`),
  ];
}

test('issue 22: the configuration table names every variable src/config.ts reads, and nothing else', () => {
  const documented = documentedVariables();
  const read = variablesRead();
  assert.deepEqual(mismatches(documented, read), []);
  assert.equal(documented.length, read.size);
  assert.equal(read.size, 42);
});

test('issue 22: the check sees reads made through helpers, and a variable missing on either side', () => {
  const read = variablesRead();
  for (const name of [
    'PORT',
    'HOST',
    'SECRET_KEY',
    'TRUST_PROXY',
    'REPORT_SNAPSHOT_DIR',
    'SHOPIFY_API_VERSION',
  ])
    assert.ok(read.has(name), name);
  const documented = documentedVariables();
  assert.deepEqual(mismatches(documented.slice(1), read), [
    `${documented[0]} is read by src/config.ts but not documented`,
  ]);
  assert.deepEqual(mismatches([...documented, 'NOT_A_SETTING'], read), [
    'NOT_A_SETTING is documented but src/config.ts never reads it',
  ]);
});

const MONTHS = 'January|February|March|April|May|June|July|August|September|October|November|December';
/** What a benchmark table's section must say before it: command, machine, engine, date, load. */
const PROVENANCE: readonly [string, RegExp][] = [
  // A bench script, the CLI, or a test whose diagnostics print the figure (the event loop's stretches).
  [
    'the command',
    /`[^`]*(npm run bench|node [^`]*dist\/bench\/|node --test [^`]*dist\/test\/|sales-metrics )[^`]*`/,
  ],
  ['the cores', /\b\d+ cores\b/],
  ['the memory', /\b\d+ GiB\b/],
  ['the engine', /\b(embedded|PGlite|PostgreSQL)\b/],
  ['the date', new RegExp(`\\b(20\\d\\d-\\d\\d-\\d\\d|\\d{1,2} (${MONTHS}) 20\\d\\d)\\b`)],
  ['the load average', /load average/],
];

test('issue 22: every table of docs/benchmarks.md names its command, machine, engine, date and load', () => {
  const lines = read('docs/benchmarks.md').split('\n');
  let tables = 0;
  for (let i = 0; i < lines.length; i++) {
    const starts = lines[i]?.startsWith('|') && !lines[i - 1]?.startsWith('|');
    if (!starts) continue;
    tables++;
    // Where the figures come from is said before the table, after the previous table or heading.
    let j = i - 1;
    while (j > 0 && !/^#{2,3} /.test(lines[j] ?? '') && !(lines[j] ?? '').startsWith('|')) j--;
    const text = lines.slice(j, i).join(' ');
    for (const [what, pattern] of PROVENANCE)
      assert.match(text, pattern, `the table at docs/benchmarks.md line ${i + 1} does not say ${what}`);
  }
  assert.ok(tables >= 10, `${tables} tables`);
});
