// SPEC section 15, L1 and L8: order lines imported into order_lines, on the run's engine (embedded
// PGlite or a PostgreSQL server): NDJSON and CSV round trips, every bound's error, re-imports that
// replace lines wholly (I2), the CSV layout's conflicts, an order of 1,000 lines.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { importOrderFile, importOrderStream, type ImportResult } from '../../src/ingest/import.js';
import type { Database } from '../../src/db/database.js';

let t: TestDatabase;
let db: Database;
let slugs = 0;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-lines-'));

before(async () => {
  t = await openTestDatabase();
  db = t.db;
});
after(async () => {
  await t.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function organization(): Promise<string> {
  const [row] = await db.query<{ id: string }>(
    'INSERT INTO organizations (slug, name) VALUES ($1, $2) RETURNING id',
    [`lines-${++slugs}`, 'Lines'],
  );
  return row!.id;
}

const STORE = 'https://boutique.example';

/** An order with the given lines (undefined: no `lines` field). */
function order(id: string, lines?: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    store: STORE,
    id,
    created_at: '2026-03-01T10:00:00Z',
    status: 'completed',
    items: 3,
    total: '42.00',
    ...(lines === undefined ? {} : { lines }),
    ...extra,
  };
}

const TEA = {
  line_id: 'l1',
  product_id: 12,
  variant_id: '34',
  sku: 'THE-VERT-100',
  product_name: 'Thé vert « Sencha »\tbio',
  variant_name: '100 g',
  categories: ['Thés', 'Bio\\Équitable'],
  quantity: 2,
  subtotal: '20.00',
  discount: 2.5,
  refunded_quantity: 1,
  refunded_amount: '8.75',
};
const MUG = { line_id: 'l2', product_name: 'Mug', quantity: '1', subtotal: 12 };

/** What order_lines holds for TEA and MUG, in that order. */
const STORED = [
  {
    external_id: 'A',
    line_id: 'l1',
    position: 0,
    product_id: '12',
    variant_id: '34',
    sku: 'THE-VERT-100',
    product_name: 'Thé vert « Sencha »\tbio',
    variant_name: '100 g',
    categories: ['Thés', 'Bio\\Équitable'],
    quantity: 2,
    subtotal: '20.00',
    discount: '2.50',
    refunded_quantity: 1,
    refunded_amount: '8.75',
  },
  {
    external_id: 'A',
    line_id: 'l2',
    position: 1,
    product_id: null,
    variant_id: null,
    sku: null,
    product_name: 'Mug',
    variant_name: null,
    categories: [],
    quantity: 1,
    subtotal: '12.00',
    discount: '0.00',
    refunded_quantity: 0,
    refunded_amount: '0.00',
  },
];

async function storedLines(organizationId: string): Promise<Record<string, unknown>[]> {
  return db.query(
    `SELECT external_id, line_id, position, product_id, variant_id, sku, product_name, variant_name,
            categories, quantity, subtotal::text, discount::text, refunded_quantity, refunded_amount::text
     FROM order_lines WHERE organization_id = $1 ORDER BY external_id, position`,
    [organizationId],
  );
}

const ndjson = (orders: unknown[]): string => orders.map((o) => JSON.stringify(o)).join('\n') + '\n';

function importText(organizationId: string, text: string, format: 'ndjson' | 'csv', skipInvalid = false) {
  return importOrderStream(db, organizationId, Readable.from([text]), format, { skipInvalid });
}

/** Imports through a file, as the CLI does (on a server: written while read, stream-merge.ts). */
function importFile(organizationId: string, name: string, text: string): Promise<ImportResult> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return importOrderFile(db, organizationId, file);
}

const dataVersion = async (organizationId: string): Promise<number> =>
  Number(
    (
      await db.query<{ v: string }>('SELECT data_version AS v FROM organizations WHERE id = $1', [
        organizationId,
      ])
    )[0]!.v,
  );

test('L1: NDJSON lines go into order_lines exactly, in their order; an order without lines has none', async () => {
  const org = await organization();
  const result = await importFile(org, 'a.ndjson', ndjson([order('A', [TEA, MUG]), order('B')]));
  assert.equal(result.refused, false, JSON.stringify(result.errors));
  assert.deepEqual(await storedLines(org), STORED);
});

