// Store credentials at rest (issue 11): AES-256-GCM with a key derived from SECRET_KEY for this one
// purpose (HKDF, as the customer hashes derive theirs), a fresh 96-bit nonce per value, and the
// row's identity as associated data, so that a sealed value copied onto another connection does
// not open. A database copy alone never yields a store's keys.
import crypto from 'node:crypto';

const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** The AES key of sealed store credentials, derived from SECRET_KEY. */
export function sealingKeyOf(secretKey: Buffer): Buffer {
  return Buffer.from(
    crypto.hkdfSync('sha256', secretKey, Buffer.alloc(0), 'sales-metrics store credentials v1', 32),
  );
}

/** version (1 byte) ‖ nonce (12) ‖ tag (16) ‖ ciphertext. */
export function seal(key: Buffer, plaintext: string, context: string): Buffer {
  const nonce = crypto.randomBytes(NONCE_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), nonce, cipher.getAuthTag(), body]);
}

export class UnsealError extends Error {}

/** The plaintext; throws UnsealError when the value was not sealed with this key for this context. */
export function unseal(key: Buffer, sealed: Buffer, context: string): string {
  if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES || sealed[0] !== VERSION) {
    throw new UnsealError('valeur scellée illisible');
  }
  const nonce = sealed.subarray(1, 1 + NONCE_BYTES);
  const tag = sealed.subarray(1 + NONCE_BYTES, 1 + NONCE_BYTES + TAG_BYTES);
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, nonce);
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(1 + NONCE_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch (error) {
    // SECRET_KEY changed since the store was connected, or the value was altered.
    throw new UnsealError('clé SECRET_KEY différente ou valeur altérée', { cause: error });
  }
}
