// Per-row accumulators of a columnar report: one slot per combination of dimension values seen,
// sums kept as exact integer cents in doubles (exact below 2^53, which the snapshot guarantees).

export class Groups {
  count = 0;
  orders: Float64Array;
  items: Float64Array;
  gross: Float64Array;
  net: Float64Array;
  taxes: Float64Array;
  shipping: Float64Array;
  uniqueCustomers: Float64Array;
  newCustomers: Float64Array;
  returningCustomers: Float64Array;
  /** U4: the last customer counted in each group, so a customer counts once per row. */
  lastCustomer: Int32Array;
  /** The ordering key (see execute.ts) of each group. */
  keys: Float64Array;

  constructor(capacity: number) {
    this.orders = new Float64Array(capacity);
    this.items = new Float64Array(capacity);
    this.gross = new Float64Array(capacity);
    this.net = new Float64Array(capacity);
    this.taxes = new Float64Array(capacity);
    this.shipping = new Float64Array(capacity);
    this.uniqueCustomers = new Float64Array(capacity);
    this.newCustomers = new Float64Array(capacity);
    this.returningCustomers = new Float64Array(capacity);
    this.lastCustomer = new Int32Array(capacity).fill(-1);
    this.keys = new Float64Array(capacity);
  }

  /** A new group for the key; its index. */
  add(key: number): number {
    if (this.count === this.keys.length) this.grow();
    const g = this.count++;
    this.keys[g] = key;
    return g;
  }

  private grow(): void {
    const capacity = Math.max(16, this.keys.length * 2);
    const more = (from: Float64Array): Float64Array => {
      const to = new Float64Array(capacity);
      to.set(from);
      return to;
    };
    this.orders = more(this.orders);
    this.items = more(this.items);
    this.gross = more(this.gross);
    this.net = more(this.net);
    this.taxes = more(this.taxes);
    this.shipping = more(this.shipping);
    this.uniqueCustomers = more(this.uniqueCustomers);
    this.newCustomers = more(this.newCustomers);
    this.returningCustomers = more(this.returningCustomers);
    this.keys = more(this.keys);
    const last = new Int32Array(capacity).fill(-1);
    last.set(this.lastCustomer);
    this.lastCustomer = last;
  }
}
