// Issue 28 (a command's start): `sales-metrics` loads the modules of the command it runs, not
// those of every command. Loading the CLI loads neither the database driver nor the import, the
// metrics (prom-client, OpenTelemetry) or the store connectors: each is half a CPU-second that
// `--help`, `key list` or `settings show` would pay in every process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

const MAIN = new URL('../../src/cli/main.js', import.meta.url).href;

test('issue 28: loading the CLI loads no command’s heavy dependencies', () => {
  // A fresh process: this one has loaded whatever other tests needed.
  const script = `import { createRequire } from 'node:module';
await import(${JSON.stringify(MAIN)});
process.stdout.write(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`;
  const loaded = JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  ) as string[];
  for (const heavy of ['/prom-client/', '/@opentelemetry/', '/pg/', '/pg-copy-streams/'])
    assert.deepEqual(
      loaded.filter((file) => file.includes(`/node_modules${heavy}`)),
      [],
      `${heavy} is loaded by the command that uses it`,
    );
});
