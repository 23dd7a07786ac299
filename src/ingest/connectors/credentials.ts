// A connection's secrets (issue 11): the REST keys and the webhook secret, sealed with SECRET_KEY
// (sealed.ts) and bound to the connection's id. Opened only by the sync engine and the webhook
// receiver, in memory, never logged, never shown (the pages show secret_hint, 4 characters).
import crypto from 'node:crypto';
import type { StoreCredentials } from './connector.js';
import { seal, sealingKeyOf, unseal } from './sealed.js';

export interface SealedSecrets {
  readonly credentials: Buffer;
  readonly webhookSecret: Buffer;
  readonly secretHint: string;
}

const context = (connectionId: string, what: string) => `store-connection:${connectionId}:${what}`;

/** A webhook secret for the owner to paste into WooCommerce: 32 random bytes, base64url. */
export const newWebhookSecret = (): string => crypto.randomBytes(32).toString('base64url');

export function sealSecrets(
  secretKey: Buffer,
  connectionId: string,
  credentials: StoreCredentials,
  webhookSecret: string,
): SealedSecrets {
  const key = sealingKeyOf(secretKey);
  return {
    credentials: seal(
      key,
      JSON.stringify({ key: credentials.key, secret: credentials.secret }),
      context(connectionId, 'rest'),
    ),
    webhookSecret: seal(key, webhookSecret, context(connectionId, 'webhook')),
    secretHint: credentials.secret.slice(-4),
  };
}

export function openCredentials(
  secretKey: Buffer,
  connection: { id: string; credentials: Buffer },
): StoreCredentials {
  const text = unseal(sealingKeyOf(secretKey), connection.credentials, context(connection.id, 'rest'));
  const value: unknown = JSON.parse(text);
  if (
    typeof value !== 'object' ||
    value === null ||
    !('key' in value) ||
    !('secret' in value) ||
    typeof value.key !== 'string' ||
    typeof value.secret !== 'string'
  ) {
    throw new Error('identifiants scellés mal formés');
  }
  return { key: value.key, secret: value.secret };
}

export function openWebhookSecret(
  secretKey: Buffer,
  connection: { id: string; webhookSecret: Buffer },
): string {
  return unseal(sealingKeyOf(secretKey), connection.webhookSecret, context(connection.id, 'webhook'));
}
