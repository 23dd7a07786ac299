import { test } from 'node:test';
import assert from 'node:assert/strict';
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

test('TRUST_PROXY is off unless set, and only takes a yes or no', () => {
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, true);
  assert.throws(() => loadConfig({ TRUST_PROXY: 'maybe' }), /TRUST_PROXY/);
});
