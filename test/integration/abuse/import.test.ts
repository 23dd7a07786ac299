// Issue 7: order imports tried as an attacker and a careless user would (findings 1, 2, 13, and
// the upload bound), through the browser's form over real HTTP and through the CLI.
import { MAX_NDJSON_LINE_BYTES } from '../../../src/ingest/line-bounds.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { openDatabase } from '../../../src/db/database.js';
import { createOrganization, type Organization } from '../../../src/domain/organizations.js';
import { addUserToOrganization } from '../../../src/domain/users.js';
import { importOrderFile, importOrderStream, MAX_REPORTED_ERRORS } from '../../../src/ingest/import.js';
import { recoverInterruptedImports } from '../../../src/ingest/jobs.js';
import { importLinesTables } from '../../../src/ingest/staging.js';
import { migratedConfig, testOn } from '../../helpers/database.js';
import { BIN, runCli, startServer } from '../../helpers/processes.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { Client } from '../../helpers/web-client.js';

const VALID = {
  store: 'https://shop.example',
  id: '1',
  created_at: '2026-03-01T10:00:00Z',
  status: 'completed',
  items: 1,
  total: '10.00',
};

// Issue 18, finding 3: a NUL byte on a line of its own and a `\u0000` escape, between valid lines.
const NUL_LINES = [
  JSON.stringify({ ...VALID, id: 'n1' }),
  '\u0000',
  JSON.stringify({ ...VALID, id: 'n3', status: 'a\u0000b' }),
  JSON.stringify({ ...VALID, id: 'n4' }),
];
const CSV_ORDER =
  'store,id,created_at,status,items,total\nhttps://shop.example,c1,2026-03-01T10:00:00Z,ok,1,5\n';

