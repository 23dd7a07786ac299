// Snapshot files read back without a copy (issue 19, items 3 and 5): the part's columns are views
// over one buffer read from the file, the codes over another; an array that would not be aligned
// is copied; a file of another format version, a damaged one, or one cut short is ignored (the
// caller builds the snapshot again), never trusted; and the first request after a restart waits
// for the file rather than start an SQL answer (30 s at ten million orders). Issue 26, item 8: the
// half-written file of a process killed during a save is removed at the next start (not a running
// process's), and a stop drops a save in progress without leaving one. Issue 28: a server reads
// the saved file back before it listens; a damaged column or an index out of range is refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { createOrganization } from '../../src/domain/organizations.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { buildSnapshot } from '../../src/metrics/columnar/build-snapshot.js';
import { ColumnarReportEngine, type SnapshotEvent } from '../../src/metrics/columnar/columnar-engine.js';
import { SqlReportEngine } from '../../src/metrics/engine.js';
import { NO_EXTENSIONS } from '../../src/query/parse.js';
import { planReport } from '../../src/query/plan.js';
import type { LiveSnapshot } from '../../src/metrics/columnar/live-snapshot.js';
import {
  arrayAt,
  loadSnapshot,
  saveSnapshot,
  identityOf,
  SNAPSHOT_FORMAT,
  temporaryFileOf,
} from '../../src/metrics/columnar/persist.js';
import type { Part } from '../../src/metrics/columnar/snapshot.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

const COLUMNS = [
  'seconds',
  'attribute',
  'items',
  'total',
  'taxTotal',
  'shippingTotal',
  'feeTotal',
  'refundTotal',
  'refundTax',
  'refundShipping',
  'runStart',
  'runCustomer',
  'anonymousKey',
] as const;

const orders = Array.from({ length: 300 }, (_, i) => ({
  store: i % 3 === 0 ? 'https://a.example' : 'https://b.example',
  id: `o${i}`,
  created_at: new Date(Date.UTC(2025, 0, 1) + i * 7_200_000).toISOString(),
  status: i % 7 === 0 ? 'refunded' : 'completed',
  billing_country: i % 2 ? 'FR' : 'DE',
  ...(i % 5 === 0 ? {} : { customer_email: `client${i % 40}@example.org` }),
  items: 1 + (i % 3),
  total: `${10 + i}.25`,
  tax_total: '2.05',
  shipping_total: '4.90',
  fee_total: '0',
  refund_total: i % 7 === 0 ? `${10 + i}.25` : '0',
  refund_tax: '0',
  refund_shipping: '0',
}));

/** Where the named array starts in a saved file (the header lists them in order, each 8-byte aligned). */
function columnAt(file: Buffer, name: string): number {
  const json = file.readUInt32LE(8);
  const header = JSON.parse(file.toString('utf8', 12, 12 + json)) as { arrays: [string, string, number][] };
  const size = { f64: 8, i32: 4, u8: 1 } as Record<string, number>;
  let at = 12 + json;
  for (const [array, kind, length] of header.arrays) {
    at += (8 - (at % 8)) % 8;
    if (array === name) return at;
    at += length * size[kind]!;
  }
  throw new Error(`no array ${name}`);
}

