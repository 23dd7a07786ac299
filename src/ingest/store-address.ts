// A store is known by its address, its public URL as registered, without a trailing slash
// (SPEC section 1): `https://boutique.example.fr/` and `https://boutique.example.fr` are one store.

/** The address as stored and shown in the `store` dimension. */
export function normalizeStoreAddress(raw: string): string {
  return raw.trim().replace(/\/+$/, '');
}

/** True for an http(s) URL with a host: what the operator may connect with `store add`. */
export function isValidStoreAddress(raw: string): boolean {
  const address = normalizeStoreAddress(raw);
  if (/\s/.test(address)) return false;
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}
