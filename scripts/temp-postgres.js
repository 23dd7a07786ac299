// A throwaway PostgreSQL cluster on 127.0.0.1 for the test run, from the Debian server binaries
// (apt-get install postgresql). Returns undefined when no server binaries are installed.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';

function serverBin() {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin/initdb')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
}

async function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * With `where.dir`, the cluster lives in that folder and outlives stop() (a bench's data kept
 * between runs): created on first use, started again as it is afterwards.
 */
export async function startTempPostgres(where = {}) {
  const bin = serverBin();
  if (!bin) return undefined;
  const asRoot = process.getuid?.() === 0;
  const run = (cmd, args) => {
    const full = asRoot ? ['-u', 'postgres', '--', path.join(bin, cmd), ...args] : args;
    const result = spawnSync(asRoot ? 'runuser' : path.join(bin, cmd), full, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${cmd} failed: ${result.stderr || result.stdout}`);
  };
  const kept = where.dir !== undefined;
  const dir = kept ? where.dir : fs.mkdtempSync(path.join(os.tmpdir(), 'sm-pg-'));
  fs.mkdirSync(dir, { recursive: true });
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  if (!fs.existsSync(path.join(data, 'PG_VERSION')))
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = () => run('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-w', '-o', options, 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /** Stops the server but keeps its data, for outage tests; resume() starts it again. */
    pause: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    resume: start,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        if (!kept) fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
