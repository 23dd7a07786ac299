import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requirePeriod, resolvePeriod } from '../../../src/query/period.js';

test('P3/P4: one resolution of the period for the API and the Revenue report', () => {
  assert.deepEqual(resolvePeriod(undefined, undefined, '2026-11-22'), {
    from: '2026-10-23',
    to: '2026-11-22',
  });
  assert.deepEqual(resolvePeriod('2020-01-01', '2026-11-22'), { from: '2024-11-23', to: '2026-11-22' });
  assert.deepEqual(resolvePeriod('2026-02-30', '2026-03-01'), {
    problem: 'not-a-day',
    parameter: 'from',
    value: '2026-02-30',
  });
  assert.deepEqual(resolvePeriod('2026-03-01', '1/3/2026'), {
    problem: 'not-a-day',
    parameter: 'to',
    value: '1/3/2026',
  });
  assert.deepEqual(resolvePeriod('2026-03-02', '2026-03-01'), {
    problem: 'from-after-to',
    from: '2026-03-02',
    to: '2026-03-01',
  });
});

test('E1: requirePeriod throws the API’s errors, naming the parameter', () => {
  assert.throws(() => requirePeriod('2026-13-01', undefined), /Paramètre from invalide : « 2026-13-01 »/);
  assert.throws(
    () => requirePeriod('2026-03-02', '2026-03-01'),
    /Période invalide : from \(2026-03-02\) est postérieur à to \(2026-03-01\)/,
  );
});
