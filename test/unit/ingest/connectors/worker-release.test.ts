// A store is given back after its pass even when our database was busy for a moment (the sync
// worker's release, issue 11 item 4): before, one `SERVICE_BUSY` left the store leased for a minute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../../src/errors.js';
import { retryWhileMomentarilyOut } from '../../../../src/ingest/connectors/worker.js';

const busy = () => new AppError('SERVICE_BUSY', 'Base occupée');
const away = () => new AppError('DATABASE_UNAVAILABLE', 'Base injoignable');

/** An attempt that fails with the given errors in turn, then answers `done`; it counts its calls. */
function failingThen(errors: Error[]) {
  let calls = 0;
  const attempt = async () => {
    calls += 1;
    const error = errors.shift();
    if (error) throw error;
    return 'done';
  };
  return { attempt, calls: () => calls };
}

test('a release that meets our database busy, then away, is tried again until it succeeds', async () => {
  const { attempt, calls } = failingThen([busy(), away()]);
  assert.equal(await retryWhileMomentarilyOut(attempt, [1, 1, 1], () => false), 'done');
  assert.equal(calls(), 3);
});

test('any other error is thrown at once, without another try', async () => {
  const { attempt, calls } = failingThen([new AppError('INTERNAL', 'x'), busy()]);
  await assert.rejects(
    retryWhileMomentarilyOut(attempt, [1, 1], () => false),
    { code: 'INTERNAL' },
  );
  assert.equal(calls(), 1);
});

test('the tries are bounded: after the last wait the error is thrown', async () => {
  const { attempt, calls } = failingThen([busy(), busy(), busy(), busy()]);
  await assert.rejects(
    retryWhileMomentarilyOut(attempt, [1, 1], () => false),
    { code: 'SERVICE_BUSY' },
  );
  assert.equal(calls(), 3);
});

test('a stopping worker does not wait to try again', async () => {
  const { attempt, calls } = failingThen([busy()]);
  await assert.rejects(
    retryWhileMomentarilyOut(attempt, [60_000], () => true),
    { code: 'SERVICE_BUSY' },
  );
  assert.equal(calls(), 1);
});
