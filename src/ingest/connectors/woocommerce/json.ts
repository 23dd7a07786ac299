// WooCommerce's JSON as read by the mapping (mapping.ts, lines.ts): objects, lists and money.
type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const list = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

/** Exact cents of a WooCommerce money value ("29.35", "-10.00", 12, "1.005"), or undefined. */
export function cents(value: unknown): bigint | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const m = /^\s*(-?)(\d{1,15})(?:\.(\d{1,12}))?\s*$/.exec(text === '' ? '0' : text);
  if (!m) return undefined;
  const decimals = (m[3] ?? '').padEnd(3, '0');
  let whole = BigInt(m[2]!) * 100n + BigInt(decimals.slice(0, 2));
  if (Number(decimals[2]) >= 5) whole += 1n; // half away from zero (the sign is applied after)
  return m[1] === '-' ? -whole : whole;
}

/** Cents as the import's decimal text ("12.30"). */
export function decimalText(value: bigint): string {
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}
