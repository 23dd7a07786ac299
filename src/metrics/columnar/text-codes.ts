// A text column of a snapshot coded through its bytes (stores' statuses and countries, order lines'
// products…): the bytes of each distinct value are seen once, then its Dictionary code is reused.
import { ByteCodes } from './byte-codes.js';
import { Dictionary } from './exact.js';

/** A text column coded through its bytes: the Dictionary sees each distinct value once. */
export class TextCodes {
  private readonly keys = new ByteCodes();
  private readonly codes: number[] = [];
  readonly dictionary = new Dictionary();

  code(data: Uint8Array, start: number, length: number): number {
    const key = this.keys.code(data, start, length);
    let code = this.codes[key];
    if (code === undefined) {
      code = this.dictionary.code(Buffer.from(data.buffer, data.byteOffset + start, length).toString('utf8'));
      this.codes[key] = code;
    }
    return code;
  }

  /** Memory of the values' bytes and their table (the dictionary's strings are not counted). */
  get bytes(): number {
    return this.keys.bytes;
  }

  codeText(value: string): number {
    const bytes = Buffer.from(value, 'utf8');
    return this.code(bytes, 0, bytes.length);
  }
}
