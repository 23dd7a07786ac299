// The hosting process's COPY read from what PGlite's thread posts (src/db/direct-copy.ts, issue 28):
// the protocol's messages cut anywhere between the pieces, every CopyData byte to the reader in
// order, a reader's promise holding the rest, an ErrorResponse failing the COPY with its fields.
// PGlite's thread is stood in for by an emitter that posts the pieces it is given: the thread
// itself, with PGlite, is tested in test/integration/direct-copy.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { DirectCopies } from '../../../src/db/direct-copy.js';

/** A protocol message: type, int32 length (itself included), body. */
const message = (type: string, body: Buffer) => {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
};
const rows = Array.from({ length: 40 }, (_, n) => Buffer.from(`ligne ${n} `.repeat(n % 7), 'utf8'));
const output = Buffer.concat([
  message('H', Buffer.from([1, 0, 0])),
  message('N', Buffer.from('Snotice\0\0', 'latin1')),
  ...rows.map((row) => message('d', row)),
  message('c', Buffer.alloc(0)),
  message('C', Buffer.from('COPY 40\0', 'latin1')),
  message('Z', Buffer.from('I', 'latin1')),
]);
const errorOutput = Buffer.concat([
  message('H', Buffer.from([1, 0, 0])),
  message('d', rows[3] as Buffer),
  message('E', Buffer.from('SERROR\0C22012\0Mdivision by zero\0\0', 'utf8')),
  message('Z', Buffer.from('I', 'latin1')),
]);

/** A stand-in for PGlite's thread: each COPY asked for is answered with `bytes` cut at `cuts`. */
function fakeHost(bytes: Buffer, cuts: number[], end: { error?: string } = {}) {
  const worker = new EventEmitter() as EventEmitter & { postMessage(m: { id: number }): void };
  worker.postMessage = ({ id }) => {
    const at = [0, ...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
    at.slice(1).forEach((to, k) =>
      setImmediate(() =>
        worker.emit('message', { type: 'copy-data', id, data: Uint8Array.from(bytes.subarray(at[k], to)) }),
      ),
    );
    setImmediate(() => setImmediate(() => worker.emit('message', { type: 'copy-end', id, ...end })));
  };
  return new DirectCopies(worker as unknown as Worker);
}

test('every CopyData byte, in order, however the pieces cut the messages (a header too)', async () => {
  const expected = Buffer.concat(rows);
  for (let first = 1; first < 40; first++) {
    const cuts = Array.from({ length: 60 }, (_, k) => first + k * 7);
    const got: Buffer[] = [];
    await fakeHost(output, cuts).run(
      'COPY',
      (data, from, to) => void got.push(Buffer.from(data.subarray(from, to))),
    );
    assert.deepEqual(Buffer.concat(got), expected, `cut from ${first}`);
  }
});

test('a reader’s promise holds the rest of the output until it settles', async () => {
  let waiting = false;
  let calls = 0;
  const got: Buffer[] = [];
  await fakeHost(output, [100, 101, 102, 300, 700]).run('COPY', (data, from, to) => {
    assert.equal(waiting, false, 'nothing read while the last promise waits');
    got.push(Buffer.from(data.subarray(from, to)));
    if (++calls % 3 !== 0) return undefined;
    waiting = true;
    return new Promise((resolve) =>
      setTimeout(() => {
        waiting = false;
        resolve();
      }, 2),
    );
  });
  assert.deepEqual(Buffer.concat(got), Buffer.concat(rows));
});

test('an ErrorResponse fails the COPY with its message and SQLSTATE; a failure of the queue too', async () => {
  for (const cuts of [[], [9, 10, 11, 20, 30, 40]]) {
    await assert.rejects(
      fakeHost(errorOutput, cuts).run('COPY', () => undefined),
      (error: Error & { code?: string }) => {
        assert.equal(error.message, 'division by zero');
        assert.equal(error.code, '22012');
        return true;
      },
    );
  }
  await assert.rejects(
    fakeHost(output, [50], { error: 'connexion perdue' }).run('COPY', () => undefined),
    /connexion perdue/,
  );
  const copies = fakeHost(output, []);
  copies.closing();
  await assert.rejects(
    copies.run('COPY', () => undefined),
    /fermée/,
  );
});