test('L1: the same through the shared staging of a connector page and a big file of its own table (I2 repeats: the last wins)', async () => {
  const org = await organization();
  const many = Array.from({ length: 1_200 }, (_, i) => order(`N${i}`, [{ ...MUG, line_id: `m${i}` }]));
  many.push(order('A', [MUG]), order('A', [TEA, MUG])); // repeated: the last line wins
  const result = await importText(org, ndjson(many), 'ndjson');
  assert.equal(result.imported, 1_201);
  const rows = await storedLines(org);
  assert.equal(rows.length, 1_202);
  assert.deepEqual(
    rows.filter((r) => r.external_id === 'A'),
    STORED,
  );
});

const CSV_HEADER =
  'store,id,created_at,status,items,total,line_id,product_id,variant_id,sku,product_name,variant_name,categories,quantity,subtotal,discount,refunded_quantity,refunded_amount';

test('L8: the one-row-per-line CSV imports as the NDJSON does; order columns empty or equal after the first row', async () => {
  const org = await organization();
  const csv = [
    CSV_HEADER,
    `${STORE},A,2026-03-01T10:00:00Z,completed,3,42.00,l1,12,34,THE-VERT-100,"Thé vert « Sencha »\tbio",100 g,Thés|Bio\\Équitable,2,20.00,2.5,1,8.75`,
    `,,,,,,l2,,,,Mug,,,1,12,,,`,
    `${STORE},B,2026-03-01T10:00:00Z,completed,3,42.00,,,,,,,,,,,,`,
    `${STORE},C,2026-03-01T10:00:00Z,completed,3,42.00,c1,,,,Mug,,,1,12,,,`,
    `${STORE},C,2026-03-01T10:00:00Z,completed,,,c2,,,,Mug,,,1,12,,,`,
  ].join('\n');
  const result = await importText(org, csv, 'csv');
  assert.equal(result.refused, false, JSON.stringify(result.errors));
  assert.equal(result.imported, 3);
  const rows = await storedLines(org);
  assert.deepEqual(
    rows.filter((r) => r.external_id === 'A'),
    STORED,
  );
  assert.deepEqual(
    rows.filter((r) => r.external_id !== 'A').map((r) => [r.external_id, r.line_id, r.position]),
    [
      ['C', 'c1', 0],
      ['C', 'c2', 1],
    ],
  );
});

test('L8, I1: a next row contradicting the first, or a row without line among lines, rejects its row and its order', async () => {
  const org = await organization();
  const csv = [
    CSV_HEADER,
    `${STORE},A,2026-03-01T10:00:00Z,completed,3,42.00,a1,,,,Mug,,,1,12,,,`,
    `${STORE},A,2026-03-01T10:00:00Z,refunded,3,43.00,a2,,,,Mug,,,1,12,,,`,
    `${STORE},B,2026-03-01T10:00:00Z,completed,3,42.00,,,,,,,,,,,,`,
    `${STORE},B,,,,,b1,,,,Mug,,,1,12,,,`,
    `${STORE},C,2026-03-01T10:00:00Z,completed,3,42.00,c1,,,,Mug,,,1,12,,,`,
    `,,,,,,,,,,,,,,,,,`,
    `${STORE},C,,,,,c2,,,,Mug,,,0,12,,,`,
    `${STORE},D,2026-03-01T10:00:00Z,completed,3,42.00,d1,,,,Mug,,,1,12,,,`,
  ].join('\n');
  const result = await importText(org, csv, 'csv', true);
  assert.deepEqual(
    result.errors.map((e) => [e.line, e.field]),
    [
      [3, 'status'],
      [3, 'total'],
      [5, '(ligne)'],
      [8, 'lines[1].quantity'],
    ],
  );
  assert.match(
    result.errors[0]!.message,
    /« refunded » diffère de la première ligne de la commande \(ligne 2 : « completed »\)/,
  );
  assert.match(result.errors[2]!.message, /seule ligne de sa commande/);
  assert.equal(result.rejected, 3);
  assert.equal(result.imported, 1, 'only D');
  assert.deepEqual(
    (await storedLines(org)).map((r) => r.line_id),
    ['d1'],
  );
});

