import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mintKey } from '../../src/auth/keys.js';
import { MASK, redactSecrets } from '../../src/logging.js';

test('K2/finding 9: every kind of secret is masked wherever it appears in a line', () => {
  const key = mintKey();
  const lines = [
    `{"msg":"échec avec ${key}"}`,
    `{"req":{"url":"/api?api_key=${key}"}}`,
    '{"headers":{"authorization":"Bearer abc.def-123"}}',
    '{"headers":{"authorization":"basic dXNlcjpwYXNz"}}',
    '{"cookie":"sm_session=s3cr3t-session-token; _csrf=tok"}',
    '{"url":"postgres://app:db-passw0rd@127.0.0.1/sales"}',
  ];
  const masked = lines.map(redactSecrets);
  for (const secret of [
    key,
    key.slice(4),
    'abc.def-123',
    'dXNlcjpwYXNz',
    's3cr3t-session-token',
    'db-passw0rd',
  ])
    assert.ok(!masked.join('\n').includes(secret), `${secret} masked`);
  assert.ok(masked.every((line) => line.includes(MASK)));
});

test('a line with nothing that could be a secret is returned as it is', () => {
  const line =
    '{"level":30,"reqId":"9b1c","req":{"method":"GET","url":"/api/reports/tabular","remoteAddress":"127.0.0.1"},"res":{"statusCode":200},"msg":"request completed"}\n';
  assert.equal(redactSecrets(line), line);
});
