// How a customer is stored (U1, issue 7 "Personal data"): HMAC-SHA256 of the normalized email,
// keyed from SECRET_KEY, in hex. The figures only need to know whether two orders share a
// customer; the hash tells that, and without the key it cannot be tested against an address.
// Here, below ingest (which normalizes emails) and migrate (which rehashes old rows).
import crypto from 'node:crypto';

/**
 * The HMAC key of customer hashes, derived from SECRET_KEY for this one purpose, so that other
 * uses of the secret (store credentials) never share a key with it.
 */
export function customerKeyOf(secretKey: Buffer): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', secretKey, Buffer.alloc(0), 'sales-metrics customer v1', 32));
}

/** HMAC-SHA256 of a normalized email, in hex: 64 characters, never an '@'. */
export function customerHash(customerKey: Buffer, normalized: string): string {
  return crypto.createHmac('sha256', customerKey).update(normalized, 'utf8').digest('hex');
}
