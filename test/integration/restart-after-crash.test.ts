// Issue 18, finding 8: a start right after a crash (SIGKILL) must succeed, and the crashed
// process's leftovers (its upload spool folder) are removed at start, while those of processes
// still running stay (several instances may share /tmp).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { engine, migratedConfig, testOn } from '../helpers/database.js';
import { BIN, freePort, startServer } from '../helpers/processes.js';

const UPLOAD = 'sales-metrics-upload-';

async function serving(baseUrl: string, isDone: () => boolean): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 120_000;) {
    if (isDone()) throw new Error('the server exited');
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server did not start');
}

/**
 * `sales-metrics serve` under a parent that never reaps its children (`exec sleep`), as under a
 * container's first process that does not: once killed, the server stays a zombie, whose pid
 * still answers kill(pid, 0).
 */
async function startUnreapedServer(
  env: Record<string, string>,
): Promise<{ wrapper: ChildProcess; pid: number }> {
  const port = await freePort();
  const wrapper = spawn(
    'sh',
    ['-c', `"${process.execPath}" "${BIN}" serve >/dev/null 2>&1 & echo $!; exec sleep 600`],
    {
      env: { ...process.env, DEMO: '0', LOG_LEVEL: 'warn', ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const pid = await new Promise<number>((resolve) =>
    wrapper.stdout?.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
  );
  const procState = () => fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.[0];
  await serving(`http://127.0.0.1:${port}`, () => procState() === 'Z');
  return { wrapper, pid };
}

async function zombie(pid: number): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 10_000;) {
    if (fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.startsWith('Z')) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`process ${pid} did not die`);
}

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((r) => child.once('exit', r));
  return child.pid ?? 0;
}

describe(`restart after a crash (${engine})`, () => {
  let env: Record<string, string>;
  let drop: () => Promise<void>;
  let tmp: string;
  const wrappers: ChildProcess[] = [];

  before(async () => {
    // Migrated already (the run's template): the crash and the start after it are the point, not
    // a first start's initdb and migrations, which cost seconds of CPU.
    const fresh = await migratedConfig();
    drop = fresh.drop;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-restart-'));
    // Its own TMPDIR: the spool folders looked at are this test's alone.
    env = {
      TMPDIR: tmp,
      ...(fresh.config.databaseUrl
        ? { DATABASE_URL: fresh.config.databaseUrl, SECRET_KEY: fresh.config.secretKey.toString('hex') }
        : { DATA_DIR: fresh.config.dataDir }),
    };
  });

  after(async () => {
    for (const wrapper of wrappers) wrapper.kill('SIGKILL');
    await drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('finding 8: a start right after kill -9 serves at once; the dead process’s upload folder goes, running ones’ stay', async () => {
    const crashed = await startUnreapedServer(env);
    wrappers.push(crashed.wrapper);
    const crashedSpool = fs.readdirSync(tmp).filter((name) => name.startsWith(`${UPLOAD}${crashed.pid}-`));
    assert.equal(crashedSpool.length, 1, 'the server made its spool folder');
    const gone = path.join(tmp, `${UPLOAD}${await deadPid()}-a1b2c3`);
    // A folder named after a pid now given to another process (the wrapper), from before it started.
    const reused = path.join(tmp, `${UPLOAD}${crashed.wrapper.pid}-t1-d4e5f6`);
    const running = path.join(tmp, `${UPLOAD}${process.pid}-g7h8i9`); // a live instance's (older naming)
    for (const dir of [gone, reused, running]) fs.mkdirSync(dir);

    process.kill(crashed.pid, 'SIGKILL');
    await zombie(crashed.pid);
    const started = Date.now();
    const restarted = await startServer(env);
    const ms = Date.now() - started;
    try {
      assert.equal((await fetch(`${restarted.baseUrl}/healthz`)).status, 200);
      assert.ok(ms < 60_000, `restart took ${ms} ms`);
      const left = fs.readdirSync(tmp);
      assert.ok(
        !left.includes(crashedSpool[0] ?? ''),
        `the crashed server's folder is left: ${left.join(', ')}`,
      );
      assert.ok(!fs.existsSync(gone), 'a dead pid’s folder is left');
      assert.ok(!fs.existsSync(reused), 'a folder of a pid now another process’s is left');
      assert.ok(fs.existsSync(running), 'a running process’s folder was removed');
    } finally {
      assert.equal(await restarted.stop(), 0);
    }
  });

  testOn(
    'embedded',
    'finding 8: a lock whose pid is now another process’s (pid reuse) does not stop a start',
    async () => {
      const wrapper = spawn('sleep', ['600']);
      wrappers.push(wrapper);
      const dataDir = env.DATA_DIR ?? '';
      fs.writeFileSync(
        path.join(dataDir, 'host.json'),
        JSON.stringify({ pid: wrapper.pid, started: '1', role: 'server', socketDir: dataDir }),
      );
      const server = await startServer(env);
      assert.equal((await fetch(`${server.baseUrl}/healthz`)).status, 200);
      assert.equal(await server.stop(), 0);
    },
  );
});
