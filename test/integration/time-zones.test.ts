// P5's zone list kept in an embedded database's DATA_DIR (issue 28): pg_timezone_names read once,
// then the file read back at each start, as long as it was written for the same PGlite and
// PostgreSQL; a file of another version, or damaged, is read from the database again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Queryable } from '../../src/db/database.js';
import { loadTimeZones, savedTimeZones } from '../../src/metrics/time-zones.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('the time zones kept in a file (issue 28, P5)', () => {
  let database: TestDatabase;
  let dir: string;
  /** The database's statements that read pg_timezone_names, counted. */
  let zoneReads = 0;
  let db: Pick<Queryable, 'query'>;

  before(async () => {
    database = await openTestDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-zones-'));
    db = {
      query: (sql, params, options) => {
        if (sql.includes('pg_timezone_names')) zoneReads++;
        return database.db.query(sql, params, options);
      },
    };
  });
  after(async () => {
    await database.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('read from the database once, then from the file; another version or a damaged file is read again', async () => {
    const file = path.join(dir, 'time-zones.json');
    const expected = await loadTimeZones(database.db);
    const same = (zones: Awaited<ReturnType<typeof loadTimeZones>>) => {
      assert.deepStrictEqual([...zones].sort(), [...expected].sort());
      assert.deepStrictEqual([...zones.beforeYear1].sort(), [...expected.beforeYear1].sort());
      assert.deepStrictEqual([...zones.afterYear9999].sort(), [...expected.afterYear9999].sort());
      assert.ok(zones.has('Europe/Paris') && !zones.has('posixrules'));
    };

    same(await savedTimeZones(db, file, '1.0.0'));
    assert.equal(zoneReads, 1);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'the file is private');
    same(await savedTimeZones(db, file, '1.0.0'));
    assert.equal(zoneReads, 1, 'read back from the file, not from the database');

    same(await savedTimeZones(db, file, '1.0.1'));
    assert.equal(zoneReads, 2, 'written for another PGlite: read from the database again');
    same(await savedTimeZones(db, file, '1.0.1'));
    assert.equal(zoneReads, 2);

    for (const damaged of ['{', '{"key":1}', JSON.stringify({ key: 'x', names: [] }), '']) {
      fs.writeFileSync(file, damaged);
      same(await savedTimeZones(db, file, '1.0.1'));
    }
    assert.equal(zoneReads, 6, 'each damaged file read from the database again');
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { names: string[] };
    fs.writeFileSync(file, JSON.stringify({ ...saved, names: 'Europe/Paris' }));
    same(await savedTimeZones(db, file, '1.0.1'));
    assert.equal(zoneReads, 7, 'names that are not a list of texts');
    const valid = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, valid + ' '.repeat(1 << 20));
    same(await savedTimeZones(db, file, '1.0.1'));
    assert.equal(zoneReads, 8, 'a file over its bound is not read');
    assert.ok(fs.statSync(file).size < 1 << 20, 'and is written again');
  });

  test('a link left where the file is written is not followed', async () => {
    const file = path.join(dir, 'linked.json');
    const target = path.join(dir, 'elsewhere.txt');
    fs.writeFileSync(target, 'untouched');
    fs.symlinkSync(target, `${file}.${process.pid}.tmp`);
    assert.ok((await savedTimeZones(db, file, '2.0.0')).has('Europe/Paris'));
    assert.equal(fs.readFileSync(target, 'utf8'), 'untouched');
    assert.ok(!fs.existsSync(`${file}.${process.pid}.tmp`), 'the link is removed');
    assert.ok(!fs.existsSync(file), 'nothing written this time');
    fs.rmSync(target);
  });

  test('a file that cannot be written changes nothing but the next start', async () => {
    const file = path.join(dir, 'missing-folder', 'time-zones.json');
    const before = zoneReads;
    assert.ok((await savedTimeZones(db, file, '1.0.0')).has('Europe/Paris'));
    assert.ok((await savedTimeZones(db, file, '1.0.0')).has('Europe/Paris'));
    assert.equal(zoneReads, before + 2);
    assert.deepStrictEqual(fs.readdirSync(dir).sort(), ['time-zones.json']);
  });
});