describe('issue 7: imports', () => {
  let service: TestService;
  let org: Organization;
  let client: Client;
  let dir: string;
  const count = async (table: string) =>
    (
      await service.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1`,
        [org.id],
      )
    )[0]?.n;

  before(async () => {
    service = await startTestService({ IMPORT_MAX_BYTES: String(40 * 1024 * 1024) });
    org = await createOrganization(service.db, { name: 'Imports' });
    await addUserToOrganization(service.db, org.id, 'imports@example.com', 'long enough password');
    client = new Client(service.baseUrl);
    assert.equal((await client.login('imports@example.com')).status, 303);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'abuse-import-'));
  });
  after(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await service.cleanup();
  });

  /** Probes /healthz every 20 ms while `work` runs; the slowest answer, in ms. */
  async function slowestHealthCheck(work: () => Promise<unknown>): Promise<number> {
    let running = true;
    let slowest = 0;
    const probes = (async () => {
      while (running) {
        const started = performance.now();
        await (await fetch(`${service.baseUrl}/healthz`)).arrayBuffer();
        slowest = Math.max(slowest, performance.now() - started);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      await work();
    } finally {
      running = false;
      await probes;
    }
    return slowest;
  }

  const upload = async (name: string, content: Blob) =>
    client.upload(
      '/settings/stores/import',
      { _csrf: await client.token('/settings/stores') },
      { name, content },
    );

  /** The job page an upload was sent to, once the job has ended (it refreshes itself until then). */
  async function finishedJob(answer: Response, as = client): Promise<{ status: number; page: string }> {
    assert.equal(answer.status, 303, await answer.clone().text());
    const location = answer.headers.get('location') ?? '';
    assert.match(location, /^\/settings\/stores\/imports\/[0-9a-f-]{36}$/);
    for (let i = 0; i < 600; i++) {
      const response = await as.get(location);
      const page = await response.text();
      if (!page.includes('http-equiv="refresh"')) return { status: response.status, page };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the job never ended');
  }

  test('finding 1, L1: a line over the NDJSON bound (1,000 of the longest lines, 30 MiB) through the browser is refused as that line’s error; /healthz keeps answering; nothing is written', async (t) => {
    const line = `{"store":"https://shop.example","id":"big","status":"${'x'.repeat(MAX_NDJSON_LINE_BYTES)}"}`;
    // The line in 64 KiB parts, as a browser reads a file: the client shares this process with the
    // server, and undici sends a Blob's part in one synchronous copy (a single 30 MiB part held
    // this process's event loop 0.3–0.4 s, and 0.6–0.8 s on a loaded host, which the probes below
    // then blamed on the server).
    const parts: string[] = [];
    for (let at = 0; at < line.length; at += 65_536) parts.push(line.slice(at, at + 65_536));
    const file = new Blob([
      `${JSON.stringify(VALID)}\n`,
      ...parts,
      `\n${JSON.stringify({ ...VALID, id: '3' })}\n`,
    ]);
    let response: Response | undefined;
    const started = performance.now();
    const slowest = await slowestHealthCheck(async () => {
      response = await upload('long.ndjson', file);
    });
    const seconds = (performance.now() - started) / 1000;
    const { status, page } = await finishedJob(response!);
    assert.equal(status, 422);
    assert.match(page, /<td>2<\/td>\s*<td>\(ligne\)<\/td>\s*<td>ligne trop longue : 30 Mio au plus<\/td>/);
    assert.ok(page.length < 100_000, 'the answer does not echo the line');
    t.diagnostic(
      `31 MB line: answered and refused in ${seconds.toFixed(1)} s, slowest /healthz ${slowest.toFixed(0)} ms`,
    );
    // The finding was a freeze of 37–75 s (/healthz waiting up to 11 s). The server shares this
    // process with the client building and sending 31 MB, and CI's two cores with everything else,
    // so the bound catches a freeze, not a figure: quiet runs print 13–78 ms, runs beside three busy
    // processes 24–208 ms (with the line in one part: 36–798 ms, and 619 ms in one CI run).
    assert.ok(slowest < 500, `slowest /healthz ${slowest.toFixed(0)} ms`);
    assert.ok(seconds < 10, `${seconds.toFixed(1)} s`);
    assert.equal(await count('orders'), 0);
    assert.equal(await count('import_staging'), 0);
  });

  test('upload names: a wrong extension names the expected ones; a name of 100,000 characters is refused as too long, not as a wrong extension', async () => {
    const wrong = await upload('commandes.xlsx', new Blob([JSON.stringify(VALID)]));
    assert.equal(wrong.status, 400);
    assert.match(
      await wrong.text(),
      /Fichier « commandes\.xlsx » : extension \.ndjson, \.jsonl ou \.csv attendue/,
    );
    const long = await upload(`${'a'.repeat(100_000)}.ndjson`, new Blob([JSON.stringify(VALID)]));
    assert.equal(long.status, 400);
    const text = await long.text();
    assert.match(
      text,
      /Nom de fichier trop long \([\d\u202f ]+ caractères, 255 au plus\) : renommez le fichier/,
    );
    assert.ok(text.length < 10_000, 'the answer does not echo the name');
    assert.equal(await count('orders'), 0);
  });

  test('finding 1: a file over IMPORT_MAX_BYTES is refused in French and nothing is written', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 120_000; i++) lines.push(JSON.stringify({ ...VALID, id: `big-${i}` }));
    const file = new Blob([lines.join('\n')]);
    assert.ok(file.size > (30 * 1024 * 1024) / 3, 'a file of several megabytes');
    const small = await startTestService({ IMPORT_MAX_BYTES: String(1024 * 1024) });
    try {
      const other = await createOrganization(small.db, { name: 'Petit' });
      await addUserToOrganization(small.db, other.id, 'small@example.com', 'long enough password');
      const browser = new Client(small.baseUrl);
      await browser.login('small@example.com');
      const response = await browser.upload(
        '/settings/stores/import',
        { _csrf: await browser.token('/settings/stores') },
        { name: 'big.ndjson', content: file },
      );
      assert.equal(response.status, 413, 'refused before any job is queued');
      assert.match(await response.text(), /Fichier trop volumineux : 1 Mio au plus/);
      const orders = await small.db.query('SELECT 1 FROM orders LIMIT 1');
      assert.equal(orders.length, 0);
      assert.equal((await small.db.query('SELECT 1 FROM import_staging LIMIT 1')).length, 0);
    } finally {
      await small.cleanup();
    }
  });

  test('finding 2: a file of millions of errors keeps the first 1,000 and a count, in flat memory', async (t) => {
    const lines = 1_000_000; // `{}`: six missing fields a line, 3 bytes a line
    const input = Readable.from(
      (function* () {
        // Large blocks: every line of a block is already read, so only the import itself can give
        // the event loop a turn while it validates them.
        const block = Buffer.from('{}\n'.repeat(250_000));
        for (let sent = 0; sent < lines; sent += 250_000) yield block;
      })(),
    );
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    let heapPeak = heapBefore;
    let lastTick = performance.now();
    let longestGap = 0;
    const ticks = setInterval(() => {
      longestGap = Math.max(longestGap, performance.now() - lastTick);
      lastTick = performance.now();
    }, 5);
    const result = await importOrderStream(service.db, org.id, input, 'ndjson', {
      onProgress: () => (heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)),
    }).finally(() => clearInterval(ticks));
    t.diagnostic(`${lines} bad lines: the event loop waited ${longestGap.toFixed(0)} ms at most`);
    // Without turns given during validation, a block of 250,000 lines holds the loop for ~1 s.
    assert.ok(longestGap < 250, `the event loop waited ${longestGap.toFixed(0)} ms`);
    assert.equal(result.refused, true);
    assert.equal(result.rejected, lines);
    assert.equal(result.errors.length, MAX_REPORTED_ERRORS);
    assert.equal(result.errorCount, 6 * lines);
    t.diagnostic(
      `${lines} bad lines: heap grew by ${((heapPeak - heapBefore) / 1024 ** 2).toFixed(0)} MB at most`,
    );
    assert.ok(
      heapPeak - heapBefore < 150 * 1024 ** 2,
      `heap grew by ${((heapPeak - heapBefore) / 1024 ** 2).toFixed(0)} MB`,
    );
    assert.equal(await count('import_staging'), 0);
  });

  test('finding 2: the CLI lists the first 1,000 errors and says how many more', async () => {
    const file = path.join(dir, 'empty-objects.ndjson');
    fs.writeFileSync(file, '{}\n'.repeat(50_000));
    const env: Record<string, string> = service.config.databaseUrl
      ? { DATABASE_URL: service.config.databaseUrl, SECRET_KEY: service.config.secretKey.toString('hex') }
      : { DATA_DIR: service.config.dataDir };
    const cli = await runCli(['import', '--org', org.slug, file], env);
    assert.equal(cli.code, 1, cli.stderr);
    const listed = cli.stderr.split('\n').filter((l) => l.startsWith(`${file}:`));
    assert.equal(listed.length, MAX_REPORTED_ERRORS);
    assert.match(cli.stderr, /… et 299000 autres erreurs/);
    assert.match(cli.stdout, /0 commandes importées, 0 remplacées, 50000 lignes refusées/);
  });

  test('finding 13: Latin-1 bytes, a column twice, an unclosed quote and a formula as store are refused, each on its line', async () => {
    const cases: [string, Buffer | string, number, RegExp][] = [
      [
        'latin1.ndjson',
        Buffer.concat([
          Buffer.from(`${JSON.stringify(VALID)}\n{"store":"https://shop.example","id":"2","status":"r`),
          Buffer.from([0xe9]),
          Buffer.from('gl"}\n'),
        ]),
        2,
        /UTF-8/,
      ],
      ['twice.csv', 'store,id,created_at,status,items,total,total\n', 1, /« total » en double/],
      [
        'quote.csv',
        'store,id,created_at,status,items,total\nhttps://shop.example,1,2026-03-01T10:00:00Z,"open,1,10.00\nhttps://shop.example,2,2026-03-01T10:00:00Z,ok,1,10.00\n',
        2,
        /guillemet|quote|CSV illisible/i,
      ],
      [
        'formula.ndjson',
        `${JSON.stringify({ ...VALID, store: '=HYPERLINK("https://evil.example","clic")' })}\n`,
        1,
        /adresse de boutique invalide .* URL http\(s\) attendue/,
      ],
    ];
    for (const [name, content, line, message] of cases) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, content);
      const result = await importOrderFile(service.db, org.id, file);
      assert.equal(result.refused, true, name);
      const error = result.errors.find((e) => e.line === line);
      assert.ok(error, `${name}: an error on line ${line}: ${JSON.stringify(result.errors)}`);
      assert.match(error.message, message, name);
      const lines = String(content).split('\n').length;
      assert.ok(
        result.errors.every((e) => e.line >= 1 && e.line <= lines),
        `${name}: lines the file has`,
      );
    }
    assert.equal(await count('orders'), 0);
    assert.equal(await count('stores'), 0);
  });

  test('issue 18, finding 3: uploads with NUL lines or in UTF-16, with and without « importer les lignes valides »: the job page says what was written', async () => {
    const nulOrg = await createOrganization(service.db, { name: 'Nul' });
    await addUserToOrganization(service.db, nulOrg.id, 'nul@example.com', 'long enough password');
    const browser = new Client(service.baseUrl);
    await browser.login('nul@example.com');
    const send = async (name: string, content: Blob, skipInvalid: boolean) =>
      finishedJob(
        await browser.upload(
          '/settings/stores/import',
          {
            _csrf: await browser.token('/settings/stores'),
            ...(skipInvalid ? { skip_invalid: '1' } : {}),
          },
          { name, content },
        ),
        browser,
      );
    const nul = new Blob([NUL_LINES.join('\n')]);
    const refused = await send('nul.ndjson', nul, false);
    assert.equal(refused.status, 422);
    assert.match(refused.page, /Import refusé/);
    assert.match(refused.page, /<td>2<\/td>\s*<td>\(ligne\)<\/td>\s*<td>caractère nul \(U\+0000\) interdit/);
    assert.match(refused.page, /<td>3<\/td>\s*<td>status<\/td>\s*<td>caractère nul/);
    assert.doesNotMatch(refused.page, /erreur interne|Unicode escape/);
    const skipped = await send('nul.ndjson', nul, true);
    assert.equal(skipped.status, 200);
    assert.match(skipped.page, /Import terminé/);
    assert.match(skipped.page, /2\scommandes importées,\s+0\sremplacée,\s+2\slignes refusées/);
    for (const skipInvalid of [false, true]) {
      const utf16 = await send(
        'export.csv',
        new Blob([Buffer.from(`\uFEFF${CSV_ORDER}`, 'utf16le')]),
        skipInvalid,
      );
      assert.equal(utf16.status, 422);
      assert.match(utf16.page, /Fichier refusé : le fichier est en UTF-16 LE, pas en UTF-8/);
      assert.match(utf16.page, /Import du fichier|export\.csv|Import refusé/);
    }
    const [stored] = await service.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM orders WHERE organization_id = $1',
      [nulOrg.id],
    );
    assert.equal(stored?.n, 2, 'the two valid lines, once');
  });
});

