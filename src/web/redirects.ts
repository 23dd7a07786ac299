// Where a page may send the browser after a form (finding 4): only to a path of this site. A
// backslash (browsers read `/\host` as `//host`), a control character, anything that resolves to
// another origin or to a protocol-relative `//host` falls back to a fixed page.
import type { FastifyRequest } from 'fastify';

const BASE = 'http://sales-metrics.invalid';
const MAX_TARGET = 2048;

/** `target` when it is a path of this site, else `fallback`. */
export function safeNext(target: unknown, fallback = '/reports/revenue'): string {
  if (typeof target !== 'string' || target.length > MAX_TARGET || !target.startsWith('/')) return fallback;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f\\]/.test(target)) return fallback;
  let url: URL;
  try {
    url = new URL(target, BASE);
  } catch {
    return fallback;
  }
  const path = `${url.pathname}${url.search}${url.hash}`;
  if (url.origin !== BASE || !path.startsWith('/') || path.startsWith('//')) return fallback;
  return path;
}

/** The page a form was sent from (its Referer), when that page is on this very origin. */
export function backTo(request: FastifyRequest, fallback = '/'): string {
  const referer = request.headers.referer;
  if (!referer || referer.length > MAX_TARGET) return fallback;
  let url: URL;
  try {
    url = new URL(referer);
  } catch {
    return fallback;
  }
  if (url.origin !== `${request.protocol}://${request.host}`) return fallback;
  return safeNext(`${url.pathname}${url.search}`, fallback);
}
