// Snapshots on disk (issue 19, item 3): a restarted server or a new instance reads an
// organization's last compacted snapshot from a file and brings it up to date by a delta, instead
// of a minute of SQL while a full build reads the table. A file is never trusted: it must carry
// this format's version, the database's identity (its system identifier, database name, the
// organization's id and creation instant) and a checksum of everything before it; the database
// must not be behind the file (its data version and transaction ids, or it was restored from an
// older backup); every index in it must lie within its array. Anything else is ignored, and the
// snapshot built again.
//
// Read back without a copy (issue 19, item 5): the file is read into one buffer and each column
// is a typed array over it (every array starts at a multiple of 8 bytes from the file's start, so
// any element type is aligned); at ten million orders there are 800 MB of columns, and copying
// them cost more than reading them. The checksum is a CRC-32 (zlib's, over 1.4 GB/s here, where
// SHA-256 made 350 MB/s): it is there against torn or damaged files, not against someone who can
// write the folder (they could rewrite any checksum; they own the server anyway).
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { ByteCodes, HexTextCodes, type ByteCodesState } from './byte-codes.js';
import type { SnapshotSource } from './build-snapshot.js';
import { OrganizationCodes } from './codes.js';
import { LiveSnapshot } from './live-snapshot.js';
import { nextTurn } from './order-columns.js';
import { freshPart, type Part } from './snapshot.js';
import { markName, markOf, ownMark, removeLeftoversOfDeadProcesses } from '../../db/process-identity.js';

const MAGIC = Buffer.from('SMSNAP\u0000\u0002', 'latin1');
/**
 * 2: CRC-32 instead of SHA-256; 3: order lines (section 15). A file of an older format is ignored,
 * and the snapshot built again.
 */
export const SNAPSHOT_FORMAT = 3;
const DIGEST_BYTES = 4;
/** Bytes checksummed per turn of the event loop. */
const CHECK_SLICE = 32 << 20;

/** CRC-32 of the pieces, one slice of CHECK_SLICE bytes per turn of the event loop. */
async function checksum(pieces: readonly Uint8Array[], signal?: AbortSignal): Promise<number> {
  let crc = 0;
  for (const piece of pieces)
    for (let at = 0; at < piece.length; at += CHECK_SLICE) {
      crc = zlib.crc32(piece.subarray(at, at + CHECK_SLICE), crc);
      await nextTurn();
      signal?.throwIfAborted();
    }
  return crc;
}

const TEMPORARY = '.tmp';
/** `<32 hex>.snapshot.<process>.<8 hex>.tmp`, the process as markName() writes it. */
const TEMPORARY_NAME = /^[0-9a-f]{32}\.snapshot\.([0-9t-]+)\.[0-9a-f]+\.tmp$/;

/**
 * Where a save writes before its rename: named after this process (pid and start time), so that a
 * later start removes it if this process dies first (issue 26, item 8).
 */
export const temporaryFileOf = (file: string): string =>
  `${file}.${markName(ownMark)}.${crypto.randomBytes(4).toString('hex')}${TEMPORARY}`;

/**
 * Removes the half-written snapshot files of processes that no longer run (killed with SIGKILL,
 * or by the machine, during a save): each can be as large as a snapshot (issue 26, item 8). The
 * files of other running instances sharing the folder stay. Synchronous: run once at start.
 */
export function removeLeftoverSaves(dir: string): string[] {
  return removeLeftoversOfDeadProcesses(dir, (name) => {
    const owner = TEMPORARY_NAME.exec(name)?.[1];
    return owner === undefined ? undefined : markOf(owner);
  });
}

type Typed = Float64Array | Int32Array | Uint8Array;
const KINDS = { f64: Float64Array, i32: Int32Array, u8: Uint8Array } as const;
type Kind = keyof typeof KINDS;
const kindOf = (array: Typed): Kind =>
  array instanceof Float64Array ? 'f64' : array instanceof Int32Array ? 'i32' : 'u8';

