// Issue 29, items 1 and 6: the HAProxy recipe of deploy/haproxy.cfg in front of two
// `sales-metrics serve` processes on one PostgreSQL database. One key's requests always reach the
// same instance (each answer names it in X-Instance); when that instance dies, HAProxy moves them
// to the other, which answers the same figures (X1: whichever instance answers, the figures are
// the database's); /metrics parses with a Prometheus text-format parser on each instance's own
// metrics port, and is reachable neither on the public port nor through the balancer.
// PostgreSQL run only (the embedded database serves one process by design).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { createApiKey } from '../../src/auth/api-keys.js';
import { createOrganization, setSubscription } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { describeOn } from '../helpers/database.js';
import { orderLine } from '../helpers/orders.js';
import {
  freePort,
  startServer,
  startServerOnFreshDatabase,
  type FreshServer,
  type ServerProcess,
} from '../helpers/processes.js';
import { parseExposition, valueOf } from '../helpers/prometheus-text.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REPORT =
  '/api/reports/tabular?metrics=orders,net_revenue,unique_customers&dimensions=date,status&from=2025-03-01&to=2025-03-31';

function haproxyAvailable(): boolean {
  const found = spawnSync('haproxy', ['-v']).status === 0;
  if (!found && process.env.CI === 'true') throw new Error('CI=true and haproxy is not installed');
  return found;
}

/** deploy/haproxy.cfg as shipped, listening on loopback and pointing at the test's instances. */
function recipeFor(listen: number, instances: readonly { name: string; port: number }[]): string {
  const recipe = fs.readFileSync(path.join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
  assert.match(recipe, /^\s+bind :80$/m);
  assert.match(recipe, /^\s+server app1 /m);
  const servers = instances.map(({ name, port }) => `    server ${name} 127.0.0.1:${port} check`).join('\n');
  return `${recipe
    .replace(/^\s+bind :80$/m, `    bind 127.0.0.1:${listen}`)
    .replace(/^\s+server app\d .*\n?/gm, '')
    .trimEnd()}\n${servers}\n`;
}

describeOn('postgres', 'HAProxy in front of two instances (issue 29)', () => {
  const available = haproxyAvailable();
  let first: FreshServer;
  let second: ServerProcess;
  let haproxy: ChildProcess;
  let balancer: string;
  let cfgDir: string;
  const metricsPorts: Record<string, number> = {};
  const keys: string[] = [];

  const viaBalancer = async (key: string) => {
    const ask = () => fetch(`${balancer}${REPORT}`, { headers: { authorization: `Bearer ${key}` } });
    // A GET on a kept-alive connection the proxy closed just then is asked again once, as HTTP
    // clients do for idempotent requests (undici's fetch does not): seen once in CI, before any kill.
    const response = await ask().catch((error: unknown) => {
      if ((error as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw error;
      return ask();
    });
    return {
      status: response.status,
      instance: response.headers.get('x-instance'),
      body: await response.text(),
    };
  };

  before(async () => {
    if (!available) return;
    [metricsPorts.a, metricsPorts.b] = [await freePort(), await freePort()];
    first = await startServerOnFreshDatabase({ INSTANCE_NAME: 'a', METRICS_PORT: String(metricsPorts.a) });
    second = await startServer({ ...first.env, INSTANCE_NAME: 'b', METRICS_PORT: String(metricsPorts.b) });
    const db = await openDatabase(loadConfig(first.env), { role: 'cli' });
    try {
      const org = await createOrganization(db, { name: 'Répartie' });
      await setSubscription(db, org.id, 'active');
      await importOrderRecords(db, org.id, [
        orderLine('r-1', '2025-03-01T10:00:00Z', 'a@example.com'),
        orderLine('r-2', '2025-03-02T10:00:00Z', 'a@example.com'),
        orderLine('r-3', '2025-03-09T23:30:00Z', 'b@example.com'),
      ]);
      // Several keys of one organization: each may hash to a different instance.
      for (let i = 0; i < 6; i++) keys.push((await createApiKey(db, org.id, `clé ${i}`)).key);
    } finally {
      await db.close();
    }
    const port = (url: string) => Number(new URL(url).port);
    const listen = await freePort();
    cfgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-haproxy-'));
    const cfg = path.join(cfgDir, 'haproxy.cfg');
    fs.writeFileSync(
      cfg,
      recipeFor(listen, [
        { name: 'a', port: port(first.server.baseUrl) },
        { name: 'b', port: port(second.baseUrl) },
      ]),
    );
    assert.equal(spawnSync('haproxy', ['-c', '-q', '-f', cfg]).status, 0, 'the recipe is valid');
    haproxy = spawn('haproxy', ['-db', '-f', cfg], { stdio: 'ignore' });
    balancer = `http://127.0.0.1:${listen}`;
    for (let i = 0; ; i++) {
      const answer = await fetch(`${balancer}/healthz`).catch(() => undefined);
      if (answer?.ok) break;
      if (i > 200) throw new Error('haproxy did not start');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  after(async () => {
    haproxy?.kill('SIGTERM');
    await second?.stop();
    await first?.stop();
    if (cfgDir) fs.rmSync(cfgDir, { recursive: true, force: true });
  });

  test(
    'one key, one instance; the figures identical on both; /metrics parsed, never public; a killed instance’s keys move',
    { skip: !available && 'haproxy is not installed' },
    async () => {
      // Each key's requests land on one instance, every time.
      const placement = new Map<string, string>();
      for (const key of keys) {
        const seen = new Set<string>();
        for (let i = 0; i < 4; i++) {
          const answer = await viaBalancer(key);
          assert.equal(answer.status, 200, answer.body);
          seen.add(answer.instance ?? '');
        }
        assert.equal(seen.size, 1, `one instance for the key (${[...seen].join(', ')})`);
        placement.set(key, [...seen][0] ?? '');
      }
      // The same figures from either instance, asked directly.
      const [key] = keys as [string];
      const direct = async (baseUrl: string) =>
        (await fetch(`${baseUrl}${REPORT}`, { headers: { authorization: `Bearer ${key}` } })).text();
      const expected = await direct(first.server.baseUrl);
      assert.equal(await direct(second.baseUrl), expected);
      const rows = (JSON.parse(expected) as { rows: { orders: number }[] }).rows;
      assert.equal(
        rows.reduce((sum, row) => sum + row.orders, 0),
        3,
        'the three orders, whichever instance answers',
      );

      // /metrics: on each instance's metrics port, in the text format; not on the public port, not through HAProxy.
      for (const [name, port] of Object.entries(metricsPorts)) {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        const families = parseExposition(text);
        assert.ok(
          valueOf(families, 'sales_metrics_http_request_duration_seconds_count') > 0,
          `instance ${name} counted its requests`,
        );
        assert.ok(families.has('process_resident_memory_bytes'));
      }
      assert.equal((await fetch(`${first.server.baseUrl}/metrics`)).status, 404);
      assert.equal((await fetch(`${balancer}/metrics`)).status, 404);

      // The instance serving the first key dies: its keys move to the other, with the same figures.
      const victim = placement.get(key);
      const survivor = victim === 'a' ? 'b' : 'a';
      await (victim === 'a' ? first.server : second).kill();
      const moved = await viaBalancer(key);
      assert.equal(moved.status, 200, 'a request to the dead instance is retried on the other');
      assert.equal(moved.instance, survivor);
      assert.equal(moved.body, expected);
      for (const other of keys) assert.equal((await viaBalancer(other)).instance, survivor);
    },
  );
});
