// Issue 29, item 2: report slots shared fairly between organizations (STYLE: "work is queued per
// tenant and served in turns"). Through the app's own engine (the report slots in front of the
// columnar engine, real database): while one computation of a noisy organization runs and three
// more of it wait, a quiet organization's report asked after them is served next, not after the
// whole burst. The order of service is asserted, not a time, so a loaded machine cannot flake it.
// PostgreSQL run only: the slots are the same on either engine, and this run starts faster.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LimitedReportEngine } from '../../src/metrics/limited-engine.js';
import { findOrganization } from '../../src/domain/organizations.js';
import { NO_EXTENSIONS } from '../../src/query/parse.js';
import { planReport } from '../../src/query/plan.js';
import { orderLine } from '../helpers/orders.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { describeOn } from '../helpers/database.js';

describeOn('postgres', 'fair report slots (issue 29, item 2)', () => {
  let service: TestService;

  before(async () => {
    service = await startTestService({
      REPORT_CONCURRENCY: '1',
      REPORT_CONCURRENCY_PER_ORG: '1',
      REPORT_QUEUE_WAIT_MS: '60000',
    });
    await service.addOrganization('Bruyante', [orderLine('b-1', '2025-03-01T10:00:00Z', 'b@example.com')]);
    await service.addOrganization('Calme', [orderLine('c-1', '2025-03-01T10:00:00Z', 'c@example.com')]);
  });
  after(async () => service?.cleanup());

  test('a quiet organization queued behind a noisy organization’s burst is served next', async () => {
    const engine = service.app.reportEngine as LimitedReportEngine;
    const planOf = async (slug: string) =>
      planReport(
        {
          dimensions: ['date'],
          metrics: ['orders'],
          from: '2025-03-01',
          to: '2025-03-31',
          timezone: 'UTC',
          limit: 100,
          ...NO_EXTENSIONS,
        },
        await findOrganization(service.db, slug),
      );
    const [noisy, quiet] = [await planOf('bruyante'), await planOf('calme')];
    const served: string[] = [];
    // The noisy organization's computation in progress holds the one slot.
    const running = await engine.slots.acquire(noisy.organizationId);
    const answers = [
      ...[1, 2, 3].map((n) => engine.run(noisy).then(() => served.push(`bruyante ${n}`))),
      engine.run(quiet).then(() => served.push('calme')),
    ];
    // Each asks for its slot once the engine has said that it waits for no build (a turn).
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(engine.slots.queued, 4, 'all four wait for the slot');
    running();
    await Promise.all(answers);
    // One slot: each computation ends before the next starts, so this is the order of service.
    assert.deepEqual(served, ['calme', 'bruyante 1', 'bruyante 2', 'bruyante 3']);
  });
});
