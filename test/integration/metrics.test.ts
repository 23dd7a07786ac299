// Issue 29, item 4: GET /metrics in Prometheus' text format on its own listener (METRICS_PORT,
// loopback), never on the public port; what the service did is counted there — the request's
// route pattern and status, the engine that answered, the snapshot built, the orders imported, a
// rate-limit refusal (R1) — and no label carries an organization, a key or an order id.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.js';
import { freePort } from '../helpers/processes.js';
import { orderLine } from '../helpers/orders.js';
import { parseExposition, valueOf } from '../helpers/prometheus-text.js';

describe('/metrics (issue 29)', () => {
  let service: TestService;
  let metricsUrl: string;
  let org: { id: string };
  let key: string;
  const scrape = async () => {
    const response = await fetch(metricsUrl);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parseExposition(await response.text());
  };

  before(async () => {
    const port = await freePort();
    service = await startTestService({
      METRICS_PORT: String(port),
      RATE_LIMIT_MAX: '3',
      INSTANCE_NAME: 'mesures-1',
    });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    ({ org, key } = await service.addOrganization('Mesures', [
      orderLine('m-1001', '2025-03-01T10:00:00Z', 'a@example.com'),
      orderLine('m-1002', '2025-03-02T10:00:00Z', 'b@example.com'),
    ]));
  });
  after(async () => service?.cleanup());

  test('not on the public port: GET /metrics there is a 404 like any unknown path; every answer names its instance', async () => {
    const response = await service.get('/metrics');
    assert.equal(response.status, 404);
    assert.equal(response.headers.get('x-instance'), 'mesures-1');
    assert.doesNotMatch(await response.text(), /sales_metrics_/);
  });

  test('a report, a refusal and an import are counted, by route pattern, engine and reason (R1)', async () => {
    const before = await scrape();
    const report = '/api/reports/tabular?metrics=orders&dimensions=date&from=2025-03-01&to=2025-03-31';
    for (let i = 0; i < 3; i++) assert.equal((await service.get(report, key)).status, 200);
    assert.equal((await service.get(report, key)).status, 429);
    const after = await scrape();

    const route = { route: '/api/reports/tabular', method: 'GET' };
    const timed = (status: string) =>
      valueOf(after, 'sales_metrics_http_request_duration_seconds_count', { ...route, status });
    assert.ok(timed('200') >= 3, 'three answers timed under the route pattern');
    assert.equal(timed('429'), 1);
    assert.equal(
      valueOf(after, 'sales_metrics_refusals_total', { reason: 'rate_limit' }) -
        valueOf(before, 'sales_metrics_refusals_total', { reason: 'rate_limit' }),
      1,
    );
    // The first report may be answered by SQL while the snapshot builds; every one is counted once.
    const computed = (families: typeof after) =>
      ['snapshot', 'delta', 'sql'].reduce(
        (sum, engine) => sum + valueOf(families, 'sales_metrics_report_computations_total', { engine }),
        0,
      );
    assert.ok(computed(after) - computed(before) >= 1, 'the uncached report counted by its engine');
    assert.ok(valueOf(after, 'sales_metrics_orders_written_total', { source: 'import' }) >= 2);
    assert.ok(valueOf(after, 'process_cpu_user_seconds_total') > 0, 'the default process metrics');
  });

  test('the snapshot built is counted, held and measured in bytes', async () => {
    const report = '/api/reports/tabular?metrics=orders&dimensions=status';
    // The build runs in the background: ask until the snapshot answers.
    for (let attempt = 0; attempt < 100; attempt++) {
      const families = await scrape();
      if (valueOf(families, 'sales_metrics_snapshots') >= 1) {
        assert.ok(valueOf(families, 'sales_metrics_snapshot_bytes') > 0);
        assert.ok(valueOf(families, 'sales_metrics_snapshot_builds_total', { outcome: 'built' }) >= 1);
        const durations = valueOf(families, 'sales_metrics_snapshot_build_duration_seconds_count', {
          source: 'database',
        });
        assert.ok(durations >= 1);
        return;
      }
      await service.get(`${report}&x=${attempt}`, key); // rate-limited or not, the build was asked for
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail('no snapshot held after 100 scrapes');
  });

  test('no label names an organization, a key or an order: every label is of bounded cardinality', async () => {
    const text = await (await fetch(metricsUrl)).text();
    for (const secret of [key, key.slice(0, 12), 'm-1001', 'a@example.com'])
      assert.ok(!text.includes(secret), `/metrics does not contain ${secret.slice(0, 6)}…`);
    const samples = [...parseExposition(text).values()].flatMap((family) => family.samples);
    const allowed = new Set([
      'route',
      'method',
      'status',
      'engine',
      'outcome',
      'source',
      'reason',
      'platform',
      'le',
      'version',
      'major',
      'minor',
      'patch',
      'space',
      'kind',
      'type',
    ]);
    for (const sample of samples)
      for (const [label, value] of Object.entries(sample.labels)) {
        assert.ok(allowed.has(label), `label ${label} is of bounded cardinality`);
        assert.ok(label === 'le' || value !== org.id, `${sample.name}{${label}} is not the organization id`);
      }
  });
});
