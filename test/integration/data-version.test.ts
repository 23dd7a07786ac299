// X1 through the API once the organization's snapshot is held (issue 29, item 2): a report's
// data version is the one its key's lookup read, after the request arrived, instead of a second
// statement of its own. An order imported after one report is in the next one, answered by the
// columnar engine (its snapshot brought up to date), never by a snapshot of before the import.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { importOrderRecords } from '../../src/ingest/import.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { freePort } from '../helpers/processes.js';
import { orderLine } from '../helpers/orders.js';
import { parseExposition, valueOf } from '../helpers/prometheus-text.js';

describe('the data version read with the key (issue 29, item 2; X1)', () => {
  let service: TestService;
  let metricsUrl: string;
  let org: { id: string };
  let key: string;
  let asked = 0;
  /** Columnar answers so far (from the snapshot, or after a delta), not SQL's. */
  const columnarAnswers = async () => {
    const families = parseExposition(await (await fetch(metricsUrl)).text());
    const count = (engine: string) =>
      valueOf(families, 'sales_metrics_report_computations_total', { engine }) ?? 0;
    return count('snapshot') + count('delta');
  };
  /** An uncached report's order count (a new limit each time: never the response cache, C1). */
  const orders = async () => {
    const response = await service.get(
      `/api/reports/tabular?metrics=orders&from=2025-03-01&to=2025-03-31&limit=${1000 - ++asked}`,
      key,
    );
    assert.equal(response.status, 200, await response.clone().text());
    const body = (await response.json()) as { rows: { orders: number }[] };
    return body.rows[0]?.orders ?? 0;
  };

  before(async () => {
    const port = await freePort();
    service = await startTestService({ METRICS_PORT: String(port), RATE_LIMIT_MAX: '1000' });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    ({ org, key } = await service.addOrganization('Versions', [
      orderLine('v-1', '2025-03-01T10:00:00Z', 'a@example.com'),
      orderLine('v-2', '2025-03-02T10:00:00Z', 'b@example.com'),
    ]));
  });
  after(async () => service?.cleanup());

  test('an order imported between two reports is in the second, answered by the snapshot kept current', async () => {
    // Until the snapshot answers (its build runs beside the first requests).
    for (let attempt = 0; (await columnarAnswers()) === 0; attempt++) {
      assert.ok(attempt < 100, 'the snapshot never answered');
      assert.equal(await orders(), 2);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (let n = 3; n <= 5; n++) {
      const before = await columnarAnswers();
      await importOrderRecords(service.db, org.id, [
        orderLine(`v-${n}`, `2025-03-0${n}T10:00:00Z`, `c${n}@example.com`),
      ]);
      assert.equal(await orders(), n, `the order imported before report ${n} is in it`);
      assert.equal(await columnarAnswers(), before + 1, 'answered by the columnar engine, not SQL');
    }
  });
});
