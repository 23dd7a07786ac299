import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mintKey } from '../../src/auth/keys.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { loadConfig, type LogFormat } from '../../src/config.js';
import { MASK, loggerOptions, redactSecrets } from '../../src/logging.js';

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

test('issue 30: LOG_FORMAT is text with DEMO=1 and JSON otherwise; anything else is refused', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-log-format-'));
  try {
    assert.equal(loadConfig({ DATA_DIR: dataDir, DEMO: '1' }).logFormat, 'text');
    assert.equal(loadConfig({ DATA_DIR: dataDir }).logFormat, 'json');
    assert.equal(loadConfig({ DATA_DIR: dataDir, DEMO: '1', LOG_FORMAT: 'json' }).logFormat, 'json');
    assert.throws(() => loadConfig({ DATA_DIR: dataDir, LOG_FORMAT: 'pretty' }), /LOG_FORMAT/);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('issue 30: text logs leave successful requests out and show warnings as short lines; JSON logs every request', async () => {
  const logged = async (format: LogFormat) => {
    const lines: string[] = [];
    const app = Fastify({ logger: loggerOptions('info', { write: (l) => lines.push(l) }, format) });
    app.get('/ok', async () => ({ ok: true }));
    await app.inject({ url: `/ok?token=${'x'.repeat(8)}` });
    app.log.warn({ err: new Error('Redis injoignable') }, 'limites locales');
    await app.close();
    return lines;
  };
  const text = await logged('text');
  assert.equal(text.length, 1, text.join(''));
  assert.match(text[0] ?? '', /^\d\d:\d\d:\d\d AVERTISSEMENT limites locales : Redis injoignable\n$/);
  const json = (await logged('json')).map((line) => JSON.parse(line) as { msg: string });
  assert.ok(json.some((line) => line.msg === 'request completed'));
  assert.ok(json.some((line) => line.msg === 'limites locales'));
});