describe('snapshot files: read back without a copy, never trusted (issue 19)', () => {
  let database: TestDatabase;
  let organizationId: string;
  let built: LiveSnapshot;
  let dir: string;
  let file: string;

  before(async () => {
    database = await openTestDatabase();
    organizationId = (await createOrganization(database.db, { name: 'Fichier' })).id;
    await importOrderRecords(database.db, organizationId, orders);
    const result = await buildSnapshot(database.db, organizationId, { maxBytes: 64 << 20 });
    assert.ok(result && !('reason' in result));
    built = result;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-snapshot-file-'));
    await saveSnapshot(dir, (await identityOf(database.db, organizationId))!, built);
    file = path.join(dir, fs.readdirSync(dir)[0]!);
  });
  after(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await database?.cleanup();
  });

  test('the columns are views over one buffer read from the file, equal to the built ones', async () => {
    const loaded = await loadSnapshot(database.db, dir, organizationId);
    assert.ok(loaded);
    const [part, original] = [loaded.parts[0] as Part, built.parts[0] as Part];
    const buffer = part.seconds.buffer;
    for (const name of COLUMNS) {
      assert.deepEqual(Array.from(part[name]), Array.from(original[name]), name);
      // Not a copy of its own: every column lies in the same buffer, at a place aligned for its type.
      assert.equal(part[name].buffer, buffer, name);
      assert.equal(part[name].byteOffset % part[name].BYTES_PER_ELEMENT, 0, name);
    }
    assert.ok(buffer.byteLength < fs.statSync(file).size, 'the codes are in a buffer of their own');
    assert.equal(loaded.heldOrders, orders.length);
  });

  test('an array that would not be aligned for its type is copied, with the same values', () => {
    const values = Float64Array.of(1.5, -2, 1_767_225_600);
    const data = Buffer.from(new ArrayBuffer(8 + 24));
    Buffer.from(values.buffer).copy(data, 8);
    const aligned = arrayAt(data, 8, Float64Array, 3);
    assert.equal(aligned.buffer, data.buffer);
    const shifted = Buffer.from(new ArrayBuffer(4 + 24), 4);
    Buffer.from(values.buffer).copy(shifted, 0);
    const copied = arrayAt(shifted, 0, Float64Array, 3);
    assert.notEqual(copied.buffer, shifted.buffer);
    assert.deepEqual(Array.from(copied), Array.from(values));
  });

  test('the first request after a restart waits for the saved file to be read back, not for SQL', async () => {
    const sql = new SqlReportEngine(database.db);
    let fallbacks = 0;
    const events: SnapshotEvent[] = [];
    const engine = new ColumnarReportEngine(
      database.db,
      { run: (plan, signal) => (fallbacks++, sql.run(plan, signal)) },
      // Shorter than reading any file back: SQL would answer were it not for the file.
      { memoryBudgetBytes: 64 << 20, buildWaitMs: 1, snapshotDir: dir, onEvent: (e) => events.push(e) },
    );
    const plan = planReport(
      {
        dimensions: ['date'],
        metrics: ['orders', 'net_revenue', 'new_customers', 'returning_customers'],
        from: '2025-01-01',
        to: '2025-02-28',
        timezone: 'Europe/Paris',
        limit: 1000,
        ...NO_EXTENSIONS,
      },
      { id: organizationId, settings: { excludedStatuses: ['refunded'], deductions: ['refunds'] } },
    );
    assert.deepStrictEqual(await engine.run(plan), await sql.run(plan));
    assert.deepEqual(
      events.map((e) => e.event),
      ['loaded'],
    );
    assert.equal(fallbacks, 0);
  });

  test('issue 26, item 8: a save killed with SIGKILL leaves its temporary file; the next start removes it, not a running process’s', async () => {
    // A real process starts a save's file as saveSnapshot names it, and is killed mid-write.
    const persist = new URL('../../src/metrics/columnar/persist.js', import.meta.url).href;
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import fs from 'node:fs'; import { temporaryFileOf } from ${JSON.stringify(persist)};
         const handle = fs.openSync(temporaryFileOf(process.argv[1]), 'w', 0o600);
         fs.writeSync(handle, Buffer.alloc(1 << 16)); process.stdout.write('writing\\n');
         setInterval(() => fs.writeSync(handle, Buffer.alloc(1 << 10)), 5);`,
        file,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await once(child.stdout, 'data');
    child.kill('SIGKILL');
    await once(child, 'exit');
    const killed = fs.readdirSync(dir).filter((name) => name.includes(`.${child.pid}-t`));
    assert.equal(killed.length, 1, 'the killed save left its file');
    const ours = temporaryFileOf(file); // a save of this (running) process, as another instance's would be
    fs.writeFileSync(ours, 'in progress');
    new ColumnarReportEngine(database.db, new SqlReportEngine(database.db), {
      memoryBudgetBytes: 64 << 20,
      snapshotDir: dir,
    });
    assert.deepEqual(fs.readdirSync(dir).sort(), [path.basename(file), path.basename(ours)].sort());
    fs.rmSync(ours);
  });

  test('issue 26, item 8: a stop drops a save in progress and leaves no temporary file', async () => {
    const stopDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-snapshot-stop-'));
    try {
      const identity = (await identityOf(database.db, organizationId))!;
      const stop = new AbortController();
      const saving = saveSnapshot(stopDir, identity, built, stop.signal);
      stop.abort();
      await assert.rejects(saving);
      assert.deepEqual(fs.readdirSync(stopDir), []);
      // The engine's stop: its background save (after the build) finished or dropped, never half.
      const engine = new ColumnarReportEngine(database.db, new SqlReportEngine(database.db), {
        memoryBudgetBytes: 64 << 20,
        snapshotDir: stopDir,
      });
      const plan = planReport(
        {
          dimensions: [],
          metrics: ['orders'],
          from: '2025-01-01',
          to: '2025-02-28',
          timezone: 'UTC',
          limit: 10,
          ...NO_EXTENSIONS,
        },
        { id: organizationId, settings: { excludedStatuses: [], deductions: [] } },
      );
      await engine.run(plan);
      await engine.close();
      assert.deepEqual(
        fs.readdirSync(stopDir).filter((name) => name.endsWith('.tmp')),
        [],
      );
    } finally {
      fs.rmSync(stopDir, { recursive: true, force: true });
    }
  });

  test('issue 28: a server reads the saved file back before it listens, so its first report finds the snapshot', async () => {
    const lines: string[] = [];
    const app = await buildApp(
      // Over the test database's own configuration (its secret key is read when first used).
      Object.create(database.config, {
        reportSnapshotDir: { value: dir },
        reportWarmIntervalMs: { value: 60_000 },
      }) as Config,
      { db: database.db, logger: { write: (line: string) => lines.push(line) } },
    );
    try {
      await app.ready(); // what listen() waits for before it binds
      const loaded = lines
        .map((line) => JSON.parse(line) as { msg?: string; event?: string; organizationId?: string })
        .filter((l) => l.msg === 'report snapshot' && l.event === 'loaded');
      assert.deepEqual(
        loaded.map((l) => l.organizationId),
        [organizationId],
      );
    } finally {
      await app.close();
    }
  });

  test('another format version, a damaged byte or a file cut short is ignored', async () => {
    const saved = fs.readFileSync(file);
    const attempt = async (bytes: Buffer) => {
      fs.writeFileSync(file, bytes);
      return loadSnapshot(database.db, dir, organizationId);
    };
    const resealed = (bytes: Buffer) => {
      bytes.writeUInt32LE(zlib.crc32(bytes.subarray(0, bytes.length - 4)), bytes.length - 4);
      return bytes;
    };
    try {
      // Format 1 (SHA-256) under the format's own magic and header, checksum right for this format.
      const json = saved.readUInt32LE(8);
      const header = saved
        .toString('utf8', 12, 12 + json)
        .replace(`"format":${SNAPSHOT_FORMAT}`, '"format":1');
      assert.equal(header.length, json);
      assert.notEqual(header, saved.toString('utf8', 12, 12 + json), 'the header names another format');
      const older = Buffer.from(saved);
      older.write(header, 12, 'utf8');
      assert.equal(await attempt(resealed(older)), undefined);
      const magic = Buffer.from(saved);
      magic[7] = 1;
      assert.equal(await attempt(resealed(magic)), undefined);
      const damaged = Buffer.from(saved);
      damaged[saved.length - 100] = damaged[saved.length - 100]! ^ 0x10; // in the codes, past the columns
      assert.equal(await attempt(damaged), undefined);
      // In an order's total (the columns, checksummed as they are read, issue 28): a wrong figure.
      const total = columnAt(saved, 'total');
      const wrongTotal = Buffer.from(saved);
      wrongTotal[total] = wrongTotal[total]! ^ 0x01;
      assert.equal(await attempt(wrongTotal), undefined);
      // An order's attribute code past the codes, checksum right: the consistency checks refuse it.
      const unknown = Buffer.from(saved);
      unknown.writeInt32LE(1_000_000, columnAt(saved, 'attribute'));
      assert.equal(await attempt(resealed(unknown)), undefined);
      assert.equal(await attempt(resealed(Buffer.from(saved.subarray(0, saved.length >> 1)))), undefined);
      assert.equal(await attempt(saved.subarray(0, 10)), undefined);
      // A header that says more bytes than the file holds, checksum right: still ignored.
      const lying = Buffer.from(saved);
      lying.writeUInt32LE(saved.length, 8);
      assert.equal(await attempt(resealed(lying)), undefined);
      assert.ok(await attempt(saved), 'the file as saved is read back');
    } finally {
      fs.writeFileSync(file, saved);
    }
  });

  test('issue 28: a file read back behind the database is brought up to date; a rebuild does not read it back again; a command leaves it current', async () => {
    const stale = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-snapshot-stale-'));
    try {
      const id = (await createOrganization(database.db, { name: 'En retard' })).id;
      await importOrderRecords(database.db, id, orders);
      const first = await buildSnapshot(database.db, id, { maxBytes: 64 << 20 });
      assert.ok(first && !('reason' in first));
      await saveSnapshot(stale, (await identityOf(database.db, id))!, first);
      const more = (n: number, prefix: string) =>
        orders.slice(0, n).map((o) => ({ ...o, id: `${prefix}${o.id}` }));
      const prepared = async (maxDeltaOrders: number) => {
        const events: SnapshotEvent[] = [];
        const engine = new ColumnarReportEngine(database.db, new SqlReportEngine(database.db), {
          memoryBudgetBytes: 64 << 20,
          snapshotDir: stale,
          maxDeltaOrders,
          onEvent: (e) => events.push(e),
        });
        await engine.prepare(id, undefined, { save: true });
        const held = engine.heldOrders(id);
        await engine.close();
        return { events: events.map((e) => e.event), held };
      };
      // 50 orders more, past a delta of 10: rebuilt from the database, the stale file not read again.
      await importOrderRecords(database.db, id, more(50, 'a'));
      const rebuilt = await prepared(10);
      assert.equal(rebuilt.held, orders.length + 50);
      // On PostgreSQL the build saves under its advisory lock, before its event (several instances).
      assert.deepEqual(
        rebuilt.events.filter((e) => e !== 'saved'),
        ['loaded', 'built'],
      );
      assert.equal(
        rebuilt.events.filter((e) => e === 'saved').length,
        1,
        `saved once: ${rebuilt.events.join(', ')}`,
      );
      // 5 more, within a delta: brought up to date, then saved (one part) by the command's prepare.
      await importOrderRecords(database.db, id, more(5, 'b'));
      const updated = await prepared(1_000);
      assert.deepEqual(updated.held, orders.length + 55);
      assert.deepEqual(
        updated.events.filter((e) => e !== 'compacted'),
        ['loaded', 'updated', 'saved'],
      );
      assert.equal(
        (await loadSnapshot(database.db, stale, id))?.heldOrders,
        orders.length + 55,
        'the file is current',
      );
    } finally {
      fs.rmSync(stale, { recursive: true, force: true });
    }
  });
});
