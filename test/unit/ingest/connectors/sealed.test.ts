// Issue 11: store secrets sealed with AES-256-GCM, bound to their connection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { seal, sealingKeyOf, unseal, UnsealError } from '../../../../src/ingest/connectors/sealed.js';
import {
  openCredentials,
  openWebhookSecret,
  sealSecrets,
} from '../../../../src/ingest/connectors/credentials.js';

const secretKey = crypto.randomBytes(32);
const secret = `cs_${'a1b2c3d4'.repeat(5)}`;

test('sealed values open with the same key and context only, and hold no plaintext', () => {
  const key = sealingKeyOf(secretKey);
  const sealed = seal(key, secret, 'store-connection:1:rest');
  assert.equal(unseal(key, sealed, 'store-connection:1:rest'), secret);
  assert.ok(!sealed.toString('latin1').includes('a1b2c3d4'));
  assert.notDeepEqual(seal(key, secret, 'x'), seal(key, secret, 'x'), 'a fresh nonce each time');
  assert.throws(() => unseal(key, sealed, 'store-connection:2:rest'), UnsealError);
  assert.throws(
    () => unseal(sealingKeyOf(crypto.randomBytes(32)), sealed, 'store-connection:1:rest'),
    UnsealError,
  );
  const altered = Buffer.from(sealed);
  altered[altered.length - 1]! ^= 1;
  assert.throws(() => unseal(key, altered, 'store-connection:1:rest'), UnsealError);
  assert.throws(() => unseal(key, Buffer.alloc(5), 'store-connection:1:rest'), UnsealError);
});

test('a connection’s secrets: sealed apart, a 4-character hint, opened for that connection only', () => {
  const id = crypto.randomUUID();
  const sealed = sealSecrets(secretKey, id, { key: 'ck_0123456789abcdef', secret }, 'webhook-secret');
  assert.equal(sealed.secretHint, secret.slice(-4));
  const connection = { id, credentials: sealed.credentials, webhookSecret: sealed.webhookSecret };
  assert.deepEqual(openCredentials(secretKey, connection), { key: 'ck_0123456789abcdef', secret });
  assert.equal(openWebhookSecret(secretKey, connection), 'webhook-secret');
  // The REST keys cannot be opened as the webhook secret, nor on another connection's row.
  assert.throws(() => openWebhookSecret(secretKey, { id, webhookSecret: sealed.credentials }), UnsealError);
  assert.throws(() => openCredentials(secretKey, { ...connection, id: crypto.randomUUID() }), UnsealError);
});
