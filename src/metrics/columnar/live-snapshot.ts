// An organization's snapshot kept current (issue 19): the parts read so far, the codes they share,
// and where each customer's run and each anonymous order lies, so that a delta retires exactly
// what it replaces. Reports read immutable views (Snapshot): a delta or a compaction makes new
// Part objects where it changes validity flags, and a report that took the previous view goes on
// reading the previous ones.
import { anonymousKey, OrganizationCodes } from './codes.js';
import { LinesFold } from './line-columns.js';
import { AMOUNTS, nextTurn, OrderColumns, type OrderValues } from './order-columns.js';
import {
  BYTES_PER_CUSTOMER,
  BYTES_PER_ORDER,
  freshPart,
  heldOrders,
  type Part,
  type Snapshot,
} from './snapshot.js';

/** What changed in an organization's orders between two database snapshots (src/metrics/columnar/delta.ts). */
export interface Delta {
  readonly version: string;
  /** pg_current_snapshot() the delta was read under: the next one starts from it. */
  readonly databaseSnapshot: string;
  readonly readAt: number;
  /** Stores of the organization (id, address). */
  readonly stores: readonly (readonly [number, string])[];
  /** Customers whose orders changed: every current order of theirs is in `orders`. */
  readonly customers: readonly string[];
  /** Anonymous orders replaced or deleted (store id, external id). */
  readonly retiredAnonymous: readonly (readonly [number, string])[];
  readonly orders: readonly OrderValues[];
}

const INT32_BYTES = 4;

function grown(array: Int32Array, size: number): Int32Array {
  if (array.length >= size) return array;
  const bigger = new Int32Array(Math.max(size, Math.ceil(array.length * 1.5), 256)).fill(-1);
  bigger.set(array);
  return bigger;
}

export class LiveSnapshot {
  parts: Part[] = [];
  version = '';
  databaseSnapshot = '';
  readAt = 0;
  /** Who the organization is in which database, for its saved file (persist.ts); undefined: not saved. */
  identity: string | undefined;
  /** Part and run of each customer code (-1: none). */
  private customerPart: Int32Array = new Int32Array(0);
  private customerRun: Int32Array = new Int32Array(0);
  /** Part and index (among the part's anonymous orders) of each anonymous key code. */
  private anonymousPart: Int32Array = new Int32Array(0);
  private anonymousIndex: Int32Array = new Int32Array(0);
  /** Orders held but retired, and held in parts after the first: what compaction would fold. */
  retiredOrders = 0;
  private current: Snapshot | undefined;

  constructor(
    readonly organizationId: string,
    readonly codes = new OrganizationCodes(),
  ) {}

  /** Adds a part and notes where its customers and anonymous orders are. */
  addPart(part: Part): void {
    this.parts.push(part);
    this.register(part, this.parts.length - 1);
    this.current = undefined;
  }

  /** Notes where the part's valid runs and anonymous orders are (a retired one is elsewhere or gone). */
  private register(part: Part, p: number): void {
    this.customerPart = grown(this.customerPart, this.codes.customers.size);
    this.customerRun = grown(this.customerRun, this.codes.customers.size);
    for (let r = 0; r < part.customerCount; r++) {
      if (part.retiredRuns?.[r] === 1) continue;
      const c = part.runCustomer[r] as number;
      this.customerPart[c] = p;
      this.customerRun[c] = r;
    }
    this.anonymousPart = grown(this.anonymousPart, this.codes.anonymous.size);
    this.anonymousIndex = grown(this.anonymousIndex, this.codes.anonymous.size);
    const anonymousFrom = part.runStart[part.customerCount] as number;
    for (let k = 0; k < part.anonymousKey.length; k++) {
      if (part.retiredOrders?.[anonymousFrom + k] === 1) continue;
      const a = part.anonymousKey[k] as number;
      this.anonymousPart[a] = p;
      this.anonymousIndex[a] = k;
    }
  }

  /** The view reports read at this version. */
  view(): Snapshot {
    this.current ??= {
      organizationId: this.organizationId,
      version: this.version,
      parts: [...this.parts],
      attributes: this.codes.attributes.attributes(),
      lineItems: this.codes.lines.items(),
      stores: this.codes.stores,
      statuses: this.codes.statuses.dictionary,
      countries: this.codes.countries.dictionary,
      bytes: this.bytes,
    };
    return this.current;
  }

  get heldOrders(): number {
    return heldOrders(this.parts);
  }

