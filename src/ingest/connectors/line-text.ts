// A store's text for an order line's field (SPEC L1), made to fit: a store may send a name longer
// than L1 allows (a WordPress title has no bound), a NUL, or half of a surrogate pair, each of which
// would refuse the whole order and leave its sale out of every report. Cut to the bound, never
// inside a surrogate pair; NUL removed; a lone surrogate shown as U+FFFD.

/** The text bounded to `bound` UTF-16 units (blanks kept: L2 shows names unchanged), or undefined when empty. */
export function lineText(value: unknown, bound: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const kept = value.replaceAll('\u0000', '').slice(0, bound);
  const whole = /[\ud800-\udbff]$/.test(kept) ? kept.slice(0, -1) : kept;
  const text = whole.toWellFormed();
  return text === '' ? undefined : text;
}
