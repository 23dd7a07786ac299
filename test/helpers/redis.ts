// A throwaway redis-server on 127.0.0.1 (Debian's redis-server package), stoppable and
// restartable on the same port for fault tests. Under CI=true a missing redis-server fails.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from './processes.js';

export interface TestRedis {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export function redisAvailable(): boolean {
  const found = spawnSync('redis-server', ['--version']).status === 0;
  if (!found && process.env.CI === 'true') throw new Error('CI=true and redis-server is not installed');
  return found;
}

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    for (let i = 0; i < 100; i++) {
      if (
        spawnSync('redis-cli', ['-p', String(port), 'ping'])
          .stdout?.toString()
          .includes('PONG')
      )
        return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    async stop() {
      const exited = new Promise((r) => child?.once('exit', r));
      child?.kill('SIGTERM');
      await exited;
    },
  };
}