/**
 * Migrates, creates the organization `tuee` and starts the CLI importing 300,000 orders into it
 * from `file` (written first), for a test to kill.
 */
async function startLargeImport(env: Record<string, string>, file: string) {
  const cli = async (...args: string[]) => {
    const result = await runCli([...args, '--json'], env);
    assert.equal(result.code, 0, result.stderr);
  };
  await cli('migrate');
  await cli('org', 'create', '--name', 'Tuée');
  const out = fs.createWriteStream(file);
  for (let i = 0; i < 300_000; i++)
    out.write(`${JSON.stringify({ ...VALID, id: `k-${i}`, customer_email: `c${i % 5000}@example.com` })}\n`);
  await new Promise((r) => out.end(r));
  return spawn(process.execPath, [BIN, 'import', '--org', 'tuee', file], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
}

/**
 * Waits until process pid has read a tenth of file (Linux: its descriptor's position in
 * /proc/PID/fdinfo; the PGlite of the embedded engine is the CLI's own, nothing else can look at
 * its staging); the bytes read.
 */
async function readPastTenth(pid: number, file: string): Promise<number> {
  const tenth = fs.statSync(file).size / 10;
  const target = fs.realpathSync(file);
  const position = (): number => {
    try {
      for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
        const link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (link !== target) continue;
        const pos = /^pos:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'));
        return Number(pos?.[1] ?? 0);
      }
    } catch {
      // A descriptor closed between the listing and the read: look again.
    }
    return 0;
  };
  for (let waited = 0; ; waited += 50) {
    const read = position();
    if (read >= tenth) return read;
    assert.ok(waited < 120_000, `the import reads its file (${read} bytes after ${waited} ms)`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('issue 7, finding 7: browser imports are jobs', () => {
  test('finding 7: a large upload is answered at once with its job page, which shows progress then the result; another organization gets 404', async (t) => {
    const service = await startTestService();
    try {
      const org = await createOrganization(service.db, { name: 'Jobs' });
      await addUserToOrganization(service.db, org.id, 'jobs@example.com', 'long enough password');
      const other = await createOrganization(service.db, { name: 'Autre' });
      await addUserToOrganization(service.db, other.id, 'other@example.com', 'long enough password');
      const owner = new Client(service.baseUrl);
      await owner.login('jobs@example.com');
      const lines: string[] = [];
      for (let i = 0; i < 60_000; i++)
        lines.push(JSON.stringify({ ...VALID, id: `job-${i}`, created_at: '2026-03-02T10:00:00Z' }));
      const started = performance.now();
      const answer = await owner.upload(
        '/settings/stores/import',
        { _csrf: await owner.token('/settings/stores') },
        { name: 'grand.ndjson', content: new Blob([lines.join('\n')]) },
      );
      const answeredMs = performance.now() - started;
      assert.equal(answer.status, 303);
      t.diagnostic(`60,000-order upload answered with its job page in ${answeredMs.toFixed(0)} ms`);
      const location = answer.headers.get('location') ?? '';
      // The answer does not wait for the import: the orders are not all there yet.
      const ordersAtAnswer = (
        await service.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM orders WHERE organization_id = $1',
          [org.id],
        )
      )[0]?.n;
      assert.ok(ordersAtAnswer !== 60_000, `answered in ${answeredMs.toFixed(0)} ms before the import ended`);
      const first = await (await owner.get(location)).text();
      assert.match(first, /Import du fichier « grand\.ndjson » (en attente|en cours)/);
      assert.match(first, /<meta http-equiv="refresh" content="2"/);
      const intruder = new Client(service.baseUrl);
      await intruder.login('other@example.com');
      assert.equal((await intruder.get(location)).status, 404, 'another organization’s job is unknown');
      assert.equal((await intruder.get('/settings/stores/imports/not-a-uuid')).status, 404);
      let page = '';
      for (let i = 0; i < 600 && !page.includes('Import terminé'); i++) {
        await new Promise((r) => setTimeout(r, 100));
        page = await (await owner.get(location)).text();
      }
      assert.match(page, /60\s000\scommandes importées/);
      assert.doesNotMatch(page, /http-equiv="refresh"/);
      const staged = await service.db.query('SELECT 1 FROM import_staging LIMIT 1');
      assert.equal(staged.length, 0);
    } finally {
      await service.cleanup();
    }
  });

  testOn(
    'embedded',
    'finding 7: an import killed mid-way leaves nothing staged after the next start, which takes seconds',
    async (t) => {
      const { config, drop } = await migratedConfig(); // a copy of the run's template: `migrate` finds nothing left, no initdb
      const env = { DATA_DIR: config.dataDir };
      try {
        const file = path.join(config.dataDir, '..', 'killed.ndjson');
        const child = await startLargeImport(env, file);
        // Well into the file: a tenth read (30,000 lines, three staging batches; the reader waits
        // for the staging), rather than a fixed 6 s that a loaded host may not reach.
        const spawned = performance.now();
        const read = await readPastTenth(child.pid ?? 0, file);
        t.diagnostic(
          `killed ${(performance.now() - spawned).toFixed(0)} ms after its start, ${read} bytes of ${fs.statSync(file).size} read`,
        );
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
        const started = performance.now();
        const server = await startServer(env);
        const startMs = performance.now() - started;
        t.diagnostic(`start after an import killed mid-way: ${startMs.toFixed(0)} ms`);
        const exit = await server.stop();
        assert.equal(exit, 0);
        const db = await openDatabase(config, { role: 'server' });
        try {
          const staged = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM import_staging');
          assert.equal(staged[0]?.n, 0);
          const jobs = await db.query<{ state: string; message: string }>(
            'SELECT state, message FROM import_jobs',
          );
          assert.equal(jobs.length, 1);
          assert.equal(jobs[0]?.state, 'failed');
          assert.match(jobs[0]?.message ?? '', /interrompu/);
          const orders = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
          assert.equal(orders[0]?.n, 0, 'I1: nothing imported');
          assert.deepEqual(await importLinesTables(db), [], 'its staging table is gone');
        } finally {
          await db.close();
        }
        assert.ok(startMs < 20_000, `start after the crash took ${startMs.toFixed(0)} ms`);
      } finally {
        await drop();
      }
    },
  );

  testOn(
    'postgres',
    'finding 7, I1: an import killed while its orders go in writes nothing; its staging table goes with the next import',
    async () => {
      const { config, drop } = await migratedConfig(); // a copy of the run's template: `migrate` finds nothing left, no initdb
      const env = { DATABASE_URL: config.databaseUrl ?? '', SECRET_KEY: config.secretKey.toString('hex') };
      const db = await openDatabase(config, { role: 'cli' });
      try {
        const file = path.join(os.tmpdir(), `killed-${process.pid}.ndjson`);
        const child = await startLargeImport(env, file);
        // Killed once orders are being written: its transaction holds their table's write lock.
        const writing = async () =>
          (
            await db.query(
              `SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database
               WHERE d.datname = current_database() AND l.relation = 'orders'::regclass
                 AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid()`,
            )
          ).length > 0;
        for (let waited = 0; !(await writing()); waited += 50) {
          assert.ok(waited < 30_000, 'the import runs');
          await new Promise((r) => setTimeout(r, 50));
        }
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
        fs.rmSync(file, { force: true });
        const count = async (sql: string) => (await db.query<{ n: number }>(sql))[0]?.n;
        // The server ends the killed command's transaction: nothing of it is visible.
        const killedTransactions = `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND state LIKE '%transaction%'`;
        for (let waited = 0; (await count(killedTransactions)) !== 0; waited += 50) {
          assert.ok(waited < 10_000, 'the killed transaction ends');
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(await count('SELECT count(*)::int AS n FROM orders'), 0, 'I1: nothing imported');
        assert.equal(await count('SELECT count(*)::int AS n FROM stores'), 0);
        assert.equal((await importLinesTables(db)).length, 1, 'its staged lines wait for a recovery');
        // A minute later its heartbeat is stale: the organization's next import recovers it.
        await db.query(`UPDATE import_jobs SET heartbeat_at = now() - interval '5 minutes'`);
        const [org] = await db.query<{ id: string }>(`SELECT id FROM organizations WHERE slug = 'tuee'`);
        await recoverInterruptedImports(db, { organizationId: org?.id ?? '' });
        assert.deepEqual(await importLinesTables(db), []);
        const [job] = await db.query<{ state: string }>('SELECT state FROM import_jobs');
        assert.equal(job?.state, 'failed');
      } finally {
        await db.close();
        await drop();
      }
    },
  );
});

describe('issue 18, finding 3: a job says what was written, from the CLI, after a restart', () => {
  test('CLI imports of NUL lines and of a UTF-16 file, with and without --skip-invalid: each says what it did, and so do their job pages after a restart', async () => {
    const { config, drop } = await migratedConfig(); // a copy of the run's template: `migrate` finds nothing left, no initdb
    const env: Record<string, string> = config.databaseUrl
      ? { DATABASE_URL: config.databaseUrl, SECRET_KEY: config.secretKey.toString('hex') }
      : { DATA_DIR: config.dataDir };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nul-import-'));
    try {
      const cli = (args: string[], stdin?: string) => runCli(args, env, stdin);
      assert.equal((await cli(['migrate'])).code, 0);
      assert.equal((await cli(['org', 'create', '--name', 'Nul'])).code, 0);
      const user = await cli(
        ['user', 'create', '--org', 'nul', '--email', 'nul@example.com', '--password-stdin'],
        'long enough password\n',
      );
      assert.equal(user.code, 0, user.stderr);
      const nul = path.join(dir, 'nul.ndjson');
      fs.writeFileSync(nul, NUL_LINES.join('\n'));
      const utf16 = path.join(dir, 'export.csv');
      fs.writeFileSync(utf16, Buffer.from(`\uFEFF${CSV_ORDER}`, 'utf16le'));

      const refused = await cli(['import', '--org', 'nul', nul]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /Import refusé : 2 ligne\(s\) invalide\(s\)/);
      assert.match(refused.stderr, /nul\.ndjson:2 : \(ligne\) : caractère nul \(U\+0000\) interdit/);
      assert.match(refused.stderr, /nul\.ndjson:3 : status : caractère nul/);
      assert.doesNotMatch(refused.stdout + refused.stderr, /Unicode escape|erreur interne/);
      assert.match(refused.stdout, /0 commandes importées, 0 remplacées, 2 lignes refusées/);
      const skipped = await cli(['import', '--org', 'nul', '--skip-invalid', '--json', nul]);
      assert.equal(skipped.code, 0, skipped.stderr);
      assert.deepEqual(JSON.parse(skipped.stdout), { imported: 2, updated: 0, rejected: 2 });
      for (const skip of [[], ['--skip-invalid']]) {
        const encoding = await cli(['import', '--org', 'nul', ...skip, utf16]);
        assert.equal(encoding.code, 1, 'refused, --skip-invalid or not');
        assert.match(
          encoding.stderr,
          /export\.csv : Import refusé : le fichier est en UTF-16 LE, pas en UTF-8/,
        );
        assert.match(encoding.stderr, /export\.csv:1 : \(fichier\) : le fichier est en UTF-16 LE/);
      }
      const db = await openDatabase(config, { role: 'cli' });
      const jobs = await db
        .query<{ id: string }>('SELECT id FROM import_jobs ORDER BY created_at')
        .finally(() => db.close());
      assert.equal(jobs.length, 4);

      // The restart: a start marks unfinished jobs as interrupted (every one, on the embedded engine).
      const server = await startServer(env);
      try {
        const browser = new Client(server.baseUrl);
        assert.equal((await browser.login('nul@example.com')).status, 303);
        const pages = await Promise.all(
          jobs.map(async ({ id }) => {
            const response = await browser.get(`/settings/stores/imports/${id}`);
            return { status: response.status, page: await response.text() };
          }),
        );
        const [first, second, third, fourth] = pages;
        assert.equal(first?.status, 422);
        assert.match(first?.page ?? '', /2\slignes invalides : aucune commande n’a été\s+importée/);
        assert.match(first?.page ?? '', /<td>2<\/td>\s*<td>\(ligne\)<\/td>\s*<td>caractère nul/);
        assert.equal(second?.status, 200);
        assert.match(second?.page ?? '', /2\scommandes importées,\s+0\sremplacée,\s+2\slignes refusées/);
        for (const page of [third, fourth]) {
          assert.equal(page?.status, 422);
          assert.match(page?.page ?? '', /Fichier refusé : le fichier est en UTF-16 LE/);
        }
        for (const page of pages) assert.doesNotMatch(page.page, /en cours|interrompu|erreur interne/);
        const api = await fetch(`${server.baseUrl}/healthz`);
        assert.equal(api.status, 200);
      } finally {
        assert.equal(await server.stop(), 0);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      await drop();
    }
  });
});
