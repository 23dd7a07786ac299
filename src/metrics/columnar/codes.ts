// The codes one organization's snapshot parts share (issue 19): stores, statuses and countries as
// dictionary codes, their combinations as attribute codes, customers and anonymous orders as
// dense integers. Codes are only ever added: a report reading an older list of parts finds every
// code its orders have (a value without orders adds no row).
import { ByteCodes, HexTextCodes } from './byte-codes.js';
import { Dictionary } from './exact.js';
import { TextCodes } from './text-codes.js';
import { LineCodes } from './line-codes.js';

export { TextCodes };
import type { Attributes } from './snapshot.js';

/** Codes below 2^26 (orders, hence values, stay far below): pair and triple keys are exact. */
const RADIX = 1 << 26;

/** Combinations of store, status and country codes, coded in order of first sight. */
export class AttributeCodes {
  private readonly pairs = new Map<number, number>();
  private readonly codes = new Map<number, number>();
  private readonly store: number[] = [];
  private readonly status: number[] = [];
  private readonly country: number[] = [];
  private view: Attributes | undefined;

  code(store: number, status: number, country: number): number {
    const pairKey = (store + 1) * RADIX + status;
    let pair = this.pairs.get(pairKey);
    if (pair === undefined) this.pairs.set(pairKey, (pair = this.pairs.size));
    const key = pair * RADIX + country;
    let code = this.codes.get(key);
    if (code === undefined) {
      this.codes.set(key, (code = this.codes.size));
      this.store.push(store);
      this.status.push(status);
      this.country.push(country);
      this.view = undefined;
    }
    return code;
  }

  /** The combinations so far, as a report reads them (a new object once one is added). */
  attributes(): Attributes {
    this.view ??= {
      count: this.store.length,
      store: Int32Array.from(this.store),
      status: Int32Array.from(this.status),
      country: Int32Array.from(this.country),
    };
    return this.view;
  }
}

/** Every code an organization's parts share; the stores' from their ids (read with the orders). */
export class OrganizationCodes {
  readonly stores = new Dictionary();
  /** Dictionary code of each store id, and the address it was read with. */
  readonly storeCodes = new Map<number, number>();
  readonly storeAddresses = new Map<number, string>();
  readonly statuses = new TextCodes();
  readonly countries = new TextCodes();
  readonly attributes = new AttributeCodes();
  /** Section 15: the order lines' texts and their combinations. */
  readonly lines = new LineCodes();
  constructor(
    /** Customer keys (U1 hashes), packed. */
    readonly customers = new HexTextCodes(),
    /** Anonymous orders' keys: the store id's 8 bytes, then the external id. */
    readonly anonymous = new ByteCodes(),
  ) {}

  /** False when a store known under an id now has another address: the snapshot must be rebuilt. */
  addStore(id: number, address: string): boolean {
    const known = this.storeAddresses.get(id);
    if (known !== undefined) return known === address;
    this.storeAddresses.set(id, address);
    this.storeCodes.set(id, this.stores.code(address));
    return true;
  }

  /** Memory of the coded keys and texts (issue 29: the texts' too, small once their blocks grow as needed). */
  get bytes(): number {
    const { products, productIds, variants, skus, categorySets } = this.lines;
    const texts = [this.statuses, this.countries, products, productIds, variants, skus, categorySets];
    return this.customers.bytes + this.anonymous.bytes + texts.reduce((sum, t) => sum + t.bytes, 0);
  }
}

/** The key bytes of an anonymous order: its store id (8 bytes, big-endian), then its external id. */
export function anonymousKey(storeId: number, externalId: string): Buffer {
  const id = Buffer.from(externalId, 'utf8');
  const key = Buffer.allocUnsafe(8 + id.length);
  key.writeBigInt64BE(BigInt(storeId), 0);
  id.copy(key, 8);
  return key;
}
