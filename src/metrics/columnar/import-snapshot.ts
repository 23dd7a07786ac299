// Issue 27, item 6 (and 28, item 1): the snapshot of an organization's first import, built from
// the orders as a command writes them (src/ingest/copy-into-empty.ts) instead of read back from the
// database once they are committed. At a million orders with their lines, reading them back took
// 10.8–13.8 s after the import, PGlite's thread busy for most of it with the lines' COPY while the
// command's thread waited (a trace of each phase); the same orders pushed as values while the file
// is read cost the command's thread a few seconds beside the read.
// Each order becomes the values a delta reads from SQL (delta.ts: VALUES, LINES_JSON) from its
// checked record, the way PostgreSQL stores it: floor of the instant's epoch, cents of the
// two-decimal amounts, `Unknown` for a missing country or line text (L2), the categories as JSON.
// The snapshot is only used when what it holds is what was committed, and nothing else since: the
// import's transaction tells the data version it leaves (committed), and the snapshot is labelled
// with it only if the organization still has it, with the database snapshot read then (the next
// delta's start: every row of the import is visible in it).
import type { Database } from '../../db/database.js';
import type { WrittenOrders } from '../../ingest/copy-into-empty.js';
import type { OrderLineRecord } from '../../ingest/order-line.js';
import type { OrderRecord } from '../../ingest/validate-order.js';
import { cents } from '../../ingest/field-checks.js';
import { anonymousKey } from './codes.js';
import { addStores, snapshotLabel } from './build-snapshot.js';
import { BYTES_PER_LINE } from './line-columns.js';
import { LiveSnapshot } from './live-snapshot.js';
import { AmountOutOfRange, OrderColumns, OverBudget } from './order-columns.js';
import { BYTES_PER_ORDER } from './snapshot.js';

/** L2: a missing text is `Unknown`, as the SQL engine and a build show it (line-columns.ts: shown). */
const shown = (text: string | null): string => (text === null || text === '' ? 'Unknown' : text);

export class ImportSnapshot implements WrittenOrders {
  private readonly live: LiveSnapshot;
  private columns: OrderColumns | undefined;
  private lines = 0;
  /**
   * Each combination of a line's texts seen so far (L2's `Unknown` for a missing one, then its
   * categories), joined by NUL, which no text holds: its item. A catalogue repeats: each line
   * costs one lookup, its texts coded once a combination.
   */
  private readonly items = new Map<string, number>();
  /** The code of each customer, by its number (WrittenOrders.order): as many as were seen. */
  private customerCodes = new Int32Array(1024);
  private customersSeen = 0;
  /** The data version the import's transaction committed; undefined: not committed (yet). */
  private version: string | undefined;
  /** Why no snapshot comes of it (over the budget, an amount out of range, discarded). */
  reason: string | undefined;

  constructor(
    organizationId: string,
    /** The engine's memory budget: past it, no snapshot (the server answers by SQL, as a build's would). */
    private readonly maxBytes: number,
  ) {
    this.live = new LiveSnapshot(organizationId);
    const maxOrders = Math.floor(maxBytes / BYTES_PER_ORDER);
    this.columns = new OrderColumns(Math.min(1024, maxOrders) + 64, this.live.codes, maxOrders); // grows
  }

  store(id: number, address: string): void {
    if (!this.live.codes.addStore(id, address)) this.discard('store');
  }

  order(o: OrderRecord, storeId: number, seconds: number, customer: number): void {
    const columns = this.columns;
    if (columns === undefined) return;
    this.lines += o.lines.length;
    if ((columns.length + 1) * BYTES_PER_ORDER + this.lines * BYTES_PER_LINE > this.maxBytes) {
      this.discard('over-budget');
      return;
    }
    try {
      const customerCode = customer < 0 ? undefined : this.customerCode(o.customer!, customer);
      if (customer >= 0 && customerCode === undefined) {
        this.discard('customers');
        return;
      }
      columns.pushValues({
        customer: o.customer,
        ...(customerCode === undefined ? {} : { customerCode }),
        seconds,
        storeId,
        status: o.status,
        country: o.billingCountry ?? 'Unknown',
        items: o.items,
        cents: [
          o.total,
          o.taxTotal,
          o.shippingTotal,
          o.feeTotal,
          o.refundTotal,
          o.refundTax,
          o.refundShipping,
        ].map(cents),
        key: o.customer === null ? anonymousKey(storeId, o.externalId) : null,
      });
      for (const l of o.lines)
        columns.pushCodedLine(
          this.itemOf(l),
          l.quantity,
          l.refunded_quantity,
          cents(l.subtotal),
          cents(l.discount),
          cents(l.refunded_amount),
        );
    } catch (error) {
      if (error instanceof OverBudget) this.discard('over-budget');
      else if (error instanceof AmountOutOfRange) this.discard('amount-range');
      else throw error;
    }
  }

  /**
   * The code of the customer numbered `number`: added at its first sight (numbers come in order of
   * first sight, each order seen here), undefined should one be skipped.
   */
  private customerCode(customer: string, number: number): number | undefined {
    if (number < this.customersSeen) return this.customerCodes[number];
    if (number > this.customersSeen) return undefined;
    if (number === this.customerCodes.length) {
      const larger = new Int32Array(2 * number);
      larger.set(this.customerCodes);
      this.customerCodes = larger;
    }
    const code = this.live.codes.customers.appendText(customer);
    this.customerCodes[number] = code;
    this.customersSeen++;
    return code;
  }

  /** The item of a line's texts, as a build codes them from the stored row (its categories as JSON). */
  private itemOf(l: OrderLineRecord): number {
    const product = shown(l.product_name);
    const productId = shown(l.product_id);
    const variant = shown(l.variant_name);
    const sku = shown(l.sku);
    // The categories' count first: [] and [''] join alike.
    const key = `${product}\u0000${productId}\u0000${variant}\u0000${sku}\u0000${l.categories.length}\u0000${l.categories.join('\u0000')}`;
    let item = this.items.get(key);
    if (item === undefined) {
      item = this.live.codes.lines.textsItem(product, productId, variant, sku, JSON.stringify(l.categories));
      this.items.set(key, item);
    }
    return item;
  }

  committed(version: string): void {
    this.version = version;
  }

  discard(reason = 'discarded'): void {
    this.columns = undefined; // its memory goes
    this.reason ??= reason;
  }

  /**
   * The snapshot of what the import committed, labelled with the database's state now, in two
   * steps: its statements (the label, the stores), then the returned function, which needs none
   * (the columns made into the snapshot's part, a slice per turn of the event loop), so that a
   * command runs it while the database analyzes (src/cli/prepare-reports.ts). Undefined (and
   * `reason`) when there is none to trust: not committed, discarded, or the organization's data
   * changed since the commit.
   */
  async labelled(db: Pick<Database, 'query'>): Promise<(() => Promise<LiveSnapshot>) | undefined> {
    const columns = this.columns;
    if (columns === undefined || this.version === undefined) {
      this.reason ??= 'not-committed';
      return undefined;
    }
    this.columns = undefined;
    const label = await snapshotLabel(db, this.live.organizationId);
    if (label?.version !== this.version) {
      this.reason = 'changed';
      return undefined;
    }
    if (columns.absoluteCents > Number.MAX_SAFE_INTEGER) {
      this.reason = 'amount-range';
      return undefined;
    }
    const live = this.live;
    // Every store of the organization, as a build reads them (those of no order too).
    if (!(await addStores(db, live))) {
      this.reason = 'store';
      return undefined;
    }
    Object.assign(live, label);
    return async () => {
      live.addPart(await columns.part());
      return live;
    };
  }
}
