import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { loadConfig, ConfigError } from '../../src/config.js';

test('configuration defaults follow SPEC section 13', () => {
  const config = loadConfig({});
  assert.equal(config.port, 3000);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.databaseUrl, undefined);
  assert.equal(config.rateLimitMax, 120);
  assert.equal(config.rateLimitWindowS, 60);
  assert.equal(config.authFailureLimit, 30);
  assert.ok(Object.isFrozen(config));
});

test('a malformed setting stops start-up with a message naming it', () => {
  assert.throws(
    () => loadConfig({ PORT: 'abc' }),
    (e: unknown) => e instanceof ConfigError && /PORT/.test(e.message),
  );
  assert.throws(() => loadConfig({ RATE_LIMIT_MAX: '0' }), /RATE_LIMIT_MAX/);
  assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/);
});

test('issue 18, finding 2: the answer budget and the cache are set in MB, 256/256/64 by default', () => {
  const config = loadConfig({});
  assert.deepEqual(
    [config.answerMemoryMb, config.responseCacheMb, config.responseCacheEntryMb],
    [256, 256, 64],
  );
  const set = loadConfig({ ANSWER_MEMORY_MB: '32', RESPONSE_CACHE_MB: '100', RESPONSE_CACHE_ENTRY_MB: '5' });
  assert.deepEqual([set.answerMemoryMb, set.responseCacheMb, set.responseCacheEntryMb], [32, 100, 5]);
  for (const name of ['ANSWER_MEMORY_MB', 'RESPONSE_CACHE_MB', 'RESPONSE_CACHE_ENTRY_MB'])
    for (const bad of ['0', '-1', '1.5', 'lots'])
      assert.throws(
        () => loadConfig({ [name]: bad }),
        (e: unknown) => e instanceof ConfigError && e.message.startsWith(name),
      );
});

test('TRUST_PROXY is off unless set, and names the proxies to trust (finding 8)', () => {
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: '0' }).trustProxy, false);
  assert.deepEqual(loadConfig({ TRUST_PROXY: '127.0.0.1' }).trustProxy, ['127.0.0.1']);
  assert.deepEqual(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, ::1 ,loopback' }).trustProxy, [
    '10.0.0.0/8',
    '::1',
    'loopback',
  ]);
  assert.deepEqual(loadConfig({ TRUST_PROXY: 'fd00::/8' }).trustProxy, ['fd00::/8']);
});

test('TRUST_PROXY never trusts everyone: the old 1, numbers, /0 ranges and garbage stop start-up', () => {
  for (const value of ['1', '2', 'true', 'yes', '*']) {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: value }),
      (e: unknown) =>
        e instanceof ConfigError && /TRUST_PROXY/.test(e.message) && /n’est plus accepté/.test(e.message),
      value,
    );
  }
  for (const value of ['0.0.0.0/0', '::/0', '10.0.0.0/33', 'maybe', '127.0.0.1,', 'proxy.example']) {
    assert.throws(() => loadConfig({ TRUST_PROXY: value }), /TRUST_PROXY/, value);
  }
});

const HEX_KEY = '7f3a9c0e5b1d2f4a6c8e0b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a';

test('SECRET_KEY: 32 random bytes or more, in hex or base64, never shown when the config is printed', () => {
  const config = loadConfig({ SECRET_KEY: HEX_KEY });
  assert.equal(config.secretKey.toString('hex'), HEX_KEY);
  const base64 = Buffer.from(HEX_KEY, 'hex').toString('base64');
  assert.equal(loadConfig({ SECRET_KEY: base64 }).secretKey.toString('hex'), HEX_KEY);
  assert.ok(!JSON.stringify(config).includes(HEX_KEY.slice(0, 16)));
  assert.ok(!util.inspect(config).includes('secretKey'));
  assert.ok(Object.isFrozen(config));
  for (const weak of ['short', HEX_KEY.slice(0, 62), '00'.repeat(32), 'ab'.repeat(64), 'é'.repeat(64)]) {
    assert.throws(() => loadConfig({ SECRET_KEY: weak }), /SECRET_KEY invalide/, weak);
  }
});

test('SECRET_KEY is required with DATABASE_URL: every instance must hash customers alike', () => {
  assert.throws(
    () => loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/db' }),
    (e: unknown) =>
      e instanceof ConfigError && /SECRET_KEY est obligatoire avec DATABASE_URL/.test(e.message),
  );
  const config = loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/db', SECRET_KEY: HEX_KEY });
  assert.equal(config.secretKey.length, 32);
});

test('SECRET_KEY unset on the embedded database: generated once into DATA_DIR/secret.key (0600), then reused', () => {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sm-config-')), 'data');
  try {
    const config = loadConfig({ DATA_DIR: dir });
    assert.equal(fs.existsSync(dir), false, 'reading the configuration creates no file');
    const key = config.secretKey;
    assert.equal(key.length, 32);
    const file = path.join(dir, 'secret.key');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    assert.deepEqual(loadConfig({ DATA_DIR: dir }).secretKey, key, 'the next start reads the same key');
    assert.deepEqual(fs.readdirSync(dir), ['secret.key'], 'no draft left behind');
    // An explicit SECRET_KEY wins over the file.
    assert.equal(loadConfig({ DATA_DIR: dir, SECRET_KEY: HEX_KEY }).secretKey.toString('hex'), HEX_KEY);
    fs.writeFileSync(file, 'not a key\n');
    assert.throws(
      () => loadConfig({ DATA_DIR: dir }).secretKey,
      /secret\.key ne contient pas une clé valide/,
    );
  } finally {
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }
});

test('issue 21: SHOPIFY_API_VERSION defaults to 2026-10 (a version Shopify supports in November 2026), quarterly versions only', () => {
  assert.equal(loadConfig({}).shopifyApiVersion, '2026-10');
  assert.equal(loadConfig({ SHOPIFY_API_VERSION: '2025-10' }).shopifyApiVersion, '2025-10');
  for (const bad of ['2026-11', '26-10', 'latest', '2026-10/../x'])
    assert.throws(() => loadConfig({ SHOPIFY_API_VERSION: bad }), /SHOPIFY_API_VERSION.*2026-10/);
});

test('issue 28: DEMO_DAYS sizes the demo, two years (730 days) unless set, 1 to 3650', () => {
  assert.equal(loadConfig({}).demoDays, 730);
  assert.equal(loadConfig({ DEMO_DAYS: '7' }).demoDays, 7);
  for (const bad of ['0', '3651', '-1', '1.5', 'week'])
    assert.throws(() => loadConfig({ DEMO_DAYS: bad }), /DEMO_DAYS doit être un entier entre 1 et 3650/, bad);
});

test('SHOPIFY_BULK_POLL_MS: a look at a running bulk operation every second by default, 1 to 60,000 ms', () => {
  assert.equal(loadConfig({}).shopifyBulkPollMs, 1_000);
  assert.equal(loadConfig({ SHOPIFY_BULK_POLL_MS: '100' }).shopifyBulkPollMs, 100);
  for (const bad of ['0', '60001', '-5', '1.5', 'vite'])
    assert.throws(() => loadConfig({ SHOPIFY_BULK_POLL_MS: bad }), /SHOPIFY_BULK_POLL_MS.*entre 1 et 60000/);
});