interface Header {
  readonly format: number;
  readonly identity: string;
  readonly organizationId: string;
  readonly version: string;
  readonly databaseSnapshot: string;
  readonly readAt: number;
  readonly stores: readonly string[];
  readonly storeIds: readonly (readonly [number, number, string])[];
  readonly statuses: readonly string[];
  readonly countries: readonly string[];
  readonly customers: { readonly size: number; readonly used: number; readonly blocks: number };
  readonly anonymous: { readonly size: number; readonly used: number; readonly blocks: number };
  readonly customerCount: number;
  /** Section 15: the line texts' dictionaries, in code order. */
  readonly lineTexts: LineTexts;
  readonly arrays: readonly (readonly [name: string, kind: Kind, length: number])[];
}

interface LineTexts {
  readonly products: readonly string[];
  readonly productIds: readonly string[];
  readonly variants: readonly string[];
  readonly skus: readonly string[];
  readonly categorySets: readonly string[];
}

/** The part's line columns (names without a dot: they are read with the columns). */
const lineArrays = (part: Part): [string, Typed][] => [
  ['lineStart', part.lines.lineStart],
  ['lineItem', part.lines.item],
  ['lineQuantity', part.lines.quantity],
  ['lineRefundedQuantity', part.lines.refundedQuantity],
  ['lineSubtotal', part.lines.subtotal],
  ['lineDiscount', part.lines.discount],
  ['lineRefundedAmount', part.lines.refundedAmount],
];

const ITEM_FIELDS = ['product', 'productId', 'variant', 'sku', 'categorySet'] as const;

/** Who the organization is in which database: a file of another one is foreign. */
export async function identityOf(db: SnapshotSource, organizationId: string): Promise<string | undefined> {
  const [row] = await db.query<{ identity: string }>(
    `SELECT concat_ws('/', (SELECT system_identifier FROM pg_control_system()), current_database(), o.id,
       (extract(epoch FROM o.created_at) * 1000000)::bigint) AS identity
     FROM organizations o WHERE o.id = $1`,
    [organizationId],
  );
  return row?.identity;
}

const fileOf = (dir: string, identity: string): string =>
  path.join(dir, `${crypto.createHash('sha256').update(identity).digest('hex').slice(0, 32)}.snapshot`);

/**
 * The size of the organization's saved file, if it has one (not checked: loadSnapshot does that):
 * what its snapshot takes once read back, the columns being views over the file's bytes. The
 * start's preparation weighs an organization by it instead of counting its rows, which on the
 * embedded database held the file's read-back up by a second at 300,000 orders (issue 28).
 */
export async function savedFileBytes(
  db: SnapshotSource,
  dir: string,
  organizationId: string,
): Promise<number | undefined> {
  const saved = await savedFileOf(db, dir, organizationId);
  if (!saved) return undefined;
  try {
    return (await fs.stat(saved.file)).size;
  } catch {
    return undefined;
  }
}

/** Where the organization's snapshot is saved in `dir`, and the identity its header must carry. */
async function savedFileOf(
  db: SnapshotSource,
  dir: string,
  organizationId: string,
): Promise<{ identity: string; file: string } | undefined> {
  const identity = await identityOf(db, organizationId);
  return identity ? { identity, file: fileOf(dir, identity) } : undefined;
}

function arraysOf(live: LiveSnapshot, part: Part): [string, Typed][] {
  // The last block and the table change in place as codes are added: copies, so that the bytes
  // written are the bytes hashed even if a delta comes meanwhile (earlier blocks never change).
  const codes = (name: string, state: ByteCodesState): [string, Typed][] => [
    ...state.blocks.map((block, k): [string, Typed] => [
      `${name}.block${k}`,
      k === state.blocks.length - 1 ? block.slice() : block,
    ]),
    [`${name}.at`, state.at],
    [`${name}.lengths`, state.lengths],
    [`${name}.hashes`, state.hashes],
    [`${name}.slots`, state.slots.slice()],
  ];
  const attributes = live.codes.attributes.attributes();
  const items = live.codes.lines.items();
  return [
    ['seconds', part.seconds],
    ['attribute', part.attribute],
    ['items', part.items],
    ['total', part.total],
    ['taxTotal', part.taxTotal],
    ['shippingTotal', part.shippingTotal],
    ['feeTotal', part.feeTotal],
    ['refundTotal', part.refundTotal],
    ['refundTax', part.refundTax],
    ['refundShipping', part.refundShipping],
    ['runStart', part.runStart],
    ['runCustomer', part.runCustomer],
    ['anonymousKey', part.anonymousKey],
    ...lineArrays(part),
    ['attributes.store', attributes.store],
    ['attributes.status', attributes.status],
    ['attributes.country', attributes.country],
    ...codes('customers', live.codes.customers.state()),
    ...codes('anonymous', live.codes.anonymous.state()),
    ...ITEM_FIELDS.map((field): [string, Typed] => [`lineItems.${field}`, items[field]]),
  ];
}

