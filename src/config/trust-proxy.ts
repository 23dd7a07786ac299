// TRUST_PROXY (issue 7, finding 8): which reverse proxies may tell us the client's address. Fastify
// (through proxy-addr) walks X-Forwarded-For from the right, starting at the socket's address, and
// stops at the first address that is not a trusted proxy: that address is the client. Entries to
// its left were written by the client itself and are never believed.
import net from 'node:net';
import { ConfigError } from './config-error.js';

/** false: no proxy; else the proxies' addresses and CIDR ranges (proxy-addr's form). */
export type TrustedProxies = false | readonly string[];

// proxy-addr's names for the usual private ranges.
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const HELP =
  'attendu : 0 (aucun proxy), les adresses ou plages des proxys séparées par des virgules ' +
  '(ex. 127.0.0.1 ou 10.0.0.0/8,::1)';

function trustedRange(entry: string): string {
  if (NAMED_RANGES.has(entry) || net.isIP(entry) !== 0) return entry;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = net.isIP(address);
  const bits = Number(prefix);
  const maxBits = family === 6 ? 128 : 32;
  if (family === 0 || rest.length > 0 || !/^\d{1,3}$/.test(prefix ?? '') || bits > maxBits) {
    throw new ConfigError(`TRUST_PROXY : « ${entry} » n’est ni une adresse IP ni une plage CIDR (${HELP})`);
  }
  // A /0 range is "every address": the client could then write its own address (finding 8).
  if (bits === 0)
    throw new ConfigError(`TRUST_PROXY : « ${entry} » ferait confiance à tout le monde (${HELP})`);
  return entry;
}

export function parseTrustProxy(raw: string | undefined): TrustedProxies {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '' || value === '0' || value === 'false' || value === 'no' || value === 'off') return false;
  // The old TRUST_PROXY=1 trusted every address, so any client could choose its own (finding 8).
  // Read as a hop count it would be no better: a hop count cannot tell the proxy from a client
  // that connects directly (Fastify 5.12 ignores the header then). Only addresses are accepted.
  if (/^\d+$/.test(value) || ['true', 'yes', 'on', '*', 'all'].includes(value)) {
    throw new ConfigError(
      `TRUST_PROXY=${raw} n’est plus accepté : il faisait confiance à n’importe quel client pour son adresse ; ${HELP}`,
    );
  }
  return Object.freeze(value.split(',').map((entry) => trustedRange(entry.trim())));
}
