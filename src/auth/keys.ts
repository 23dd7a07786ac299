// K1/K2: API key format, checksum and hashing. Pure; no database.
import crypto from 'node:crypto';
import zlib from 'node:zlib';

export const KEY_PREFIX = 'smk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const KEY_LENGTH = KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
export const DISPLAY_PREFIX_LENGTH = 12;
const KEY_SHAPE = /^smk_[0-9A-Za-z]{38}$/;

function toBase62(value: number, width: number): string {
  let digits = '';
  for (let n = value; n > 0; n = Math.floor(n / 62)) digits = BASE62[n % 62] + digits;
  return digits.padStart(width, '0');
}

/** CRC32 (IEEE) of the random part, in base62, six characters (K1). */
export function keyChecksum(randomPart: string): string {
  return toBase62(zlib.crc32(Buffer.from(randomPart, 'ascii')), CHECKSUM_LENGTH);
}

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    // Rejection sampling keeps every character equally likely: 248 = 4 × 62.
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function mintKey(): string {
  const random = randomBase62(RANDOM_LENGTH);
  return KEY_PREFIX + random + keyChecksum(random);
}

/** True when the key has the K1 shape and its checksum matches: checked before any lookup. */
export function isWellFormedKey(key: string): boolean {
  if (!KEY_SHAPE.test(key)) return false;
  const random = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_LENGTH);
  return key.slice(KEY_PREFIX.length + RANDOM_LENGTH) === keyChecksum(random);
}

export function hashKey(key: string): Buffer {
  return crypto.createHash('sha256').update(key, 'utf8').digest();
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}