test('L1: every bound has its French error naming lines[k].field, k from 0', async () => {
  const org = await organization();
  const line = (fields: Record<string, unknown>) => ({ ...MUG, ...fields });
  const cases: [unknown, string, RegExp][] = [
    [line({ line_id: undefined }), 'lines[0].line_id', /champ obligatoire manquant/],
    [line({ line_id: 'x'.repeat(65) }), 'lines[0].line_id', /65 caractères, 64 au plus/],
    [line({ product_id: 'x'.repeat(65) }), 'lines[0].product_id', /64 au plus/],
    [line({ variant_id: 'x'.repeat(65) }), 'lines[0].variant_id', /64 au plus/],
    [line({ sku: 'x'.repeat(101) }), 'lines[0].sku', /100 au plus/],
    [line({ product_name: '' }), 'lines[0].product_name', /champ obligatoire manquant/],
    [line({ product_name: 'x'.repeat(501) }), 'lines[0].product_name', /500 au plus/],
    [line({ variant_name: 'x'.repeat(501) }), 'lines[0].variant_name', /500 au plus/],
    [line({ categories: 'Thés' }), 'lines[0].categories', /liste de catégories attendue/],
    [
      line({ categories: Array.from({ length: 21 }, (_, i) => `c${i}`) }),
      'lines[0].categories',
      /21 catégories, 20 au plus/,
    ],
    [
      line({ categories: ['a', 'x'.repeat(201)] }),
      'lines[0].categories',
      /catégorie 2 : texte trop long : 201 caractères, 200 au plus/,
    ],
    [line({ categories: ['a', 'a'] }), 'lines[0].categories', /« a » en double/],
    [line({ categories: ['a', ''] }), 'lines[0].categories', /catégorie 2 : champ obligatoire manquant/],
    [line({ quantity: 0 }), 'lines[0].quantity', /entier de 1 à 1\u202f000\u202f000/],
    [line({ quantity: 1_000_001 }), 'lines[0].quantity', /entier de 1 à 1\u202f000\u202f000/],
    [line({ quantity: 1.5 }), 'lines[0].quantity', /entier de 1 à 1\u202f000\u202f000/],
    [line({ subtotal: undefined }), 'lines[0].subtotal', /champ obligatoire manquant/],
    [line({ subtotal: '-1' }), 'lines[0].subtotal', /nombre décimal ≥ 0/],
    [line({ discount: '1.234' }), 'lines[0].discount', /au plus 2 décimales/],
    [line({ discount: '12.01' }), 'lines[0].discount', /remise \(12.01\) supérieure au sous-total \(12.00\)/],
    [line({ refunded_quantity: 2 }), 'lines[0].refunded_quantity', /entier de 0 à quantity/],
    [
      line({ refunded_amount: '10.01', discount: '2' }),
      'lines[0].refunded_amount',
      /supérieur au sous-total moins la remise/,
    ],
    ['Mug', 'lines[0]', /objet attendu/],
  ];
  const orders = cases.map(([bad], i) => order(`E${i}`, [bad]));
  orders.push(
    order(
      'T',
      Array.from({ length: 1_001 }, (_, i) => ({ ...MUG, line_id: `t${i}` })),
    ),
  );
  orders.push(order('U', [MUG, MUG]));
  orders.push(order('V', { line_id: 'x' } as unknown as unknown[]));
  orders.push(
    order(
      'W',
      [MUG, MUG, { ...MUG, line_id: 'w', quantity: -1 }].map((l, i) =>
        i === 1 ? { ...l, line_id: 'l3' } : l,
      ),
    ),
  );
  const result = await importText(org, ndjson(orders), 'ndjson');
  assert.equal(result.refused, true);
  assert.equal(await storedLines(org).then((r) => r.length), 0, 'I1: nothing written');
  const byLine = new Map(result.errors.map((e) => [e.line, e]));
  cases.forEach(([, field, message], i) => {
    const error = byLine.get(i + 1);
    assert.equal(error?.field, field, `case ${i}`);
    assert.match(error!.message, message, `case ${i}`);
  });
  assert.deepEqual(
    result.errors
      .filter((e) => e.line > cases.length)
      .map((e) => [e.line - cases.length, e.field, e.message.replaceAll('\u202f', ' ')]),
    [
      [1, 'lines', '1 001 lignes, 1 000 au plus par commande'],
      [2, 'lines[1].line_id', 'line_id « l2 » en double (déjà en lines[0])'],
      [3, 'lines', 'tableau de lignes attendu, reçu « {"line_id":"x"} »'],
      [4, 'lines[2].quantity', 'quantité invalide « -1 » : entier de 1 à 1 000 000 attendu'],
    ],
  );
});

