// Section 14's parameters in the parse step: F1 filters, G2 granularity, O1 offset, V1 format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../src/errors.js';
import {
  MAX_FILTER_VALUES,
  NO_EXTENSIONS,
  parseFormat,
  parseTabularQuery,
  type RawQuery,
} from '../../../src/query/parse.js';

const context = { today: '2026-11-22', isTimeZone: (name: string) => name === 'UTC' };
const parse = (raw: RawQuery) => parseTabularQuery({ metrics: 'orders', ...raw }, context);

function rejects(run: () => unknown, code: string, message?: RegExp): AppError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, code);
    if (message) assert.match(error.message, message);
    return error;
  }
  assert.fail('accepted');
}

test('section 14 absent: the query carries the defaults (no filter, day, offset 0)', () => {
  const q = parse({});
  assert.deepEqual(
    { filters: q.filters, granularity: q.granularity, offset: q.offset },
    { ...NO_EXTENSIONS, filters: {} },
  );
});

test('F1: values trimmed, empties dropped, duplicates removed, a repeated filter joined', () => {
  const q = parse({
    'filter.country': [' FR ,,Unknown', 'DE,FR'],
    'filter.status': 'completed',
  });
  assert.deepEqual(q.filters, { country: ['FR', 'Unknown', 'DE'], status: ['completed'] });
});

test('F1: filters are kept in one order (store, country, customer_type, status) whatever the URL order', () => {
  const q = parse({ 'filter.status': 'a', 'filter.customer_type': 'new', 'filter.store': 's' });
  assert.deepEqual(Object.keys(q.filters), ['store', 'customer_type', 'status']);
});

test('F1: a filter on a dimension that is not filterable is an unknown dimension (P2), after those of `dimensions`', () => {
  const error = rejects(
    () => parse({ dimensions: 'date,nope', 'filter.date': '2026-01-01', 'filter.bogus': 'x' }),
    'UNKNOWN_IDENTIFIERS',
    /^Dimensions ou métriques inconnues$/,
  );
  assert.deepEqual(error.body, { unknownDimensions: ['nope', 'date', 'bogus'], unknownMetrics: [] });
  const once = rejects(() => parse({ dimensions: 'zzz', 'filter.zzz': 'x' }), 'UNKNOWN_IDENTIFIERS');
  assert.deepEqual(once.body, { unknownDimensions: ['zzz'], unknownMetrics: [] });
});

test('F1: a filter without any value is a 400 naming it; past the bound too', () => {
  rejects(() => parse({ 'filter.store': '' }), 'INVALID_PARAMETER', /^Paramètre filter\.store invalide/);
  rejects(() => parse({ 'filter.country': ' , ' }), 'INVALID_PARAMETER', /filter\.country/);
  const many = Array.from({ length: MAX_FILTER_VALUES + 1 }, (_, i) => `s${i}`).join(',');
  rejects(() => parse({ 'filter.status': many }), 'INVALID_PARAMETER', /au plus 1000 valeurs/);
  assert.equal(parse({ 'filter.status': many.split(',').slice(1).join(',') }).filters.status?.length, 1000);
});

test('F1: other parameters that merely look alike are ignored (P7)', () => {
  assert.deepEqual(parse({ filter: 'x', filters: 'y', 'Filter.store': 'z', filterstore: 'w' }).filters, {});
});

test('G2: the five granularities; anything else names the parameter and the allowed values', () => {
  for (const g of ['day', 'week', 'month', 'quarter', 'year'])
    assert.equal(parse({ dimensions: 'date', granularity: g }).granularity, g);
  for (const bad of ['', 'Month', 'hour', 'weeks', ' day']) {
    rejects(
      () => parse({ granularity: bad }),
      'INVALID_PARAMETER',
      /^Paramètre granularity invalide : « .* » \(day, week, month, quarter, year attendu\)$/,
    );
  }
  rejects(() => parse({ granularity: ['day', 'week'] }), 'INVALID_PARAMETER', /granularity/);
});

test('O1: a decimal integer from 0 to 10,000,000; anything else names offset and the range', () => {
  assert.equal(parse({ offset: '0' }).offset, 0);
  assert.equal(parse({ offset: '10000000' }).offset, 10_000_000);
  assert.equal(parse({ offset: '007' }).offset, 7);
  for (const bad of ['', '-1', '1.5', 'abc', '10000001', '1e3', ' 1', '0x10', '999999999']) {
    rejects(
      () => parse({ offset: bad }),
      'INVALID_PARAMETER',
      /^Paramètre offset invalide .*entier de 0 à 10000000/,
    );
  }
});

test('V1: format is json or csv when given, undefined when absent; anything else names format', () => {
  assert.equal(parseFormat({}), undefined);
  assert.equal(parseFormat({ format: 'csv' }), 'csv');
  assert.equal(parseFormat({ format: 'json' }), 'json');
  for (const bad of ['', 'CSV', 'xml', 'text/csv']) {
    rejects(() => parseFormat({ format: bad }), 'INVALID_PARAMETER', /^Paramètre format invalide/);
  }
});

test('F1: a filter value with a NUL character is a 400 naming the filter (no stored value has one)', () => {
  rejects(
    () => parse({ 'filter.status': 'a\u0000b' }),
    'INVALID_PARAMETER',
    /^Paramètre filter\.status invalide .*NUL/,
  );
});

test('G2: without the date dimension the granularity is checked but changes nothing', () => {
  assert.equal(parse({ granularity: 'week' }).granularity, 'day');
  assert.equal(parse({ dimensions: 'store', granularity: 'month' }).granularity, 'day');
  assert.equal(parse({ dimensions: 'store,date', granularity: 'month' }).granularity, 'month');
  rejects(() => parse({ granularity: 'hour' }), 'INVALID_PARAMETER', /granularity/);
});
