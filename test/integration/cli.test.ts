// The operator command line against a running server on the same database (X1), over the real
// processes: every change made by a command is seen by the server at its next request.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  runCli,
  startServerOnFreshDatabase,
  type FreshServer,
  type ServerProcess,
} from '../helpers/processes.js';
import { Client } from '../helpers/web-client.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/cli/', import.meta.url));

describe('sales-metrics command while the server runs (X1)', () => {
  let env: Record<string, string>;
  let fresh: FreshServer;
  let server: ServerProcess;
  const cli = async (...args: string[]) => {
    const result = await runCli([...args, '--json'], env);
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const tabular = async (key: string, query: string) => {
    const response = await fetch(`${server.baseUrl}/api/reports/tabular?${query}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: response.status, body: (await response.json()) as { rows: Record<string, unknown>[] } };
  };

  before(async () => {
    fresh = await startServerOnFreshDatabase();
    ({ env, server } = fresh);
  });
  after(async () => {
    assert.equal(await fresh.stop(), 0, 'the server stops cleanly on SIGTERM');
  });

  test('org create, store add, import, key create: the API answers with the imported figures', async () => {
    const { slug } = await cli('org', 'create', '--name', 'Épicerie Fine');
    assert.equal(slug, 'epicerie-fine');
    assert.deepEqual(
      await cli('store', 'add', '--org', 'epicerie-fine', '--address', 'https://shop-two.example/'),
      {
        address: 'https://shop-two.example',
      },
    );
    const imported = await cli('import', '--org', 'epicerie-fine', path.join(FIXTURES, 'orders.ndjson'));
    assert.deepEqual(imported, { imported: 3, updated: 0, rejected: 0 });
    const again = await cli('import', '--org', 'epicerie-fine', path.join(FIXTURES, 'orders.ndjson'));
    assert.deepEqual(again, { imported: 0, updated: 3, rejected: 0 }, 'I2: re-import replaces');
    const created = await cli('key', 'create', '--org', 'epicerie-fine', '--name', 'Tableur');
    assert.match(String(created.key), /^smk_[0-9A-Za-z]{38}$/);
    assert.equal(created.prefix, String(created.key).slice(0, 12));
    const { status, body } = await tabular(
      String(created.key),
      'metrics=orders,gross_sales,net_revenue,new_customers&dimensions=store&from=2026-05-01&to=2026-05-31',
    );
    assert.equal(status, 200);
    // net: (120 − 20 − 5) + (60.50 − 10.08) = 95 + 50.42; the pending order is excluded.
    assert.deepEqual(body.rows, [
      { store: 'https://cli.example', orders: 2, gross_sales: 180.5, net_revenue: 145.42, new_customers: 1 },
    ]);
  });

  test('settings set changes the figures on the next request; an empty value clears the list (S4)', async () => {
    const { key } = await cli('key', 'create', '--org', 'epicerie-fine', '--name', 'settings');
    const query = 'metrics=orders,net_revenue&from=2026-05-01&to=2026-05-31';
    assert.deepEqual(
      await cli('settings', 'set', '--org', 'epicerie-fine', '--deductions', '', '--excluded-statuses', ''),
      {
        excludedStatuses: [],
        deductions: [],
      },
    );
    assert.deepEqual((await tabular(String(key), query)).body.rows, [{ orders: 3, net_revenue: 190.5 }]);
    await cli(
      'settings',
      'set',
      '--org',
      'epicerie-fine',
      '--deductions',
      'refunds,taxes,shipping,fees',
      '--excluded-statuses',
      'pending',
    );
    assert.deepEqual((await tabular(String(key), query)).body.rows, [{ orders: 2, net_revenue: 143.92 }]);
    const bad = await runCli(['settings', 'set', '--org', 'epicerie-fine', '--deductions', 'discounts'], env);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /discounts/);
  });

  test('key list shows name, prefix, dates and state; key revoke refuses the key at once (K4)', async () => {
    const { key, prefix } = await cli('key', 'create', '--org', 'epicerie-fine', '--name', 'à révoquer');
    assert.equal((await tabular(String(key), 'metrics=orders')).status, 200);
    await cli('key', 'revoke', '--org', 'epicerie-fine', '--prefix', String(prefix));
    assert.equal((await tabular(String(key), 'metrics=orders')).status, 401);
    const { keys } = (await cli('key', 'list', '--org', 'epicerie-fine')) as {
      keys: Record<string, unknown>[];
    };
    const listed = keys.find((k) => k.prefix === prefix);
    assert.equal(listed?.state, 'revoked');
    assert.equal(listed?.name, 'à révoquer');
    assert.ok(!JSON.stringify(keys).includes(String(key)), 'K2: the full key is never shown again');
  });

  test('subscription set stopped refuses keys; active restores them (K3)', async () => {
    const { key } = await cli('key', 'create', '--org', 'epicerie-fine', '--name', 'subscription');
    const stopped = await cli('subscription', 'set', '--org', 'epicerie-fine', '--state', 'stopped');
    assert.equal(stopped.state, 'stopped');
    assert.equal((await tabular(String(key), 'metrics=orders')).status, 401);
    await cli('subscription', 'set', '--org', 'epicerie-fine', '--state', 'active');
    assert.equal((await tabular(String(key), 'metrics=orders')).status, 200);
  });

  test('I1: an invalid file is refused whole, every faulty line and field reported, nothing written', async () => {
    const result = await runCli(
      ['import', '--org', 'epicerie-fine', path.join(FIXTURES, 'invalid.csv'), '--json'],
      env,
    );
    assert.equal(result.code, 1);
    assert.match(result.stderr, /invalid\.csv:3 : created_at/);
    assert.match(result.stderr, /invalid\.csv:4 : status/);
    assert.match(result.stderr, /invalid\.csv:4 : total/);
    assert.equal(JSON.parse(result.stdout).rejected, 2);
    const skipped = await cli(
      'import',
      '--org',
      'epicerie-fine',
      '--skip-invalid',
      path.join(FIXTURES, 'invalid.csv'),
    );
    assert.deepEqual(skipped, { imported: 1, updated: 0, rejected: 2 });
  });

  test('import reads standard input with -', async () => {
    const line =
      '{"store":"https://cli.example","id":"99","created_at":"2026-05-09T10:00:00Z","status":"completed","items":1,"total":"1.00"}\n';
    const result = await runCli(['import', '--org', 'epicerie-fine', '-', '--json'], env, line);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { imported: 1, updated: 0, rejected: 0 });
  });

  test('issue 18, findings 3, 4, 6: standard input with a NUL line, year 10000, a lone surrogate and a blank amount: each refused on its line; in UTF-16, refused whole', async () => {
    const order = {
      store: 'https://stdin.example',
      created_at: '2026-05-03T10:00:00Z',
      status: 'ok',
      items: 1,
    };
    const lines = [
      JSON.stringify({ ...order, id: 's1', total: '5' }),
      '\u0000',
      JSON.stringify({ ...order, id: 's3', total: '5', created_at: '9999-12-31T23:30:00-01:00' }),
      JSON.stringify({ ...order, id: 's4', total: '5', status: 'x\ud800' }),
      JSON.stringify({ ...order, id: 's5', total: ' 5' }),
    ].join('\n');
    const refused = await runCli(['import', '--org', 'epicerie-fine', '-'], env, lines);
    assert.equal(refused.code, 1);
    for (const expected of [
      /-:2 : \(ligne\) : caractère nul/,
      /-:3 : created_at : date hors limites/,
      /-:4 : status : caractère invalide : moitié de paire UTF-16 isolée/,
      /-:5 : total : montant invalide « {2}5 » : pas d’espace avant ou après le nombre/,
    ])
      assert.match(refused.stderr, expected);
    const skipped = await runCli(
      ['import', '--org', 'epicerie-fine', '--skip-invalid', '--json', '-'],
      env,
      lines,
    );
    assert.equal(skipped.code, 0, skipped.stderr);
    assert.deepEqual(JSON.parse(skipped.stdout), { imported: 1, updated: 0, rejected: 4 });
    const utf16 = await runCli(
      ['import', '--org', 'epicerie-fine', '--skip-invalid', '-'],
      env,
      Buffer.from(`\uFEFF${lines}`, 'utf16le'),
    );
    assert.equal(utf16.code, 1);
    assert.match(utf16.stderr, /Import refusé : le fichier est en UTF-16 LE, pas en UTF-8/);
  });

  test('user create reads the password on standard input and never prints it', async () => {
    const result = await runCli(
      [
        'user',
        'create',
        '--org',
        'epicerie-fine',
        '--email',
        'Ops@Example.com',
        '--password-stdin',
        '--json',
      ],
      env,
      's3cret-passphrase\n',
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { email: 'ops@example.com', created: true });
    assert.ok(!(result.stdout + result.stderr).includes('s3cret-passphrase'));
  });

  test('issue 30: user password resets a login from standard input and ends its sessions', async () => {
    const browser = new Client(server.baseUrl);
    assert.equal((await browser.login('ops@example.com', 's3cret-passphrase')).status, 303);
    assert.equal((await browser.get('/reports/revenue')).status, 200, 'signed in before the reset');
    const reset = (email: string, stdin: string, ...more: string[]) =>
      runCli(['user', 'password', '--org', 'epicerie-fine', '--email', email, ...more, '--json'], env, stdin);
    const refused = await reset('ops@example.com', 'new passphrase 30\n');
    assert.notEqual(refused.code, 0, 'the password is never taken from anything but stdin');
    assert.match(refused.stderr, /--password-stdin/);
    assert.notEqual((await reset('nobody@example.com', 'new passphrase 30\n', '--password-stdin')).code, 0);
    const result = await reset('OPS@example.com', 'new passphrase 30\n', '--password-stdin');
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { email: 'ops@example.com', sessionsEnded: 1 });
    assert.ok(!(result.stdout + result.stderr).includes('new passphrase 30'));
    const after = await browser.get('/reports/revenue');
    assert.equal(after.headers.get('location')?.startsWith('/login'), true, 'the old session ended');
    const again = new Client(server.baseUrl);
    assert.equal(
      (await again.login('ops@example.com', 's3cret-passphrase')).status,
      401,
      'old password refused',
    );
    assert.equal((await again.login('ops@example.com', 'new passphrase 30')).status, 303);
    assert.equal((await again.get('/reports/revenue')).status, 200, 'signed in with the new password');
  });

  test('errors: unknown organization, unknown command, missing option → non-zero with a message', async () => {
    for (const args of [
      ['key', 'list', '--org', 'nope'],
      ['frobnicate'],
      ['key', 'create', '--org', 'epicerie-fine'],
      ['store', 'add', '--org', 'epicerie-fine', '--address', 'not a url'],
      ['key', 'list', '--org', 'epicerie-fine', '--bogus'],
    ]) {
      const result = await runCli(args, env);
      assert.notEqual(result.code, 0, args.join(' '));
      assert.ok(result.stderr.trim().length > 0, args.join(' '));
    }
  });
});
