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

const BLOCK = 64; // SHA-256's block, in bytes
/** Room for the longest email validation lets through (254 characters, 3 bytes each at most). */
const MESSAGE_BYTES = 1024;

/** A key's HMAC pads (RFC 2104), computed once, and a buffer to hash messages in. */
interface Pads {
  inner: Buffer; // key ⊕ ipad, then the message
  outer: Buffer; // key ⊕ opad, then the inner hash
}
const padsOf = new WeakMap<Buffer, Pads>();

function pads(customerKey: Buffer): Pads {
  let found = padsOf.get(customerKey);
  if (found === undefined) {
    const key = customerKey.length > BLOCK ? crypto.hash('sha256', customerKey, 'buffer') : customerKey;
    const inner = Buffer.alloc(BLOCK + MESSAGE_BYTES);
    const outer = Buffer.alloc(BLOCK + 32);
    for (let i = 0; i < BLOCK; i++) {
      inner[i] = (key[i] ?? 0) ^ 0x36;
      outer[i] = (key[i] ?? 0) ^ 0x5c;
    }
    found = { inner, outer };
    padsOf.set(customerKey, found);
  }
  return found;
}

/**
 * HMAC-SHA256 of a normalized email, in hex: 64 characters, never an '@'. Computed as RFC 2104
 * defines it, H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)), with the pads kept from one call to the next:
 * two one-shot hashes instead of an HMAC object for every imported line (I3). Longer messages than
 * validation allows go through crypto's own HMAC.
 */
export function customerHash(customerKey: Buffer, normalized: string): string {
  if (normalized.length * 3 > MESSAGE_BYTES)
    return crypto.createHmac('sha256', customerKey).update(normalized, 'utf8').digest('hex');
  const { inner, outer } = pads(customerKey);
  const length = inner.write(normalized, BLOCK, 'utf8');
  crypto.hash('sha256', inner.subarray(0, BLOCK + length), 'buffer').copy(outer, BLOCK);
  return crypto.hash('sha256', outer, 'hex');
}