test('I2, L1: a re-import replaces lines wholly; a change only in lines stamps the order and moves data_version; the same file moves nothing', async () => {
  const org = await organization();
  // Into an organization with orders: the upsert's plan (merge.ts mergeIntoExisting).
  await importText(org, ndjson([order('Z')]), 'ndjson');
  await importText(org, ndjson([order('A', [TEA, MUG]), order('B', [MUG]), order('C', [MUG])]), 'ndjson');
  const stamp = async () =>
    db.query<{ id: string; x: string }>(
      `SELECT external_id AS id, change_xid::text AS x FROM orders WHERE organization_id = $1 ORDER BY 1`,
      [org],
    );
  const before = await stamp();
  const version = await dataVersion(org);
  // The same file again: nothing rewritten.
  const same = await importText(
    org,
    ndjson([order('A', [TEA, MUG]), order('B', [MUG]), order('C', [MUG])]),
    'ndjson',
  );
  assert.equal(same.updated, 3);
  assert.deepEqual(await stamp(), before);
  assert.equal(await dataVersion(org), version, 'nothing changed: no new data version');
  // A: a line's refund changes (only that); B: `lines` absent, its line goes; C: amount 12 = 12.00, unchanged.
  const changed = { ...MUG, refunded_quantity: 1, refunded_amount: '5.00' };
  await importText(
    org,
    ndjson([order('A', [TEA, changed]), order('B'), order('C', [{ ...MUG, subtotal: '12.00' }])]),
    'ndjson',
  );
  const after = await stamp();
  assert.notEqual(after.find((r) => r.id === 'A')!.x, before.find((r) => r.id === 'A')!.x, 'A stamped');
  assert.notEqual(after.find((r) => r.id === 'B')!.x, before.find((r) => r.id === 'B')!.x, 'B stamped');
  assert.equal(after.find((r) => r.id === 'C')!.x, before.find((r) => r.id === 'C')!.x, 'C left alone');
  assert.equal(await dataVersion(org), version + 1);
  const retired = await db.query<{ id: string }>(
    'SELECT external_id AS id FROM order_retirements WHERE organization_id = $1 ORDER BY 1',
    [org],
  );
  assert.deepEqual(
    retired.map((r) => r.id),
    ['A', 'B'],
    'one retirement each (migration 016)',
  );
  const rows = await storedLines(org);
  assert.deepEqual(
    rows.map((r) => [r.external_id, r.line_id, r.refunded_amount]),
    [
      ['A', 'l1', '8.75'],
      ['A', 'l2', '5.00'],
      ['C', 'l2', '0.00'],
    ],
  );
  // Lines reordered and one replaced by another id: stored as sent, positions included.
  await importText(org, ndjson([order('A', [{ ...MUG, line_id: 'n' }, TEA])]), 'ndjson');
  assert.deepEqual(
    (await storedLines(org)).filter((r) => r.external_id === 'A').map((r) => [r.line_id, r.position]),
    [
      ['n', 0],
      ['l1', 1],
    ],
  );
});

test('L1: an order of 1,000 lines (over 64 KiB as one NDJSON line) imports, from a file as the CLI reads it', async () => {
  const org = await organization();
  const lines = Array.from({ length: 1_000 }, (_, i) => ({
    line_id: `ligne-${i}`,
    product_id: `${1000 + i}`,
    sku: `SKU-${i}`,
    product_name: `Produit numéro ${i} du catalogue`,
    categories: ['Maison', 'Cuisine'],
    quantity: 1 + (i % 3),
    subtotal: '19.90',
    discount: '1.00',
  }));
  const text = ndjson([order('BIG', lines)]);
  assert.ok(Buffer.byteLength(text) > 110_000);
  const result = await importFile(org, 'big.ndjson', text);
  assert.equal(result.refused, false, JSON.stringify(result.errors.slice(0, 3)));
  const [row] = await db.query<{ n: number; q: number; last: string }>(
    `SELECT count(*)::int AS n, sum(quantity)::int AS q, max(position)::int || '' AS last FROM order_lines WHERE organization_id = $1`,
    [org],
  );
  assert.deepEqual(row, { n: 1_000, q: 1_999, last: '999' });
});

test('migration 018: deleting an order deletes its lines; a line of no order is refused (23503), as a foreign key would', async () => {
  const org = await organization();
  await importText(org, ndjson([order('A', [TEA, MUG]), order('B', [MUG])]), 'ndjson');
  await db.query(`DELETE FROM orders WHERE organization_id = $1 AND external_id = 'A'`, [org]);
  assert.deepEqual(
    (await storedLines(org)).map((r) => r.external_id),
    ['B'],
  );
  await assert.rejects(
    db.query(
      `INSERT INTO order_lines (organization_id, store_id, external_id, line_id, position, product_name, quantity, subtotal)
       SELECT organization_id, store_id, 'nowhere', 'x', 0, 'Mug', 1, 1 FROM orders WHERE organization_id = $1`,
      [org],
    ),
    (error: { code?: string }) => error.code === '23503',
  );
});
