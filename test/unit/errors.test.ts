import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { appError, ERROR_CODES, ERROR_KINDS, invalidParameter } from '../../src/errors.js';
import { errorBody } from '../../src/api/error-response.js';

/** The rows of docs/api.md's error table: code → status. */
function documentedErrors(): Map<string, number> {
  const readme = fs.readFileSync(fileURLToPath(new URL('../../../docs/api.md', import.meta.url)), 'utf8');
  const rows = [...readme.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|/gm)];
  return new Map(rows.map(([, code, status]) => [code ?? '', Number(status)]));
}

test('E3: docs/api.md documents every error kind of the catalogue with its status, and nothing else', () => {
  const documented = documentedErrors();
  for (const code of ERROR_CODES) assert.equal(documented.get(code), ERROR_KINDS[code].status, code);
  for (const code of documented.keys())
    assert.ok(code in ERROR_KINDS, `${code} is documented but not in the catalogue`);
  assert.equal(documented.size, ERROR_CODES.length);
  assert.equal(ERROR_CODES.length, 21);
});

test('E3: an error body is the French message, the extra fields, then the code', () => {
  assert.equal(
    errorBody('Dimensions ou métriques inconnues', 'UNKNOWN_IDENTIFIERS', {
      unknownDimensions: ['x'],
      unknownMetrics: [],
    }),
    '{"error":"Dimensions ou métriques inconnues","unknownDimensions":["x"],"unknownMetrics":[],"code":"UNKNOWN_IDENTIFIERS"}',
  );
});

test('E1: an invalid parameter names the parameter, the value and what is expected; a huge value is cut', () => {
  const error = invalidParameter('from', '2026-13-01', 'format attendu AAAA-MM-JJ');
  assert.equal(error.message, 'Paramètre from invalide : « 2026-13-01 » (format attendu AAAA-MM-JJ)');
  assert.equal(error.status, 400);
  assert.ok(invalidParameter('timezone', 'A'.repeat(5000), 'x').message.length < 200);
});

test('each kind has its message template in the catalogue; appError builds the error from it', () => {
  for (const code of ERROR_CODES) assert.equal(typeof ERROR_KINDS[code].message, 'function', code);
  const limited = appError('RATE_LIMITED', 120, 60, 7);
  assert.equal(limited.status, 429);
  assert.equal(limited.code, 'RATE_LIMITED');
  assert.equal(
    limited.message,
    'Trop de requêtes : 120 requêtes par 60 s au plus pour une clé, réessayez dans 7 s',
  );
  assert.equal(
    appError('METHOD_NOT_ALLOWED', 'PUT').message,
    'Méthode PUT non autorisée : l’API est en lecture seule (GET)',
  );
  assert.equal(appError('MISSING_METRICS').message, ERROR_KINDS.MISSING_METRICS.message());
  assert.equal(appError('NOT_FOUND', 'Import inconnu.').message, 'Import inconnu.');
});
