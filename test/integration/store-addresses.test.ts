// Issue 18, finding 5: one store per address whatever its spelling, and no credentials in an
// address, at every entry (file import, `store add` and the Boutiques form, the connector's
// connect form and command); migration 014 rewrites and merges the addresses stored before.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { openDatabase } from '../../src/db/database.js';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { schemaIsCurrent } from '../../src/db/schema-version.js';
import { AppError } from '../../src/errors.js';
import { connectStore } from '../../src/domain/store-connections.js';
import { createOrganization } from '../../src/domain/organizations.js';
import { addStore, listStores } from '../../src/domain/stores.js';
import { storeSyncSetup } from '../../src/ingest/connectors/registry.js';
import { importOrderFile, importOrderRecords } from '../../src/ingest/import.js';
import { engine, freshConfig } from '../helpers/database.js';

const order = (store: string, id: string, extra: Record<string, unknown> = {}) => ({
  store,
  id,
  created_at: '2026-03-01T10:00:00Z',
  status: 'completed',
  items: 1,
  total: '10.00',
  ...extra,
});

// One database for the file, made empty (another costs seconds of CPU): migration 014's test runs
// first, on the schema before 014, and leaves it migrated whole for the other tests (their own
// organizations), which check that first (schemaIsCurrent).
let config: Config;
let db: Database;
let drop: () => Promise<void>;
before(async () => {
  const fresh = await freshConfig();
  ({ config, drop } = fresh);
  db = await openDatabase(config, { role: 'server' });
});
after(async () => {
  await db?.close();
  await drop?.();
});

describe(`migration 014: addresses stored before (${engine})`, () => {
  test('finding 5: stores that are one are merged (the later version of a shared order kept), credentials dropped, the rest renamed', async () => {
    await migrate(
      db,
      readMigrations().filter((m) => m.version < 14),
    );
    const [row] = await db.query<{ id: string }>(
      `INSERT INTO organizations (slug, name, excluded_statuses) VALUES ('old', 'Old', ARRAY['cancelled']) RETURNING id`,
    );
    const org = row?.id ?? '';
    const store = async (address: string) =>
      (
        await db.query<{ id: string }>(
          'INSERT INTO stores (organization_id, address) VALUES ($1, $2) RETURNING id',
          [org, address],
        )
      )[0]?.id ?? '';
    const lower = await store('https://e.example.fr');
    const upper = await store('HTTPS://E.EXAMPLE.FR');
    const port = await store('https://E.example.fr:443');
    const secret = await store('https://user:pass@creds.example.fr');
    const idn = await store('https://Bücher.example');
    const text = await store('not a url');
    const put = (
      storeId: string,
      id: string,
      at: string,
      updated: string,
      customer: string,
      status = 'completed',
    ) =>
      db.query(
        `INSERT INTO orders (organization_id, store_id, external_id, created_at, status, customer, items, total, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 1, 10, $7)`,
        [org, storeId, id, at, status, customer, updated],
      );
    await put(lower, '1', '2026-03-05T00:00:00Z', '2026-03-05T00:00:00Z', 'c1');
    await put(upper, '1', '2026-03-01T00:00:00Z', '2026-03-06T00:00:00Z', 'c1'); // later written: wins
    await put(upper, '2', '2026-03-02T00:00:00Z', '2026-03-02T00:00:00Z', 'c2');
    await put(port, '2', '2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z', 'c2'); // older write: dropped
    await put(port, '3', '2026-03-03T00:00:00Z', '2026-03-03T00:00:00Z', 'c3');
    await put(secret, '9', '2026-03-09T00:00:00Z', '2026-03-09T00:00:00Z', 'c9');
    await db.query(
      `INSERT INTO customer_first_orders (organization_id, customer, first_order_at)
       SELECT organization_id, customer, min(created_at) FROM orders GROUP BY 1, 2`,
    );

    await migrate(db);

    assert.deepEqual(await listStores(db, org), [
      { address: 'https://creds.example.fr', orders: 1 },
      { address: 'https://e.example.fr', orders: 3 },
      { address: 'https://xn--bcher-kva.example', orders: 0 },
      { address: 'not a url', orders: 0 },
    ]);
    const ids = (
      await db.query<{ id: string }>(
        'SELECT id::text AS id FROM stores WHERE organization_id = $1 ORDER BY id',
        [org],
      )
    ).map((r) => r.id);
    assert.deepEqual(ids, [lower, secret, idn, text], 'the store already at the address keeps its id');
    const orders = await db.query<{ external_id: string; created_at: Date }>(
      `SELECT o.external_id, o.created_at FROM orders o JOIN stores s ON s.organization_id = o.organization_id AND s.id = o.store_id
       WHERE o.organization_id = $1 AND s.address = 'https://e.example.fr' ORDER BY 1`,
      [org],
    );
    assert.deepEqual(
      orders.map((o) => [o.external_id, o.created_at.toISOString()]),
      [
        ['1', '2026-03-01T00:00:00.000Z'],
        ['2', '2026-03-02T00:00:00.000Z'],
        ['3', '2026-03-03T00:00:00.000Z'],
      ],
    );
    const firsts = await db.query<{ customer: string; first_order_at: Date }>(
      'SELECT customer, first_order_at FROM customer_first_orders WHERE organization_id = $1 ORDER BY 1',
      [org],
    );
    assert.deepEqual(
      firsts.map((f) => [f.customer, f.first_order_at.toISOString()]),
      [
        ['c1', '2026-03-01T00:00:00.000Z'],
        ['c2', '2026-03-02T00:00:00.000Z'], // the dropped version's February date is gone (U2)
        ['c3', '2026-03-03T00:00:00.000Z'],
        ['c9', '2026-03-09T00:00:00.000Z'],
      ],
    );
    assert.deepEqual(await db.query('SELECT * FROM store_address_pending'), [], 'done once');
    assert.deepEqual(await migrate(db), [], 'nothing left to apply');
  });
});

