// The codes of order lines' text (section 15), shared by an organization's snapshot parts like its
// stores and statuses: each line's product, product id, variant, SKU and set of categories, as they
// show in a report (L2: `Unknown` for a missing text, L5: `Unknown` for a line without category),
// combined into one "item" code, so that a report decides a line's filters (L6) and row key with
// one lookup, as it does for an order's store, status and country. Codes are only ever added.
import { ByteCodes } from './byte-codes.js';
import { TextCodes } from './text-codes.js';
import { Dictionary } from './exact.js';

/** Codes below 2^26 (lines, hence values, stay far below): pair keys are exact. */
const RADIX = 1 << 26;

/** What a report reads of the item codes at one version: the combinations, and each set's categories. */
export interface LineItems {
  readonly count: number;
  readonly product: Int32Array;
  readonly productId: Int32Array;
  readonly variant: Int32Array;
  readonly sku: Int32Array;
  readonly categorySet: Int32Array;
  /** Category codes of each set, never empty (a line without category is in `Unknown`, L5). */
  readonly setCategories: readonly Int32Array[];
  readonly products: Dictionary;
  readonly productIds: Dictionary;
  readonly variants: Dictionary;
  readonly skus: Dictionary;
  readonly categories: Dictionary;
}

export class LineCodes {
  readonly products = new TextCodes();
  readonly productIds = new TextCodes();
  readonly variants = new TextCodes();
  readonly skus = new TextCodes();
  /** Each line's categories as the JSON text of the stored array (its bytes coded: parsed once a set). */
  readonly categorySets = new TextCodes();
  readonly categories = new Dictionary();
  private readonly setCategories: Int32Array[] = [];
  private readonly pairs = new Map<number, number>();
  private readonly codes = new Map<number, number>();
  private readonly columns: [number[], number[], number[], number[], number[]] = [[], [], [], [], []];
  private view: LineItems | undefined;
  /**
   * A build's lines repeat a catalogue: each distinct run of a COPY row's line texts (their bytes
   * from the product's length to the categories' end, as they lie in the COPY output) maps to its
   * item, so that a line seen before costs one lookup and no text is coded again (issue 28).
   */
  private readonly runs = new ByteCodes(Infinity);
  private runItems = new Int32Array(256);

  /** The set code of the JSON text of a line's categories at data[start, start + length). */
  categorySet(data: Uint8Array, start: number, length: number): number {
    const set = this.categorySets.code(data, start, length);
    if (set === this.setCategories.length) {
      const values = JSON.parse(this.categorySets.dictionary.values[set] as string) as string[];
      const named = values.length === 0 ? ['Unknown'] : values; // L5
      this.setCategories.push(Int32Array.from(new Set(named), (value) => this.categories.code(value)));
    }
    return set;
  }

  /** The item of the line texts data[start, start + length) of a COPY row, -1 if not seen yet. */
  copiedItem(data: Uint8Array, start: number, length: number): number {
    const run = this.runs.find(data, start, length);
    return run < 0 ? -1 : (this.runItems[run] as number);
  }

  /** The item of a line's texts given as values (a delta's, a command's import), its categories as JSON text. */
  textsItem(product: string, productId: string, variant: string, sku: string, categories: string): number {
    const set = Buffer.from(categories, 'utf8');
    return this.item(
      this.products.codeText(product),
      this.productIds.codeText(productId),
      this.variants.codeText(variant),
      this.skus.codeText(sku),
      this.categorySet(set, 0, set.length),
    );
  }

  /** The item of line texts that copiedItem did not know. */
  rememberCopied(data: Uint8Array, start: number, length: number, item: number): void {
    const run = this.runs.code(data, start, length);
    if (run >= this.runItems.length) {
      const bigger = new Int32Array(this.runItems.length * 2);
      bigger.set(this.runItems);
      this.runItems = bigger;
    }
    this.runItems[run] = item;
  }

  /** The item code of one combination of codes. */
  item(product: number, productId: number, variant: number, sku: number, set: number): number {
    const pair = (a: number, b: number): number => {
      const key = a * RADIX + b;
      let code = this.pairs.get(key);
      if (code === undefined) this.pairs.set(key, (code = this.pairs.size));
      return code;
    };
    const key = pair(pair(pair(product, productId), variant), sku) * RADIX + set;
    let code = this.codes.get(key);
    if (code === undefined) {
      this.codes.set(key, (code = this.codes.size));
      const values = [product, productId, variant, sku, set];
      values.forEach((value, k) => this.columns[k]?.push(value));
      this.view = undefined;
    }
    return code;
  }

  /** The combinations so far, as a report reads them (a new object once one is added). */
  items(): LineItems {
    if (this.view) return this.view;
    const [product, productId, variant, sku, categorySet] = this.columns.map((c) => Int32Array.from(c)) as [
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
    ];
    this.view = {
      count: product.length,
      product,
      productId,
      variant,
      sku,
      categorySet,
      setCategories: [...this.setCategories],
      products: this.products.dictionary,
      productIds: this.productIds.dictionary,
      variants: this.variants.dictionary,
      skus: this.skus.dictionary,
      categories: this.categories,
    };
    return this.view;
  }
}
