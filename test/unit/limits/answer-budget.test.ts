// Issue 18, finding 2: the bytes of answers being sent, bounded overall and per organization.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AnswerBudget } from '../../../src/limits/answer-budget.js';
import { AppError } from '../../../src/errors.js';

const busy = (error: unknown) => {
  assert.ok(error instanceof AppError);
  assert.equal(error.code, 'SERVICE_BUSY');
  assert.equal(error.status, 503);
  assert.equal(error.retryAfterS, 2);
  assert.match(error.message, /^Service occupé/);
  return true;
};

test('finding 2: answers are counted while sent, and refused as busy past the budget', () => {
  const budget = new AnswerBudget({ totalBytes: 1000, perOrganizationBytes: 600 });
  const first = budget.hold('a', Buffer.alloc(400));
  const second = budget.hold('b', Buffer.alloc(500));
  assert.equal(budget.heldBytes, 900);
  assert.throws(() => budget.hold('c', Buffer.alloc(101)), busy);
  assert.throws(() => budget.hold('a', Buffer.alloc(201)), busy, 'one organization at most 600 bytes');
  budget.reserve('a').release(); // room left: a computation may start
  const filler = budget.hold('b', Buffer.alloc(100));
  assert.throws(() => budget.reserve('a'), busy, 'full: refused before computing');
  filler();
  first();
  first(); // a second call gives nothing back twice
  assert.equal(budget.heldBytes, 500);
  const third = budget.hold('c', Buffer.alloc(500));
  second();
  third();
  assert.equal(budget.heldBytes, 0);
});

test('finding 2: responses sending the same body share its bytes, counted once until the last ends', () => {
  const budget = new AnswerBudget({ totalBytes: 1000, perOrganizationBytes: 1000 });
  const body = Buffer.alloc(800);
  const releases = Array.from({ length: 10 }, () => budget.hold('a', body));
  assert.equal(budget.heldBytes, 800);
  for (const release of releases.slice(1)) release();
  assert.equal(budget.heldBytes, 800, 'one response still sends it');
  releases[0]?.();
  assert.equal(budget.heldBytes, 0);
});

test('finding 2: an answer larger than an organization may receive at once is refused with what to do', () => {
  const budget = new AnswerBudget({ totalBytes: 4 * 1024 ** 2, perOrganizationBytes: 2 * 1024 ** 2 });
  assert.throws(
    () => budget.hold('a', Buffer.alloc(3 * 1024 ** 2)),
    (e: unknown) => busy(e) && /3 Mo.*2 Mo.*limit.*offset/.test((e as Error).message),
  );
  assert.equal(budget.heldBytes, 0);
  budget.reserve('a').release();
});

test('finding 2: answers being serialized count as they grow, so that concurrent computations cannot outgrow the budget', () => {
  const budget = new AnswerBudget({ totalBytes: 1000, perOrganizationBytes: 600 });
  const serializing = [budget.reserve('a'), budget.reserve('a')];
  serializing[0]?.grow(250);
  serializing[1]?.grow(100);
  serializing[1]?.grow(300); // the size so far, not an increment
  assert.equal(budget.heldBytes, 550);
  assert.throws(
    () => serializing[0]?.grow(301),
    busy,
    'the organization’s 600 bytes reached by the two together',
  );
  assert.throws(() => budget.hold('a', Buffer.alloc(51)), busy, 'a sent answer counts beside them');
  const other = budget.reserve('b');
  other.grow(450);
  assert.throws(() => budget.reserve('c'), busy, 'full overall: refused before computing');
  serializing[0]?.release();
  serializing[0]?.release(); // given back once
  assert.equal(budget.heldBytes, 750);
  serializing[1]?.release();
  other.release();
  assert.equal(budget.heldBytes, 0);
});