describe(`store addresses (${engine})`, () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-addresses-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('finding 5, issue 28: a start or a command migrates again while 014 has addresses left (a run killed midway)', async () => {
    // serve and the commands run migrate() only when schemaIsCurrent() says so (one statement).
    assert.equal(await schemaIsCurrent(db), true);
    const org = await createOrganization(db, { name: 'Interrompue' });
    await db.query('INSERT INTO store_address_pending (organization_id) VALUES ($1)', [org.id]);
    assert.equal(await schemaIsCurrent(db), false, 'the rest of the rewrite is still to do');
    await migrate(db);
    assert.equal(await schemaIsCurrent(db), true);
  });

  test('finding 5: a file naming one store in several spellings imports into one store', async () => {
    const org = await createOrganization(db, { name: 'Orthographes' });
    const file = path.join(dir, 'spellings.ndjson');
    fs.writeFileSync(
      file,
      [
        order('HTTPS://E.EXAMPLE.FR', '1'),
        order('https://e.example.fr/', '2'),
        order('https://E.Example.fr:443', '3'),
        order('https://Bücher.example/', '4'),
        order('https://xn--bcher-kva.example', '5'),
      ]
        .map((o) => JSON.stringify(o))
        .join('\n'),
    );
    const result = await importOrderFile(db, org.id, file);
    assert.equal(result.imported, 5, JSON.stringify(result.errors));
    assert.deepEqual(await listStores(db, org.id), [
      { address: 'https://e.example.fr', orders: 3 },
      { address: 'https://xn--bcher-kva.example', orders: 2 },
    ]);
    // The same order under another spelling is the same order (I2).
    const again = await importOrderRecords(db, org.id, [
      order('HTTPS://e.EXAMPLE.fr/', '1', { total: '12.00' }),
    ]);
    assert.equal(again.updated, 1);
  });

  test('finding 5: an address with credentials is refused by the import, with its line and without them', async () => {
    const org = await createOrganization(db, { name: 'Identifiants' });
    const file = path.join(dir, 'credentials.ndjson');
    fs.writeFileSync(
      file,
      [order('https://ok.example.fr', '1'), order('https://admin:s3cret@e.example.fr/', '2')]
        .map((o) => JSON.stringify(o))
        .join('\n'),
    );
    const result = await importOrderFile(db, org.id, file);
    assert.equal(result.refused, true);
    assert.equal(result.errors.length, 1);
    const [error] = result.errors;
    assert.equal(error?.line, 2);
    assert.equal(error?.field, 'store');
    assert.match(
      error?.message ?? '',
      /^adresse de boutique invalide « https:\/\/e\.example\.fr » : identifiants/,
    );
    assert.doesNotMatch(JSON.stringify(result), /s3cret|admin/);
    assert.deepEqual(await listStores(db, org.id), [], 'I1: nothing written');
  });

  test('finding 5: store add (CLI and Boutiques form) stores the normalized address and refuses credentials', async () => {
    const org = await createOrganization(db, { name: 'Ajouts' });
    assert.equal(
      await addStore(db, org.id, 'HTTPS://Shop.Example.FR:443/Boutique/'),
      'https://shop.example.fr/Boutique',
    );
    await assert.rejects(addStore(db, org.id, 'https://shop.example.fr/Boutique'), {
      code: 'CONFLICT',
      message: 'Boutique déjà connectée : https://shop.example.fr/Boutique',
    });
    const refused = await addStore(db, org.id, 'https://me:hunter2@shop.example.fr').catch((e: unknown) => e);
    assert.ok(refused instanceof Error);
    assert.match(
      refused.message,
      /^Adresse de boutique invalide : « https:\/\/shop\.example\.fr » \(identifiants/,
    );
    assert.doesNotMatch(refused.message, /hunter2/);
    assert.equal((await listStores(db, org.id)).length, 1);
  });

  test('finding 5: the connector’s connect form and command refuse credentials before calling the store', async () => {
    const org = await createOrganization(db, { name: 'Connexions' });
    const refused = await connectStore(db, storeSyncSetup(config), {
      organizationId: org.id,
      platform: 'woocommerce',
      address: 'https://ck:cs@woo.example.fr',
      consumerKey: `ck_${'a'.repeat(40)}`,
      consumerSecret: `cs_${'b'.repeat(40)}`,
    }).catch((e: unknown) => e);
    assert.ok(refused instanceof AppError);
    assert.match(
      refused.message,
      /^Adresse de boutique invalide : « https:\/\/woo\.example\.fr » \(identifiants/,
    );
    assert.equal(refused.body.field, 'address');
  });
});
