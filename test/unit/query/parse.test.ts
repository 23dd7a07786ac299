import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../src/errors.js';
import { parseIdList, parseTabularQuery, type RawQuery } from '../../../src/query/parse.js';

const zones = new Set(['UTC', 'Europe/Paris', 'US/Eastern', 'Asia/Kolkata']);
const context = { today: '2026-11-22', isTimeZone: (name: string) => zones.has(name) };
const parse = (raw: RawQuery) => parseTabularQuery(raw, context);

function rejects(raw: RawQuery, code: string, message?: RegExp): AppError {
  try {
    parse(raw);
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, code);
    if (message) assert.match(error.message, message);
    return error;
  }
  assert.fail(`accepted ${JSON.stringify(raw)}`);
}

test('P1: ids are trimmed, empties ignored, duplicates dropped keeping the first, repeated parameters merged', () => {
  assert.deepEqual(parseIdList(' orders , ,net_revenue,orders,'), ['orders', 'net_revenue']);
  assert.deepEqual(parseIdList(['orders', 'taxes,orders']), ['orders', 'taxes']);
  const q = parse({ metrics: ['taxes', ' orders,taxes'], dimensions: 'store,,date ,store' });
  assert.deepEqual(q.metrics, ['taxes', 'orders']);
  assert.deepEqual(q.dimensions, ['store', 'date']);
});

test('P1: no metric after cleaning is a 400', () => {
  rejects({}, 'MISSING_METRICS', /metrics/);
  rejects({ metrics: ' , ' }, 'MISSING_METRICS');
  rejects({ dimensions: 'date' }, 'MISSING_METRICS');
});

test('P2: unknown ids are listed by kind in request order; a dimension passed as a metric is unknown', () => {
  const error = rejects(
    { metrics: 'orders,date,bogus', dimensions: 'orders,store,zzz' },
    'UNKNOWN_IDENTIFIERS',
  );
  assert.equal(error.message, 'Dimensions ou métriques inconnues');
  assert.equal(error.status, 400);
  assert.deepEqual(error.body, { unknownDimensions: ['orders', 'zzz'], unknownMetrics: ['date', 'bogus'] });
  const only = rejects({ metrics: 'nope' }, 'UNKNOWN_IDENTIFIERS');
  assert.deepEqual(only.body, { unknownDimensions: [], unknownMetrics: ['nope'] });
});

test('P3: to defaults to today, from to 30 days before to; from after to is a 400', () => {
  const q = parse({ metrics: 'orders' });
  assert.equal(q.to, '2026-11-22');
  assert.equal(q.from, '2026-10-23');
  assert.equal(parse({ metrics: 'orders', to: '2026-03-01' }).from, '2026-01-30');
  rejects({ metrics: 'orders', from: '2026-05-02', to: '2026-05-01' }, 'INVALID_PARAMETER', /from/);
  const sameDay = parse({ metrics: 'orders', from: '2026-05-01', to: '2026-05-01' });
  assert.equal(sameDay.from, sameDay.to);
});

test('P3/E1: a malformed or impossible date names the parameter and the expected format', () => {
  const error = rejects({ metrics: 'orders', from: '2026-13-01' }, 'INVALID_PARAMETER');
  assert.match(error.message, /^Paramètre from invalide : « 2026-13-01 » \(format attendu AAAA-MM-JJ/);
  rejects({ metrics: 'orders', to: '2026-02-30' }, 'INVALID_PARAMETER', /to/);
  rejects({ metrics: 'orders', to: '' }, 'INVALID_PARAMETER', /to/);
  rejects({ metrics: 'orders', from: '2026-1-1' }, 'INVALID_PARAMETER', /from/);
  rejects({ metrics: 'orders', from: ['2026-01-01', '2026-01-02'] }, 'INVALID_PARAMETER', /from/);
});

test('P4: a period longer than two years is shortened keeping the end date', () => {
  const q = parse({ metrics: 'orders', from: '2020-01-01', to: '2026-11-22' });
  assert.equal(q.from, '2024-11-23');
  assert.equal(q.to, '2026-11-22');
  assert.equal(parse({ metrics: 'orders', from: '2020-01-01', to: '2024-02-29' }).from, '2022-03-01');
  assert.equal(parse({ metrics: 'orders', from: '2024-11-23', to: '2026-11-22' }).from, '2024-11-23');
});

test('P5: timezone is a known IANA name, echoed as given; anything else is a 400', () => {
  assert.equal(parse({ metrics: 'orders' }).timezone, 'UTC');
  assert.equal(parse({ metrics: 'orders', timezone: 'US/Eastern' }).timezone, 'US/Eastern');
  for (const bad of ['', 'Mars/Olympus', 'europe/paris', '+01:00', 'UTC+1']) {
    rejects({ metrics: 'orders', timezone: bad }, 'INVALID_PARAMETER', /timezone/);
  }
});

test('P6: limit is a decimal integer from 1 to 100000, else a 400 giving the range', () => {
  assert.equal(parse({ metrics: 'orders' }).limit, 10_000);
  assert.equal(parse({ metrics: 'orders', limit: '1' }).limit, 1);
  assert.equal(parse({ metrics: 'orders', limit: '100000' }).limit, 100_000);
  for (const bad of ['0', '-1', '1.5', 'abc', '100001', '', '1e3', ' 5', '0x10', '99999999999']) {
    rejects({ metrics: 'orders', limit: bad }, 'INVALID_PARAMETER', /limit.*1 à 100000/);
  }
});

test('P7: unknown parameters are ignored', () => {
  assert.deepEqual(parse({ metrics: 'orders', foo: 'bar', callback: 'x' }).metrics, ['orders']);
});

test('issue 18: the date dimension refuses a period starting 0001-01-01 in a zone still in year 0, or ending 9999-12-31 in one already in year 10000', () => {
  const edges = { beforeYear1: new Set(['US/Eastern']), afterYear9999: new Set(['Asia/Kolkata']) };
  const withEdges = (raw: RawQuery) => parseTabularQuery(raw, { ...context, calendarEdges: edges });
  const refused = (raw: RawQuery, day: string) =>
    assert.throws(
      () => withEdges(raw),
      (error: unknown) =>
        error instanceof AppError &&
        error.code === 'INVALID_PARAMETER' &&
        /^Paramètre timezone invalide : « [^»]+ » \(avec la dimension date/.test(error.message) &&
        error.message.includes(day),
    );
  refused(
    { metrics: 'orders', dimensions: 'date', from: '0001-01-01', to: '0001-02-01', timezone: 'US/Eastern' },
    '0001-01-01',
  );
  refused(
    { metrics: 'orders', dimensions: 'store,date', to: '9999-12-31', timezone: 'Asia/Kolkata' },
    '9999-12-31',
  );
  // One day in, without the date dimension, or in the other direction: answered.
  for (const raw of [
    { metrics: 'orders', dimensions: 'date', from: '0001-01-02', to: '0001-02-01', timezone: 'US/Eastern' },
    { metrics: 'orders', dimensions: 'date', to: '9999-12-30', timezone: 'Asia/Kolkata' },
    { metrics: 'orders', dimensions: 'store', to: '9999-12-31', timezone: 'Asia/Kolkata' },
    { metrics: 'orders', dimensions: 'date', to: '9999-12-31', timezone: 'US/Eastern' },
    { metrics: 'orders', dimensions: 'date', from: '0001-01-01', to: '0001-02-01', timezone: 'Asia/Kolkata' },
  ]) {
    assert.equal(withEdges(raw).timezone, raw.timezone, JSON.stringify(raw));
  }
});
