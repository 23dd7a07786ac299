// Pure helpers of the columnar engine: money as exact integer cents (M1), code-point string order
// (T3), and the dictionary that codes repeated text (stores, statuses, countries) as small integers.

/**
 * M1: the quotient of two integers (cents / orders), rounded half away from zero to a whole cent,
 * computed without a binary fraction: integer division and remainder are exact below 2^53.
 */
export function divideRoundHalfAwayFromZero(numerator: number, divisor: number): number {
  const magnitude = Math.abs(numerator);
  const quotient = Math.floor(magnitude / divisor);
  const remainder = magnitude - quotient * divisor;
  const rounded = 2 * remainder >= divisor ? quotient + 1 : quotient;
  return numerator < 0 ? 0 - rounded : rounded; // never -0: the SQL engine has no negative zero
}

/** Whole cents as the JSON number of currency units: the same double as Number('123.45') (M2). */
export function centsToAmount(cents: number): number {
  return cents / 100;
}

/**
 * T3: compares by Unicode code point, as PostgreSQL's "C" collation compares UTF-8 bytes. JS `<`
 * compares UTF-16 code units, which puts U+10000 and above before U+E000–U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (0xD800–0xDFFF) stands for a code point above 0xFFFF: after any other unit.
    const surrogateX = x >= 0xd800 && x <= 0xdfff;
    const surrogateY = y >= 0xd800 && y <= 0xdfff;
    if (surrogateX !== surrogateY) return surrogateX ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** Text values coded as dense integers in order of first sight; values[code] gives the text back. */
export class Dictionary {
  readonly values: string[] = [];
  private readonly codes = new Map<string, number>();

  code(value: string): number {
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.codes.set(value, code);
      this.values.push(value);
    }
    return code;
  }

  find(value: string): number | undefined {
    return this.codes.get(value);
  }

  /** ranks[code]: the position of values[code] in T3 order. */
  ranks(): Int32Array {
    const order = this.values.map((_, code) => code);
    order.sort((x, y) => compareCodePoints(this.values[x] as string, this.values[y] as string));
    const ranks = new Int32Array(this.values.length);
    order.forEach((code, rank) => (ranks[code] = rank));
    return ranks;
  }
}
