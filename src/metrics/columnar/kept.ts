// F1, L6: which codes of a dictionary a filter keeps, decided once before a report's pass.
import type { Dictionary } from './exact.js';

/** 1 for each code of the dictionary a filter keeps (all of them without a filter). */
export function kept(dictionary: Dictionary, values: readonly string[] | undefined): Uint8Array {
  const mask = new Uint8Array(dictionary.values.length).fill(values === undefined ? 1 : 0);
  for (const value of values ?? []) {
    const code = dictionary.find(value);
    if (code !== undefined) mask[code] = 1;
  }
  return mask;
}
