// SECRET_KEY: the service's own secret, which keys the customer hashes (U1, issue 7 "Personal
// data"). It is never stored in the database, so that a copy of the database alone does not let
// anyone test which e-mail addresses it holds.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from './config-error.js';
import { errorFields } from '../errors.js';

export const SECRET_KEY_FILE = 'secret.key';
const MIN_BYTES = 32;
const MAX_CHARS = 1_024;
// 32 random bytes hold about 30 distinct values; fewer than 16 means a pattern, not a secret.
const MIN_DISTINCT_BYTES = 16;

const HOW_TO = `au moins ${MIN_BYTES} octets aléatoires en hexadécimal ou en base64, par exemple : openssl rand -hex 32`;

/** The key's bytes, or undefined when the text is not a high-entropy hex or base64 value. */
export function parseSecretKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (value.length > MAX_CHARS) return undefined;
  let bytes: Buffer;
  if (/^(?:[0-9a-fA-F]{2})+$/.test(value)) bytes = Buffer.from(value, 'hex');
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) bytes = Buffer.from(value, 'base64');
  else return undefined;
  if (bytes.length < MIN_BYTES || new Set(bytes).size < MIN_DISTINCT_BYTES) return undefined;
  return bytes;
}

/** Reads DATA_DIR/secret.key, creating it (mode 0600) on the first start of the embedded database. */
function keyFileOf(dataDir: string): Buffer {
  const file = path.join(dataDir, SECRET_KEY_FILE);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // Written aside, then linked into place: a process starting at the same moment (the CLI while
    // the server starts) either creates the file or reads the one complete file, never half of it.
    const draft = path.join(dataDir, `${SECRET_KEY_FILE}.${process.pid}.${crypto.randomUUID()}`);
    fs.writeFileSync(draft, `${crypto.randomBytes(MIN_BYTES).toString('hex')}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    try {
      fs.linkSync(draft, file);
    } catch (error) {
      if (errorFields(error).code !== 'EEXIST') throw error;
    } finally {
      fs.rmSync(draft, { force: true });
    }
  }
  const text = fs.readFileSync(file, 'utf8');
  const key = parseSecretKey(text);
  if (!key) throw new ConfigError(`${file} ne contient pas une clé valide (${HOW_TO})`);
  return key;
}

/**
 * Checks SECRET_KEY now (start-up fails on a bad or missing value) and returns the getter of the
 * key. dataDir is the embedded database's folder, undefined on a PostgreSQL server.
 */
export function secretKeyOf(raw: string | undefined, dataDir: string | undefined): () => Buffer {
  if (raw !== undefined && raw !== '') {
    const key = parseSecretKey(raw);
    if (!key) throw new ConfigError(`SECRET_KEY invalide : ${HOW_TO}`);
    return () => key;
  }
  if (dataDir === undefined) {
    // Several instances share the server's data: each generating its own key would split every
    // customer in two, and the key cannot live in the database it protects.
    throw new ConfigError(
      `SECRET_KEY est obligatoire avec DATABASE_URL (la même valeur pour toutes les instances) : ${HOW_TO}`,
    );
  }
  // Read or created on first use, not by loadConfig itself: reading the configuration creates no file.
  let key: Buffer | undefined;
  return () => (key ??= keyFileOf(dataDir));
}
