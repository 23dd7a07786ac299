// A product's categories as the import's (SPEC L1, L5): from GET /wc/v3/products?include=…, each
// product's `categories[].name`. WordPress stores a term's name with &, <, >, " and ' as HTML
// entities, and the REST API returns it so: decoded here, « Thés &amp; cafés » is « Thés & cafés ».
// Names repeated (two categories of one name under different parents) count once; L1's bounds
// hold: at most 20 names of at most 200 characters.
import { isObject, list } from './json.js';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#039': "'", '#39': "'" };

const decoded = (name: string): string =>
  name.replace(/&(amp|lt|gt|quot|#0?39);/g, (_, e: string) => ENTITIES[e] ?? _);

/**
 * A name cut to L1's 200 characters, never between the halves of a surrogate pair (an emoji at the
 * cut would leave a lone half, which L1 refuses with the whole order).
 */
function cut(name: string): string {
  const kept = name.slice(0, 200);
  return /[\ud800-\udbff]$/.test(kept) ? kept.slice(0, -1) : kept;
}

/** Each listed product's category names, by product id. */
export function categoryNames(body: unknown): Map<string, readonly string[]> {
  const byProduct = new Map<string, readonly string[]>();
  for (const product of Array.isArray(body) ? body.filter(isObject) : []) {
    const names = new Set<string>();
    for (const category of list(product.categories)) {
      const name = typeof category.name === 'string' ? cut(decoded(category.name).trim()) : '';
      // A name that is no text (NUL, a lone surrogate) is left out rather than refusing the order.
      if (name !== '' && !name.includes('\u0000') && name.isWellFormed()) names.add(name);
    }
    byProduct.set(String(product.id), [...names].slice(0, 20));
  }
  return byProduct;
}