  get bytes(): number {
    let bytes = this.codes.bytes + this.customerPart.length * 2 * INT32_BYTES;
    bytes += this.anonymousPart.length * 2 * INT32_BYTES;
    for (const part of this.parts) bytes += part.bytes;
    return bytes;
  }

  /**
   * Applies a delta: retires the runs of its customers and its anonymous orders, and adds a part
   * of their current orders. False when it cannot (a store changed address): rebuild.
   */
  async apply(delta: Delta, maxOrders: number): Promise<boolean> {
    for (const [id, address] of delta.stores) if (!this.codes.addStore(id, address)) return false;
    const columns = new OrderColumns(delta.orders.length + 1, this.codes, maxOrders);
    for (const order of delta.orders) columns.pushValues(order);
    const part = delta.orders.length > 0 ? await columns.part() : undefined;
    // From here on, synchronous: no report sees half of it.
    const changed = new Map<number, Part>();
    const editable = (p: number): Part => {
      let part = changed.get(p);
      if (!part) {
        const old = this.parts[p] as Part;
        part = {
          ...old,
          retiredRuns: old.retiredRuns ? old.retiredRuns.slice() : new Uint8Array(old.customerCount),
          retiredOrders: old.retiredOrders ? old.retiredOrders.slice() : new Uint8Array(old.orderCount),
        };
        changed.set(p, part);
      }
      return part;
    };
    const retireCustomer = (c: number): void => {
      const p = c < 0 || c >= this.customerPart.length ? -1 : (this.customerPart[c] as number);
      if (p < 0) return;
      const part = editable(p);
      const r = this.customerRun[c] as number;
      (part.retiredRuns as Uint8Array)[r] = 1;
      (part.retiredOrders as Uint8Array).fill(1, part.runStart[r] as number, part.runStart[r + 1] as number);
      this.retiredOrders += (part.runStart[r + 1] as number) - (part.runStart[r] as number);
      this.customerPart[c] = -1;
    };
    const retireAnonymous = (key: Buffer): void => {
      const a = this.codes.anonymous.find(key, 0, key.length);
      const p = a < 0 || a >= this.anonymousPart.length ? -1 : (this.anonymousPart[a] as number);
      if (p < 0) return;
      const part = editable(p);
      const k = this.anonymousIndex[a] as number;
      (part.retiredOrders as Uint8Array)[(part.runStart[part.customerCount] as number) + k] = 1;
      this.retiredOrders += 1;
      this.anonymousPart[a] = -1;
    };
    for (const customer of delta.customers) {
      const bytes = Buffer.from(customer, 'utf8');
      retireCustomer(this.codes.customers.find(bytes, 0, bytes.length));
    }
    for (const [storeId, externalId] of delta.retiredAnonymous)
      retireAnonymous(anonymousKey(storeId, externalId));
    // An order the full build read after its change is retired here too: applying twice is harmless.
    for (const order of delta.orders) if (order.key) retireAnonymous(order.key);
    for (const [p, part] of changed) this.parts[p] = part;
    if (part) {
      // The customers and keys coded above were retired where they were: only the new part holds them.
      this.addPart(part);
    }
    this.version = delta.version;
    this.databaseSnapshot = delta.databaseSnapshot;
    this.readAt = delta.readAt;
    this.current = undefined;
    return true;
  }

  /**
   * What is worth folding (issue 19): every part ('all') once more orders were retired or added
   * since the first part than a tenth of those held (and than `minOrders`), so that memory and
   * scan time stay within about 10 % of a fresh build's; else the parts after the first ('tail')
   * once there are more than 8 of them, at a cost proportional to those parts alone (at 20
   * orders a second a part comes every few hundred milliseconds: folding the whole organization
   * each time would cost more than the deltas themselves).
   */
  compactionNeeded(minOrders = 10_000): 'all' | 'tail' | undefined {
    const held = this.heldOrders;
    const added = held - (this.parts[0]?.orderCount ?? 0);
    if (this.retiredOrders + added > Math.max(minOrders, held / 10)) return 'all';
    return this.parts.length > 8 ? 'tail' : undefined;
  }

  needsCompaction(minOrders = 10_000): boolean {
    return this.compactionNeeded(minOrders) !== undefined;
  }

