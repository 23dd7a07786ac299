// A web page whose database does not answer in time (a large import holds the embedded database's
// one session for minutes) gets a French 503 page with Retry-After after PAGE_DEADLINE_MS, instead
// of silence until the connection's timeout (65 s) closes it unanswered; once the database answers
// again, so does the page. The API is not concerned: its reports have budgets of their own.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SESSION_COOKIE } from '../../../src/auth/sessions.js';
import { startTestService, type TestService } from '../../helpers/service.js';

const DEADLINE_MS = 1_000;
const HELD_MS = 4_000;

describe('web pages past PAGE_DEADLINE_MS', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ PAGE_DEADLINE_MS: String(DEADLINE_MS) });
  });
  after(async () => service?.cleanup());

  const loginPage = () =>
    fetch(`${service.baseUrl}/login`, {
      // A session cookie makes the page look its session up in the database first.
      headers: { cookie: `${SESSION_COOKIE}=${'x'.repeat(43)}`, accept: 'text/html' },
    });

  test('a page waiting for a held database answers 503 « Service occupé » with Retry-After, then 200 once it is free', async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holding = service.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE');
      locked();
      await released;
    });
    const timer = setTimeout(release, HELD_MS);
    try {
      await lockTaken;
      const started = performance.now();
      const answer = await loginPage();
      const waited = performance.now() - started;
      const text = await answer.text();
      assert.equal(answer.status, 503);
      assert.equal(answer.headers.get('retry-after'), '5');
      assert.match(answer.headers.get('content-type') ?? '', /text\/html/);
      assert.match(text, /Service occupé : la base de données ne répond pas à temps/);
      assert.ok(waited >= DEADLINE_MS - 50, `answered after ${waited} ms, before the deadline`);
      assert.ok(waited < HELD_MS, `answered after ${waited} ms: the deadline did not answer it`);
    } finally {
      release();
      clearTimeout(timer);
      await holding;
    }
    const again = await loginPage();
    assert.equal(again.status, 200);
    assert.match(await again.text(), /<form/);
  });
});
