// Issue 29: the settings of /metrics and of the instance's name, read and checked in src/config.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { ConfigError, loadConfig } from '../../src/config.js';

const base = {
  DATABASE_URL: 'postgres://u@h/d',
  SECRET_KEY: '5c0e9a7b3d1f2e4a6b8c0d2e4f6a8b0c1d3e5f7a9b2c4d6e8f0a1b3c5d7e9f2a',
};

test('issue 29: no /metrics listener unless METRICS_PORT is set; loopback by default', () => {
  const config = loadConfig(base);
  assert.equal(config.metricsPort, undefined);
  assert.equal(config.metricsHost, '127.0.0.1');
  const set = loadConfig({ ...base, METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' });
  assert.equal(set.metricsPort, 9464);
  assert.equal(set.metricsHost, '10.0.0.5');
});

test('issue 29: /metrics never on the public port, nor on a malformed one', () => {
  assert.throws(() => loadConfig({ ...base, PORT: '3000', METRICS_PORT: '3000' }), ConfigError);
  assert.throws(() => loadConfig({ ...base, METRICS_PORT: 'public' }), /METRICS_PORT/);
});

test('issue 29: INSTANCE_NAME defaults to host name:port and refuses what is not a short name', () => {
  assert.equal(loadConfig({ ...base, PORT: '3002' }).instanceName, `${os.hostname()}:3002`);
  assert.equal(loadConfig({ ...base, INSTANCE_NAME: 'app-2.eu' }).instanceName, 'app-2.eu');
  assert.throws(() => loadConfig({ ...base, INSTANCE_NAME: 'a b' }), /INSTANCE_NAME/);
  assert.throws(() => loadConfig({ ...base, INSTANCE_NAME: 'x'.repeat(65) }), /INSTANCE_NAME/);
});
