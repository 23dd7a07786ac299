// Several instances on one PostgreSQL server and one Redis (issue 4, R3, K4, C1, E2): three real
// server processes; the services are stopped and started for real. PostgreSQL run only (the
// embedded database serves one server process by design).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { TEST_SECRET_KEY, describeOn } from '../helpers/database.js';
import { runCli, startServer, type ServerProcess } from '../helpers/processes.js';
import { redisAvailable, startRedis, type TestRedis } from '../helpers/redis.js';

interface TempPostgres {
  url: string;
  pause(): void;
  resume(): void;
  stop(): void;
}

const SCRIPTS = fileURLToPath(new URL('../../../scripts/', import.meta.url));
const ORDERS = fileURLToPath(new URL('../../../test/fixtures/cli/orders.ndjson', import.meta.url));

describeOn('postgres', 'three instances sharing PostgreSQL and Redis', () => {
  let postgres: TempPostgres;
  let redis: TestRedis;
  let servers: ServerProcess[] = [];
  let env: Record<string, string>;
  const cli = async (...args: string[]) => {
    const result = await runCli([...args, '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as Record<string, string>;
  };
  const call = (server: ServerProcess, key: string, query = 'metrics=orders') =>
    fetch(`${server.baseUrl}/api/reports/tabular?${query}`, {
      headers: { authorization: `Bearer ${key}` },
    });
  const newKey = async () =>
    (await cli('key', 'create', '--org', 'multi', '--name', 'instance test')).key as string;

  before(async () => {
    assert.ok(redisAvailable(), 'redis-server is installed');
    const { startTempPostgres } = (await import(
      pathToFileURL(path.join(SCRIPTS, 'temp-postgres.js')).href
    )) as {
      startTempPostgres(): Promise<TempPostgres | undefined>;
    };
    const started = await startTempPostgres();
    assert.ok(started, 'PostgreSQL server binaries are installed');
    postgres = started;
    redis = await startRedis();
    env = {
      DATABASE_URL: postgres.url,
      SECRET_KEY: TEST_SECRET_KEY,
      REDIS_URL: redis.url,
      RATE_LIMIT_MAX: '9',
      LOG_LEVEL: 'info',
    };
    await cli('migrate');
    assert.equal((await cli('org', 'create', '--name', 'Multi')).slug, 'multi');
    await cli('subscription', 'set', '--org', 'multi', '--state', 'active');
    await cli('import', '--org', 'multi', ORDERS);
    servers = await Promise.all([startServer(env), startServer(env), startServer(env)]);
  });
  after(async () => {
    const codes = await Promise.all(servers.map((s) => s.stop()));
    await redis?.stop();
    postgres?.stop();
    assert.deepEqual(codes, [0, 0, 0], 'every instance shuts down cleanly on SIGTERM');
  });

  test('R3: the per-key rate limit is shared by the instances', async () => {
    const key = await newKey();
    const remaining: string[] = [];
    for (let i = 0; i < 9; i++) {
      const response = await call(servers[i % 3] as ServerProcess, key);
      assert.equal(response.status, 200);
      remaining.push(response.headers.get('x-ratelimit-remaining') ?? '');
    }
    assert.deepEqual(remaining, ['8', '7', '6', '5', '4', '3', '2', '1', '0']);
    for (const server of servers) assert.equal((await call(server, key)).status, 429);
  });

  test('K4: a key revoked through one instance is refused by every instance on the next request', async () => {
    const key = await newKey();
    for (const server of servers) assert.equal((await call(server, key)).status, 200);
    await cli('key', 'revoke', '--org', 'multi', '--prefix', key.slice(0, 12));
    for (const server of servers) assert.equal((await call(server, key)).status, 401);
  });

  test('K4 under load: while requests stream to every instance, each request sent after a revocation is refused', async () => {
    const key = await newKey();
    const query = 'metrics=orders&from=2026-05-01&to=2026-05-31';
    assert.equal((await call(servers[0] as ServerProcess, key, query)).status, 200);
    let revokeStarted = Infinity;
    let revokedAt = Infinity;
    let markRevoked!: () => void;
    const revoked = new Promise<void>((resolve) => (markRevoked = resolve));
    const before: number[] = [];
    const after: number[] = [];
    // Two connections per instance until each one's first request sent after the revocation (so
    // that R2's shared count of failures stays low); RATE_LIMIT_MAX makes some earlier ones 429.
    // Requests sent while the command runs may see the key either way; a connection refused then
    // waits for the command to return (R2 would otherwise count its failures at speed).
    const connection = async (server: ServerProcess) => {
      for (;;) {
        const sentAt = performance.now();
        const status = (await call(server, key, query)).status;
        if (sentAt > revokedAt) return void after.push(status);
        if (sentAt < revokeStarted) before.push(status);
        else if (status === 401) await revoked;
      }
    };
    const connections = servers.flatMap((server) => [connection(server), connection(server)]);
    // Revoked mid-stream: once 6 answers came (not after a fixed 0.2 s, which a loaded CI can miss).
    for (let waited = 0; before.length < 6; waited += 20) {
      assert.ok(waited < 60_000, `requests before the revocation: ${before.length}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    revokeStarted = performance.now();
    await cli('key', 'revoke', '--org', 'multi', '--prefix', key.slice(0, 12));
    revokedAt = performance.now();
    markRevoked();
    await Promise.all(connections);
    assert.ok(before.length >= 6, `requests before the revocation: ${before.length}`);
    assert.deepEqual(
      before.filter((status) => status !== 200 && status !== 429),
      [],
      'accepted or rate-limited before',
    );
    assert.deepEqual(after, Array(6).fill(401));
  });

  test('C1: an answer cached by one instance is served by the others', async () => {
    const key = await newKey();
    const query = 'metrics=orders,gross_sales&from=2026-05-01&to=2026-05-31';
    const first = await (await call(servers[0] as ServerProcess, key, query)).json();
    const line =
      '{"store":"https://cli.example","id":"multi-1","created_at":"2026-05-20T10:00:00Z","status":"completed","items":1,"total":"1000.00"}\n';
    assert.equal((await runCli(['import', '--org', 'multi', '-'], env, line)).code, 0);
    for (const server of servers.slice(1))
      assert.deepEqual(await (await call(server, key, query)).json(), first);
    const fresh = (await (await call(servers[1] as ServerProcess, key, `${query}&limit=5`)).json()) as {
      rows: { gross_sales: number }[];
    };
    assert.equal(
      fresh.rows[0]?.gross_sales,
      ((first as { rows: { gross_sales: number }[] }).rows[0]?.gross_sales ?? 0) + 1000,
    );
  });

  test('Redis down: the API keeps answering with per-instance limits and says so in its logs; back when Redis is', async () => {
    const key = await newKey();
    await redis.stop();
    for (const server of servers) {
      const response = await call(server, key);
      assert.equal(response.status, 200);
      assert.ok(response.headers.get('x-ratelimit-remaining'), 'limits still apply, per instance');
    }
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(
      servers.every((s) => /Redis/.test(s.output())),
      'each instance logs the fallback',
    );
    await redis.start();
    for (let i = 0; i < 50; i++) {
      const ready = (await (await fetch(`${servers[0]?.baseUrl}/readyz`)).json()) as { redis: string };
      if (ready.redis === 'up') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(
      ((await (await fetch(`${servers[0]?.baseUrl}/readyz`)).json()) as { redis: string }).redis,
      'up',
    );
  });

  test('E2: database stopped → 503 JSON with Retry-After, alive but not ready; back to 200 within seconds, no restart', async () => {
    const key = await newKey();
    postgres.pause();
    try {
      for (const server of servers) {
        const response = await call(server, key);
        assert.equal(response.status, 503);
        assert.equal(response.headers.get('retry-after'), '5');
        assert.equal(typeof ((await response.json()) as { error: unknown }).error, 'string');
        assert.equal((await fetch(`${server.baseUrl}/healthz`)).status, 200);
        assert.equal((await fetch(`${server.baseUrl}/readyz`)).status, 503);
      }
    } finally {
      postgres.resume();
    }
    const started = Date.now();
    for (const server of servers) {
      let status = 0;
      let body = '';
      while (status !== 200 && Date.now() - started < 15_000) {
        const response = await call(server, key);
        status = response.status;
        body = await response.text();
        if (status !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(status, 200, `recovered by itself (last: ${status} ${body})`);
    }
    console.log(`# recovered ${Date.now() - started} ms after PostgreSQL came back`);
  });
});
