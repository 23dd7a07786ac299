// A store is known by its address, its public URL as registered, without a trailing slash
// (SPEC section 1): `https://boutique.example.fr/` and `https://boutique.example.fr` are one store.
// Issue 18, finding 5: so are `HTTPS://Boutique.Example.FR:443` and `https://bücher.example` /
// `https://xn--bcher-kva.example`. The address is read with the WHATWG URL rules (Node's URL, as
// browsers read it): scheme and host lower-cased, an international host in punycode, the default
// port dropped, dot segments resolved, characters a URL cannot hold percent-encoded; the path's
// case is kept (servers tell `/Shop` from `/shop`). User info (`https://user:pass@…`) is refused:
// an address is public, shown in the `store` dimension, the pages and CSV files.
// Here, under the import and the domain, because migration 014 (store-address-migration.ts)
// applies the same rule to the addresses stored before it.

export type StoreAddressCheck =
  | { readonly address: string; readonly problem?: undefined }
  /** `shown`: what an error message may quote (credentials removed). */
  | { readonly address?: undefined; readonly problem: string; readonly shown: string };

export const NOT_A_URL = 'URL http(s) attendue';
export const WITH_CREDENTIALS =
  'identifiants (utilisateur:mot de passe@) refusés dans l’adresse d’une boutique, qui est publique : retirez-les';

const withoutTrailingSlashes = (text: string): string => text.replace(/\/+$/, '');

/** The address as stored and shown in the `store` dimension, or why it is refused. */
export function checkStoreAddress(raw: string): StoreAddressCheck {
  const text = raw.trim();
  // WHATWG drops tabs and newlines inside a URL; an address with any space is refused instead.
  if (/\s/.test(text)) return { problem: NOT_A_URL, shown: raw };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: NOT_A_URL, shown: raw };
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
    return { problem: NOT_A_URL, shown: raw };
  if (url.username !== '' || url.password !== '') {
    url.username = '';
    url.password = '';
    return { problem: WITH_CREDENTIALS, shown: withoutTrailingSlashes(url.href) };
  }
  return { address: withoutTrailingSlashes(url.href) };
}

/** The stored form of an address to look up (a refused one is only trimmed: found nowhere). */
export function normalizeStoreAddress(raw: string): string {
  return checkStoreAddress(raw).address ?? withoutTrailingSlashes(raw.trim());
}

/** True for an address `store add` and the import accept. */
export const isValidStoreAddress = (raw: string): boolean => checkStoreAddress(raw).problem === undefined;