  /**
   * Folds the parts (all of them, or those after the first) into one without their retired
   * orders, a part per turn of the event loop; the caller makes sure no delta is applied meanwhile.
   */
  async compact(scope: 'all' | 'tail' = 'all'): Promise<void> {
    const unfolded = scope === 'all' ? [] : this.parts.slice(0, 1);
    const parts = this.parts.slice(unfolded.length);
    let runs = 0;
    let kept = 0;
    let anonymous = 0;
    let lines = 0;
    for (const part of parts) {
      const { lineStart } = part.lines;
      for (let r = 0; r < part.customerCount; r++) {
        if (part.retiredRuns?.[r] === 1) continue;
        runs++;
        kept += (part.runStart[r + 1] as number) - (part.runStart[r] as number);
        lines +=
          (lineStart[part.runStart[r + 1] as number] as number) -
          (lineStart[part.runStart[r] as number] as number);
      }
      const from = part.runStart[part.customerCount] as number;
      for (let k = from; k < part.orderCount; k++)
        if (part.retiredOrders?.[k] !== 1) {
          anonymous++;
          lines += (lineStart[k + 1] as number) - (lineStart[k] as number);
        }
    }
    const n = kept + anonymous;
    const seconds = new Float64Array(n);
    const columns = Array.from({ length: AMOUNTS + 2 }, () => new Int32Array(n));
    const runStart = new Int32Array(runs + 1);
    const runCustomer = new Int32Array(runs);
    const anonymousKeys = new Int32Array(anonymous);
    const foldedLines = new LinesFold(n, lines);
    const ints = (part: Part): Int32Array[] => [
      part.attribute,
      part.items,
      part.total,
      part.taxTotal,
      part.shippingTotal,
      part.feeTotal,
      part.refundTotal,
      part.refundTax,
      part.refundShipping,
    ];
    let at = 0;
    let run = 0;
    const copy = (part: Part, from: number, to: number): void => {
      seconds.set(part.seconds.subarray(from, to), at);
      const source = ints(part);
      for (let k = 0; k < source.length; k++)
        (columns[k] as Int32Array).set((source[k] as Int32Array).subarray(from, to), at);
      foldedLines.copy(part.lines, from, to, at);
      at += to - from;
    };
    // Valid runs (and anonymous orders) next to each other are copied as one range.
    for (const part of parts) {
      let from = -1;
      for (let r = 0; r <= part.customerCount; r++) {
        const valid = r < part.customerCount && part.retiredRuns?.[r] !== 1;
        if (valid) {
          if (from < 0) from = part.runStart[r] as number;
          runStart[run] = at + (part.runStart[r] as number) - from;
          runCustomer[run++] = part.runCustomer[r] as number;
        } else if (from >= 0) {
          copy(part, from, part.runStart[r] as number);
          from = -1;
        }
      }
      await nextTurn();
    }
    runStart[runs] = at;
    let k = 0;
    for (const part of parts) {
      const first = part.runStart[part.customerCount] as number;
      let from = -1;
      for (let i = first; i <= part.orderCount; i++) {
        const valid = i < part.orderCount && part.retiredOrders?.[i] !== 1;
        if (valid) {
          if (from < 0) from = i;
          anonymousKeys[k++] = part.anonymousKey[i - first] as number;
        } else if (from >= 0) {
          copy(part, from, i);
          from = -1;
        }
      }
    }
    const [
      attribute,
      items,
      total,
      taxTotal,
      shippingTotal,
      feeTotal,
      refundTotal,
      refundTax,
      refundShipping,
    ] = columns as [
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
      Int32Array,
    ];
    const folded = freshPart({
      orderCount: n,
      seconds,
      attribute,
      items,
      total,
      taxTotal,
      shippingTotal,
      feeTotal,
      refundTotal,
      refundTax,
      refundShipping,
      runStart,
      customerCount: runs,
      runCustomer,
      anonymousKey: anonymousKeys,
      lines: foldedLines.done(),
    });
    if (scope === 'all') {
      this.customerPart.fill(-1);
      this.anonymousPart.fill(-1);
      this.retiredOrders = 0;
    } else {
      // The first part's runs stay where they are; those of the folded parts are noted again
      // below (their retired ones were unlisted when retired): nothing here walks the first part.
      for (const part of parts) this.retiredOrders -= retiredIn(part);
    }
    this.parts = unfolded;
    this.addPart(folded);
  }
}

/** Orders of the part that are retired (their run's customer, or the anonymous order, changed since). */
function retiredIn(part: Part): number {
  let n = 0;
  for (const flag of part.retiredOrders ?? []) n += flag;
  return n;
}

/** Memory a snapshot of this many orders and customers takes, about. */
export function estimatedBytes(orders: number, customers: number): number {
  return orders * BYTES_PER_ORDER + customers * BYTES_PER_CUSTOMER;
}