/**
 * Writes a snapshot of one part (after a build or a compaction) to its file, atomically. What it
 * writes is taken when it is called: deltas applied meanwhile are not in the file (the next
 * start reads them again).
 */
export async function saveSnapshot(
  dir: string,
  identity: string,
  live: LiveSnapshot,
  signal?: AbortSignal,
): Promise<void> {
  const part = live.parts[0];
  if (live.parts.length !== 1 || !part || part.retiredRuns || part.retiredOrders) return;
  const arrays = arraysOf(live, part);
  const state = (codes: ByteCodesState) => ({
    size: codes.size,
    used: codes.used,
    blocks: codes.blocks.length,
  });
  const header: Header = {
    format: SNAPSHOT_FORMAT,
    identity,
    organizationId: live.organizationId,
    version: live.version,
    databaseSnapshot: live.databaseSnapshot,
    readAt: live.readAt,
    stores: live.codes.stores.values,
    storeIds: [...live.codes.storeCodes].map(([id, code]) => [
      id,
      code,
      live.codes.storeAddresses.get(id) ?? '',
    ]),
    statuses: live.codes.statuses.dictionary.values,
    countries: live.codes.countries.dictionary.values,
    customers: state(live.codes.customers.state()),
    anonymous: state(live.codes.anonymous.state()),
    customerCount: part.customerCount,
    lineTexts: {
      products: live.codes.lines.products.dictionary.values,
      productIds: live.codes.lines.productIds.dictionary.values,
      variants: live.codes.lines.variants.dictionary.values,
      skus: live.codes.lines.skus.dictionary.values,
      categorySets: live.codes.lines.categorySets.dictionary.values,
    },
    arrays: arrays.map(([name, array]) => [name, kindOf(array), array.length] as const),
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const head = Buffer.alloc(MAGIC.length + 4);
  MAGIC.copy(head);
  head.writeUInt32LE(json.length, MAGIC.length);
  const pieces: Uint8Array[] = [head, json, Buffer.alloc(pad(head.length + json.length))];
  for (const [, array] of arrays) {
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    pieces.push(bytes, Buffer.alloc(pad(bytes.length)));
  }
  // Everything written is fixed by now (columns never change, the rest was copied): the checksum
  // goes a slice per turn of the event loop, requests between.
  const digest = Buffer.alloc(DIGEST_BYTES);
  digest.writeUInt32LE(await checksum(pieces, signal));
  pieces.push(digest);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const file = fileOf(dir, identity);
  const temporary = temporaryFileOf(file);
  try {
    const handle = await fs.open(temporary, 'w', 0o600);
    try {
      for (const piece of pieces) {
        signal?.throwIfAborted(); // a stop drops the save between pieces (issue 26, item 8)
        await handle.write(piece);
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    signal?.throwIfAborted();
    await fs.rename(temporary, file);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}

/** Bytes that bring `length` to a multiple of 8 (every array starts aligned). */
const pad = (length: number): number => (8 - (length % 8)) % 8;

/**
 * The organization's snapshot from its file, or undefined when there is none or it cannot be
 * trusted (another format, database or organization, a wrong checksum, a database behind it), or
 * when it holds `after`'s data version or an older one (a rebuild's: what it replaces was newer).
 */
export async function loadSnapshot(
  db: SnapshotSource,
  dir: string,
  organizationId: string,
  after?: string,
): Promise<LiveSnapshot | undefined> {
  const saved = await savedFileOf(db, dir, organizationId);
  if (!saved) return undefined;
  let data: FileBytes | undefined;
  try {
    data = await readFileBytes(saved.file);
  } catch {
    return undefined; // no file, or a header that is not JSON
  }
  const header = data && verified(data, saved.identity, organizationId);
  if (!data || !header) return undefined;
  if (after !== undefined && BigInt(header.version) <= BigInt(after)) return undefined;
  const [now] = await db.query<{ behind: boolean }>(
    `SELECT data_version < $2::bigint
       OR pg_snapshot_xmax(pg_current_snapshot()) < pg_snapshot_xmax($3::pg_snapshot) AS behind
     FROM organizations WHERE id = $1`,
    [organizationId, header.version, header.databaseSnapshot],
  );
  if (!now || now.behind) return undefined;
  return restored(data, header);
}

/**
 * The file's bytes in two buffers of their own: the part's columns, then the codes (and the rest).
 * The columns are views over the first, which a compaction lets go (it replaces every column); the
 * codes, views over the second, live as long as the organization's snapshot. Each buffer starts
 * at offset 0 of its ArrayBuffer (fs.readFile gives no such promise) and every array at a
 * multiple of 8 bytes from the file's start: any element type is aligned.
 */
export interface FileBytes {
  readonly columns: Buffer;
  readonly rest: Buffer;
  /** CRC-32 of the bytes before the digest, taken as they were read. */
  readonly crc: number;
}

/** Where each array lies in the file, as the header says (not trusted: every place is checked). */
function layoutOf(
  header: Header,
  jsonLength: number,
): { name: string; kind: Kind; length: number; at: number }[] {
  let at = MAGIC.length + 4 + jsonLength;
  at += pad(at);
  return header.arrays.map(([name, kind, length]) => {
    const place = { name, kind, length, at };
    const bytes = length * KINDS[kind].BYTES_PER_ELEMENT;
    at += bytes + pad(bytes);
    return place;
  });
}

const headerOf = (head: Buffer): Header => JSON.parse(head.toString('utf8')) as Header;

/** Bytes read (and checksummed) per slice: the checksum of one slice runs while the next is read. */
const READ_SLICE = 16 << 20;

/**
 * The file's bytes, and the CRC-32 of everything before its digest taken as they are read
 * (issue 28: a second pass over 148 MB at a million orders was a third of the read-back).
 */
async function readFileBytes(file: string): Promise<FileBytes | undefined> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const start = MAGIC.length + 4;
    if (size < start + DIGEST_BYTES) return undefined;
    const jsonLength = (await readRange(handle, 0, start)).readUInt32LE(MAGIC.length);
    if (start + jsonLength > size) return undefined;
    const layout = layoutOf(headerOf(await readRange(handle, start, start + jsonLength)), jsonLength);
    const split = Math.min(layout.find((place) => place.name.includes('.'))?.at ?? size, size);
    const summed = { crc: 0, end: size - DIGEST_BYTES };
    const columns = await readRange(handle, 0, split, summed);
    const rest = await readRange(handle, split, size, summed);
    return { columns, rest, crc: summed.crc };
  } finally {
    await handle.close();
  }
}

/**
 * Bytes [from, to) of the file, in a buffer at offset 0 of its own ArrayBuffer; with `summed`,
 * their CRC-32 (up to summed.end) added to it, each slice's while the next slice is read.
 */
async function readRange(
  handle: fs.FileHandle,
  from: number,
  to: number,
  summed?: { crc: number; readonly end: number },
): Promise<Buffer> {
  const data = Buffer.from(new ArrayBuffer(to - from));
  const fill = async (at: number, end: number): Promise<void> => {
    while (at < end) {
      const { bytesRead } = await handle.read(data, at, end - at, from + at);
      if (bytesRead === 0) throw new Error('snapshot file: shorter than its size');
      at += bytesRead;
    }
  };
  let reading = fill(0, Math.min(READ_SLICE, data.length));
  for (let at = 0; at < data.length; at += READ_SLICE) {
    await reading;
    const end = Math.min(at + READ_SLICE, data.length);
    if (end < data.length) reading = fill(end, Math.min(end + READ_SLICE, data.length));
    if (summed) summed.crc = zlib.crc32(data.subarray(at, Math.min(end, summed.end - from)), summed.crc);
  }
  return data;
}

function verified(data: FileBytes, identity: string, organizationId: string): Header | undefined {
  const { columns, rest } = data;
  if (columns.length < MAGIC.length + 4 || rest.length < DIGEST_BYTES) return undefined;
  if (!columns.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  if (data.crc !== rest.readUInt32LE(rest.length - DIGEST_BYTES)) return undefined;
  try {
    const length = columns.readUInt32LE(MAGIC.length);
    const header = headerOf(columns.subarray(MAGIC.length + 4, MAGIC.length + 4 + length));
    if (
      header.format !== SNAPSHOT_FORMAT ||
      header.identity !== identity ||
      header.organizationId !== organizationId
    )
      return undefined;
    return header;
  } catch {
    return undefined;
  }
}

function restored(data: FileBytes, header: Header): LiveSnapshot | undefined {
  const { columns, rest } = data;
  const arrays = new Map<string, Typed>();
  const end = columns.length + rest.length - DIGEST_BYTES;
  for (const { name, kind, length, at } of layoutOf(header, columns.readUInt32LE(MAGIC.length))) {
    const Kind = KINDS[kind];
    const bytes = length * Kind.BYTES_PER_ELEMENT;
    if (at + bytes > end) return undefined;
    const inColumns = at + bytes <= columns.length;
    if (!inColumns && at < columns.length) return undefined; // across the two buffers: not as saved
    arrays.set(name, arrayAt(inColumns ? columns : rest, inColumns ? at : at - columns.length, Kind, length));
  }
  const get = <T extends Typed>(name: string): T => {
    const array = arrays.get(name);
    if (!array) throw new Error(`snapshot file: ${name} missing`);
    return array as T;
  };
  const codesOf = (name: string, state: Header['customers']): ByteCodes =>
    ByteCodes.restore({
      size: state.size,
      used: state.used,
      blocks: Array.from({ length: state.blocks }, (_, k) => get<Uint8Array>(`${name}.block${k}`)),
      at: get(`${name}.at`),
      lengths: get(`${name}.lengths`),
      hashes: get(`${name}.hashes`),
      slots: get(`${name}.slots`),
    });
  const codes = new OrganizationCodes(
    new HexTextCodes(codesOf('customers', header.customers)),
    codesOf('anonymous', header.anonymous),
  );
  for (const value of header.stores) codes.stores.code(value);
  for (const [id, code, address] of header.storeIds) {
    codes.storeCodes.set(id, code);
    codes.storeAddresses.set(id, address);
  }
  for (const value of header.statuses) codes.statuses.codeText(value);
  for (const value of header.countries) codes.countries.codeText(value);
  const [store, status, country] = ['store', 'status', 'country'].map((n) =>
    get<Int32Array>(`attributes.${n}`),
  );
  for (let a = 0; a < (store?.length ?? 0); a++)
    codes.attributes.code(store![a] as number, status![a] as number, country![a] as number);
  const texts = header.lineTexts;
  const lineCodes = codes.lines;
  for (const value of texts.products) lineCodes.products.codeText(value);
  for (const value of texts.productIds) lineCodes.productIds.codeText(value);
  for (const value of texts.variants) lineCodes.variants.codeText(value);
  for (const value of texts.skus) lineCodes.skus.codeText(value);
  for (const value of texts.categorySets) {
    const bytes = Buffer.from(value, 'utf8');
    lineCodes.categorySet(bytes, 0, bytes.length);
  }
  const [product, productId, variant, sku, categorySet] = ITEM_FIELDS.map((field) =>
    get<Int32Array>(`lineItems.${field}`),
  ) as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];
  const sizes = [texts.products, texts.productIds, texts.variants, texts.skus, texts.categorySets].map(
    (t) => t.length,
  );
  for (let k = 0; k < product.length; k++) {
    const item = [product[k], productId[k], variant[k], sku[k], categorySet[k]] as number[];
    if (item.some((code, f) => !(code >= 0 && code < (sizes[f] as number)))) return undefined;
    lineCodes.item(...(item as [number, number, number, number, number]));
  }
  const lineStart = get<Int32Array>('lineStart');
  const lines = {
    count: lineStart[lineStart.length - 1] ?? 0,
    lineStart,
    item: get<Int32Array>('lineItem'),
    quantity: get<Int32Array>('lineQuantity'),
    refundedQuantity: get<Int32Array>('lineRefundedQuantity'),
    subtotal: get<Int32Array>('lineSubtotal'),
    discount: get<Int32Array>('lineDiscount'),
    refundedAmount: get<Int32Array>('lineRefundedAmount'),
  };
  const seconds = get<Float64Array>('seconds');
  const runStart = get<Int32Array>('runStart');
  const anonymousKey = get<Int32Array>('anonymousKey');
  const part = freshPart({
    orderCount: seconds.length,
    seconds,
    attribute: get('attribute'),
    items: get('items'),
    total: get('total'),
    taxTotal: get('taxTotal'),
    shippingTotal: get('shippingTotal'),
    feeTotal: get('feeTotal'),
    refundTotal: get('refundTotal'),
    refundTax: get('refundTax'),
    refundShipping: get('refundShipping'),
    runStart,
    customerCount: header.customerCount,
    runCustomer: get('runCustomer'),
    anonymousKey,
    lines,
  });
  if (!consistent(part, codes.attributes.attributes().count, codes.customers.size, codes.anonymous.size))
    return undefined;
  if (!consistentLines(part, product.length)) return undefined;
  const live = new LiveSnapshot(header.organizationId, codes);
  live.version = header.version;
  live.databaseSnapshot = header.databaseSnapshot;
  live.readAt = header.readAt;
  live.addPart(part);
  return live;
}

type TypedClass = (typeof KINDS)[Kind];

/** The array at `at` in `data`: a view over it, or a copy where it would not be aligned for the type. */
export function arrayAt(data: Buffer, at: number, Kind: TypedClass, length: number): Typed {
  const offset = data.byteOffset + at;
  if (offset % Kind.BYTES_PER_ELEMENT === 0) return new Kind(data.buffer as ArrayBuffer, offset, length);
  const array = new Kind(length);
  new Uint8Array(array.buffer).set(data.subarray(at, at + length * Kind.BYTES_PER_ELEMENT));
  return array;
}

/** Section 15: each order's lines within the line columns, each line's item among the items. */
function consistentLines(part: Part, items: number): boolean {
  const { lineStart, count } = part.lines;
  if (lineStart.length !== part.orderCount + 1 || lineStart[0] !== 0) return false;
  if (!ascending(lineStart)) return false;
  const columns = [part.lines.item, part.lines.quantity, part.lines.refundedQuantity];
  const amounts = [part.lines.subtotal, part.lines.discount, part.lines.refundedAmount];
  if ([...columns, ...amounts].some((c) => c.length !== count)) return false;
  return within(part.lines.item, items);
}

/** Every index within its array: a file that passed its checksum is still not trusted blindly. */
function consistent(part: Part, attributes: number, customers: number, anonymous: number): boolean {
  const n = part.orderCount;
  const columns = [part.attribute, part.items, part.total, part.taxTotal, part.shippingTotal, part.feeTotal];
  if (columns.some((c) => c.length !== n) || part.refundTotal.length !== n) return false;
  if (part.refundTax.length !== n || part.refundShipping.length !== n) return false;
  const { runStart, customerCount } = part;
  if (runStart.length !== customerCount + 1 || runStart[0] !== 0 || part.runCustomer.length !== customerCount)
    return false;
  if (!ascending(runStart) || !within(part.runCustomer, customers)) return false;
  if ((runStart[customerCount] as number) + part.anonymousKey.length !== n) return false;
  return within(part.anonymousKey, anonymous) && within(part.attribute, attributes);
}

/**
 * Every code in [0, size). Indexed, not `for…of`: run once at a start, before V8 optimizes it, an
 * iterator's loop cost 7 times as much (150 ms for 300,000 orders and their lines, issue 28).
 */
function within(codes: Int32Array, size: number): boolean {
  for (let k = 0; k < codes.length; k++) {
    const code = codes[k] as number;
    if (code < 0 || code >= size) return false;
  }
  return true;
}

/** No value below the one before it (an order's lines, a customer's orders: where each starts). */
function ascending(starts: Int32Array): boolean {
  for (let k = 1; k < starts.length; k++) if ((starts[k] as number) < (starts[k - 1] as number)) return false;
  return true;
}
