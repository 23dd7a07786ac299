// Issue 29, item 2: a large answer is handed to its socket in the organization's turns, at most
// SHARED_TURN_BYTES a turn while another organization has work under way (the writes' cost is
// paid later in the turn: a time slice alone let tens of megabytes through in one turn).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerPieces, SHARED_TURN_BYTES, SLICE_BYTES } from '../../../src/api/send-answer.js';
import { asOrganization, nextTurn, workUnderWay } from '../../../src/limits/organization-turns.js';

test('issue 29 (item 2): a 16 MB answer goes out at most SHARED_TURN_BYTES per turn while another organization waits, whole and in order', async () => {
  const body = Buffer.alloc(16 * 1024 * 1024, 7);
  let turn = 0;
  let quietRunning = true;
  const quietAtWork = workUnderWay('quiet');
  const quiet = asOrganization('quiet', async () => {
    while (quietRunning) {
      await nextTurn();
      turn++;
    }
  });
  const handedByTurn = new Map<number, number>();
  let total = 0;
  for await (const piece of answerPieces(body, 'noisy')) {
    handedByTurn.set(turn, (handedByTurn.get(turn) ?? 0) + piece.length);
    total += piece.length;
  }
  quietRunning = false;
  await quiet;
  quietAtWork();
  assert.equal(total, body.length);
  const most = Math.max(...handedByTurn.values());
  assert.ok(
    most <= SHARED_TURN_BYTES + SLICE_BYTES,
    `${most} bytes handed over in one turn of the quiet organization`,
  );
  assert.ok(
    handedByTurn.size >= body.length / (SHARED_TURN_BYTES + SLICE_BYTES),
    `${handedByTurn.size} turns`,
  );
});
