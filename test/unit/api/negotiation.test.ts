// V1: the answer's format from `format` and the Accept header.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerFormat } from '../../../src/api/negotiation.js';

test('V1: Accept chooses CSV only when it names text/csv and prefers it, media-type parameters aside', () => {
  const cases: [string | undefined, 'json' | 'csv'][] = [
    [undefined, 'json'],
    ['', 'json'],
    ['*/*', 'json'],
    ['text/*', 'json'],
    ['text/html', 'json'],
    ['application/json', 'json'],
    ['text/csv', 'csv'],
    ['TEXT/CSV', 'csv'],
    ['text/csv; charset=utf-8', 'csv'],
    ['text/csv; header=present', 'csv'],
    ['text/csv;q=0.9, application/json;q=0.5', 'csv'],
    ['text/csv;q=0.5, application/json', 'json'],
    ['application/json; charset=utf-8, text/csv;q=0.5', 'json'],
    ['text/csv;q=0', 'json'],
    ['application/json, text/csv', 'json'],
  ];
  for (const [accept, expected] of cases) assert.equal(answerFormat({}, accept), expected, String(accept));
});

test('V1: format wins over Accept', () => {
  assert.equal(answerFormat({ format: 'json' }, 'text/csv'), 'json');
  assert.equal(answerFormat({ format: 'csv' }, 'application/json'), 'csv');
});
