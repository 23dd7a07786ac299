// Issue 18, finding 8: telling a running lock holder from a crashed one (Linux /proc).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { isRunning, ownMark } from '../../../src/db/process-identity.js';

const exited = (child: ReturnType<typeof spawn>) => new Promise((resolve) => child.once('exit', resolve));

test('finding 8: this process runs; a record of its pid with another start time, or none, is an earlier process’s', () => {
  assert.ok(ownMark.started, 'Linux: the start time is read from /proc');
  assert.equal(isRunning(ownMark), true);
  assert.equal(isRunning({ pid: process.pid, started: '1' }), false);
  assert.equal(isRunning({ pid: process.pid }), false);
});

test('finding 8: a live process runs unless its start time says its pid was reused; a reaped one does not', async () => {
  const child = spawn('sleep', ['30']);
  const pid = child.pid ?? 0;
  try {
    assert.equal(isRunning({ pid }), true);
    assert.equal(isRunning({ pid, started: '1' }), false, 'pid reused since');
  } finally {
    child.kill('SIGKILL');
    await exited(child);
  }
  assert.equal(isRunning({ pid }), false);
  assert.equal(isRunning({ pid: 0 }), false);
});

test('finding 8: a killed process not yet reaped (a zombie) no longer runs', async () => {
  // `exec sleep` replaces the shell, which never waits for its background child.
  const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  try {
    const pid = await new Promise<number>((resolve) =>
      parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    assert.equal(isRunning({ pid }), true);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 200 && isRunning({ pid }); i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(isRunning({ pid }), false);
    let signalable = true;
    try {
      process.kill(pid, 0);
    } catch {
      signalable = false;
    }
    assert.equal(signalable, true, 'kill(pid, 0) still succeeds on the zombie: the pid alone misleads');
  } finally {
    parent.kill('SIGKILL');
    await exited(parent);
  }
});
