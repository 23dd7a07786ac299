import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, earliestFrom, parseDay, todayUtc } from '../../../src/query/dates.js';

test('P3: a day is exactly YYYY-MM-DD and exists in the calendar', () => {
  assert.equal(parseDay('2026-02-28'), '2026-02-28');
  assert.equal(parseDay('2024-02-29'), '2024-02-29');
  for (const bad of [
    '2026-02-29',
    '2026-02-30',
    '2026-13-01',
    '2026-00-10',
    '2026-04-31',
    '2026-1-01',
    '26-01-01',
    '2026-01-01T00:00',
    ' 2026-01-01',
    '0000-01-01',
    '',
  ]) {
    assert.equal(parseDay(bad), undefined, bad);
  }
});

test('P4: the earliest from is to minus two calendar years plus one day', () => {
  assert.equal(earliestFrom('2026-11-22'), '2024-11-23');
  assert.equal(earliestFrom('2024-02-29'), '2022-03-01');
  assert.equal(earliestFrom('2026-01-01'), '2024-01-02');
  assert.equal(earliestFrom('2026-12-31'), '2025-01-01');
});

test('day arithmetic crosses months, years and leap days in UTC', () => {
  assert.equal(addDays('2024-02-28', 1), '2024-02-29');
  assert.equal(addDays('2024-03-01', -1), '2024-02-29');
  assert.equal(addDays('2026-12-31', 1), '2027-01-01');
  assert.equal(addDays('2026-11-22', -30), '2026-10-23');
  assert.equal(todayUtc(new Date('2026-11-22T23:59:59.999Z')), '2026-11-22');
  assert.equal(todayUtc(new Date('2026-11-22T23:30:00-01:00')), '2026-11-23');
});
