// Issue 28, item 3: the Revenue page's notice while the organization's data is being prepared:
// « Calcul en cours… » with the time left in French, shown for SNAPSHOT_BUILDING only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../src/errors.js';
import { buildingNotice, isSnapshotBuilding, timeLeft } from '../../../src/web/revenue-building.js';

test('issue 28: the time left as people say it', () => {
  assert.equal(timeLeft(1), '1 s');
  assert.equal(timeLeft(89), '89 s');
  assert.equal(timeLeft(90), '2 min');
  assert.equal(timeLeft(600), '10 min');
});

test('issue 28: the notice says « Calcul en cours… » and the time left, as a status', () => {
  const { text } = buildingNotice(40);
  assert.match(text, /Calcul en cours…/);
  assert.match(text, /encore environ\s+40 s/);
  assert.match(text, /role="status"/);
});

test('issue 28: only SNAPSHOT_BUILDING with a Retry-After is the notice; other refusals stay errors', () => {
  const building = new AppError('SNAPSHOT_BUILDING', 'Calcul en cours', {}, { retryAfterS: 12 });
  assert.ok(isSnapshotBuilding(building));
  assert.ok(!isSnapshotBuilding(new AppError('SERVICE_BUSY', 'occupé', {}, { retryAfterS: 2 })));
  assert.ok(!isSnapshotBuilding(new AppError('SNAPSHOT_BUILDING', 'Calcul en cours')));
  assert.ok(!isSnapshotBuilding(new Error('SNAPSHOT_BUILDING')));
});
