// Issue 7: sessions and forms of the web application (findings 3, 4, 5, 10, 11, 14), tried from
// outside over real HTTP as an attacker would.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createOrganization, findOrganization } from '../../../src/domain/organizations.js';
import { addUserToOrganization } from '../../../src/domain/users.js';
import { startTestApp, startTestService, type TestService } from '../../helpers/service.js';
import { Client, PASSWORD } from '../../helpers/web-client.js';

describe('issue 7: sessions and forms', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(async () => {
    await service.cleanup();
  });

  test('finding 3: two parallel sign-ups with one address give one account; the second person gets no session and the same answer', async () => {
    const signUp = async (organization: string, password: string) => {
      const client = new Client(service.baseUrl);
      const token = await client.token('/signup');
      const response = await client.post('/signup', {
        _csrf: token,
        organization,
        email: 'Race@Example.com',
        password,
      });
      return { client, response };
    };
    const [first, second] = await Promise.all([
      signUp('Première', 'first person password'),
      signUp('Seconde', 'second person password'),
    ]);
    for (const { client, response } of [first, second]) {
      assert.equal(response.status, 303);
      assert.equal(response.headers.get('location'), '/login?signup=1', 'the same answer either way');
      assert.equal(client.cookies.get('sm_session'), undefined, 'no session from a sign-up');
    }
    const users = await service.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM users WHERE email = 'race@example.com'",
    );
    assert.equal(users[0]?.n, 1);
    const orgs = await service.db.query<{ name: string }>(
      "SELECT name FROM organizations WHERE name IN ('Première', 'Seconde')",
    );
    assert.equal(orgs.length, 1, 'the refused sign-up wrote no organization');
    // Exactly one of the two passwords opens the account, and only into its own organization.
    const opened = [];
    for (const password of ['first person password', 'second person password']) {
      const client = new Client(service.baseUrl);
      const response = await client.login('race@example.com', password);
      if (response.status === 303) opened.push(client);
    }
    assert.equal(opened.length, 1);
    const page = await (await opened[0]!.get('/settings/subscription')).text();
    assert.ok(page.includes(orgs[0]!.name));

    // Signing up again with a taken address answers exactly as a new one, and changes nothing.
    const again = await signUp('Tierce', 'third person password');
    assert.equal(again.response.headers.get('location'), '/login?signup=1');
    assert.equal((await service.db.query("SELECT 1 FROM organizations WHERE name = 'Tierce'")).length, 0);
  });

  test('finding 4: after login, ?next= never leads to another site, whatever the encoding', async () => {
    const org = await createOrganization(service.db, { name: 'Redirects' });
    await addUserToOrganization(service.db, org.id, 'redirect@example.com', PASSWORD);
    const hostile = [
      '/\\evil.example/phish',
      '/%5Cevil.example/phish',
      '//evil.example/x',
      '/.//evil.example/x',
      '/a/../..//evil.example',
      'https://evil.example/',
      '/\t/evil.example',
      '/%09/evil.example',
      '\\\\evil.example',
      '/x\r\nSet-Cookie: a=b',
    ];
    for (const next of hostile) {
      const client = new Client(service.baseUrl);
      const response = await client.login('redirect@example.com', PASSWORD, next);
      assert.equal(response.status, 303, next);
      const location = response.headers.get('location') ?? '';
      const target = new URL(location, service.baseUrl);
      assert.equal(target.origin, service.baseUrl, `${JSON.stringify(next)} → ${location}`);
      assert.ok(!location.startsWith('//') && !location.includes('\\'), location);
    }
    const client = new Client(service.baseUrl);
    const kept = await client.login('redirect@example.com', PASSWORD, '/settings/report?x=1');
    assert.equal(kept.headers.get('location'), '/settings/report?x=1', 'a path of the site is kept');
  });

  test('finding 4: switching organization returns only to a page of this origin (Referer)', async () => {
    const a = await createOrganization(service.db, { name: 'Switch A' });
    const b = await createOrganization(service.db, { name: 'Switch B' });
    await addUserToOrganization(service.db, a.id, 'switch@example.com', PASSWORD);
    await addUserToOrganization(service.db, b.id, 'switch@example.com', PASSWORD);
    const client = new Client(service.baseUrl);
    await client.login('switch@example.com');
    for (const [referer, expected] of [
      ['//evil.example/x', '/'],
      ['https://evil.example/settings/report', '/'],
      [`${service.baseUrl}/\\evil.example`, '/'],
      [`${service.baseUrl}/settings/report?saved=1`, '/settings/report?saved=1'],
    ] as const) {
      const token = await client.token('/settings/report');
      const response = await client.post(
        '/switch-organization',
        { _csrf: token, slug: b.slug },
        { origin: service.baseUrl, referer },
      );
      assert.equal(response.status, 303, referer);
      assert.equal(response.headers.get('location'), expected, referer);
    }
  });

  test('finding 5: a CSRF secret and token planted from a sibling origin cannot post into the victim’s session; a foreign Origin is refused', async () => {
    const org = await createOrganization(service.db, { name: 'Victime' });
    await addUserToOrganization(service.db, org.id, 'victim@example.com', PASSWORD);
    const victim = new Client(service.baseUrl);
    assert.equal((await victim.login('victim@example.com')).status, 303);

    // The attacker gets a secret and a valid token of their own (signed out, or in their account).
    const attacker = new Client(service.baseUrl);
    const attackerToken = await attacker.token('/signup');
    // …and plants the secret cookie into the victim's browser (cookies ignore ports).
    const planted = new Map(victim.cookies);
    planted.set('_csrf', attacker.cookies.get('_csrf') ?? '');
    const forged = [...planted].map(([k, v]) => `${k}=${v}`).join('; ');
    const post = (path: string, fields: Record<string, string>, origin?: string) =>
      fetch(`${service.baseUrl}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: forged,
          'content-type': 'application/x-www-form-urlencoded',
          ...(origin ? { origin } : {}),
        },
        body: new URLSearchParams({ _csrf: attackerToken, ...fields }).toString(),
      });
    const before = await findOrganization(service.db, org.slug);
    // Same origin (as if the page had no Origin header): the token is not bound to this session.
    const settings = await post('/settings/report', { excluded: 'completed', deductions: 'taxes' });
    assert.equal(settings.status, 403);
    const store = await post('/settings/stores', { address: 'https://forged.example' });
    assert.equal(store.status, 403);
    // From another port of the host, as the finding did it: refused by its Origin too.
    const sibling = service.baseUrl.replace(/:\d+$/, ':1');
    assert.equal((await post('/settings/report', { deductions: 'taxes' }, sibling)).status, 403);
    const after = await findOrganization(service.db, org.slug);
    assert.deepEqual(after.settings, before.settings, 'settings unchanged');
    assert.equal(
      (await service.db.query('SELECT 1 FROM stores WHERE organization_id = $1', [org.id])).length,
      0,
    );
    // The victim's own form still works.
    const token = await victim.token('/settings/report');
    const own = await victim.post('/settings/report', { _csrf: token, deductions: 'taxes' });
    assert.equal(own.status, 303);
    // A cross-site Sec-Fetch-Site without Origin is refused as well, even with the right token.
    const token2 = await victim.token('/settings/report');
    const crossSite = await victim.post(
      '/settings/report',
      { _csrf: token2, deductions: 'refunds' },
      { 'sec-fetch-site': 'cross-site' },
    );
    assert.equal(crossSite.status, 403);
  });

  test('finding 10: over-long sign-up fields are refused and nothing is written', async () => {
    const client = new Client(service.baseUrl);
    for (const [field, value] of [
      ['organization', 'O'.repeat(60_000)],
      ['email', `${'e'.repeat(300)}@example.com`],
      ['password', 'p'.repeat(2000)],
    ] as const) {
      const fields = {
        organization: 'Bornes',
        email: 'bounds@example.com',
        password: PASSWORD,
        [field]: value,
      };
      const response = await client.post('/signup', { _csrf: await client.token('/signup'), ...fields });
      assert.equal(response.status, 400, field);
      const page = await response.text();
      assert.ok(page.length < 20_000, `the answer does not echo ${value.length} characters`);
      assert.match(page, new RegExp(`id="${field}-error"[^>]*>[^<]*(caractères|invalide)`));
    }
    assert.equal((await service.db.query("SELECT 1 FROM users WHERE email LIKE '%bounds%'")).length, 0);
  });

  test('finding 10: excluded statuses are bounded in number and length', async () => {
    const org = await createOrganization(service.db, { name: 'Statuts' });
    await addUserToOrganization(service.db, org.id, 'statuses@example.com', PASSWORD);
    const client = new Client(service.baseUrl);
    await client.login('statuses@example.com');
    const before = await findOrganization(service.db, org.slug);
    const huge = await client.post('/settings/report', {
      _csrf: await client.token('/settings/report'),
      excluded: 's'.repeat(10_000),
    });
    assert.equal(huge.status, 400);
    const many = new URLSearchParams({ _csrf: await client.token('/settings/report') });
    for (let i = 0; i < 201; i++) many.append('excluded', `status-${i}`);
    const tooMany = await fetch(`${service.baseUrl}/settings/report`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: client.cookieHeader,
        origin: service.baseUrl,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: many.toString(),
    });
    assert.equal(tooMany.status, 400);
    assert.deepEqual((await findOrganization(service.db, org.slug)).settings, before.settings);
  });

  test('finding 10: sign-ups are rate limited per address', async () => {
    // Its own app, for its own in-memory sign-up limit, on the suite's database.
    const limited = await startTestApp(service, {});
    try {
      const client = new Client(limited.baseUrl);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        const token = await client.token('/signup');
        const response = await client.post('/signup', {
          _csrf: token,
          organization: `Flood ${i}`,
          email: `flood${i}@example.com`,
          password: PASSWORD,
        });
        statuses.push(response.status);
      }
      assert.deepEqual(statuses, [303, 303, 303, 303, 303, 429, 429]);
      const users = await service.db.query("SELECT 1 FROM users WHERE email LIKE 'flood%'");
      assert.equal(users.length, 5);
    } finally {
      await limited.close();
    }
  });

  test('finding 10: parallel sign-ups from one address cannot outrun the limit', async () => {
    // Its own app, for its own in-memory sign-up limit, on the suite's database.
    const limited = await startTestApp(service, {});
    try {
      const statuses = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const client = new Client(limited.baseUrl);
          const token = await client.token('/signup');
          const response = await client.post('/signup', {
            _csrf: token,
            organization: `Parallel ${i}`,
            email: `parallel${i}@example.com`,
            password: PASSWORD,
          });
          return response.status;
        }),
      );
      assert.deepEqual(
        statuses.sort(),
        [...Array(5).fill(303), ...Array(15).fill(429)],
        'five sign-ups an hour per address, however parallel',
      );
      const users = await service.db.query("SELECT 1 FROM users WHERE email LIKE 'parallel%'");
      assert.equal(users.length, 5);
    } finally {
      await limited.close();
    }
  });

  test('finding 11: pages carry a strict CSP without inline script, no framing, nosniff and a referrer policy', async () => {
    for (const path of ['/login', '/signup', '/assets/app.js', '/api/reports/catalog']) {
      const response = await fetch(`${service.baseUrl}${path}`);
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'/, path);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.equal(response.headers.get('x-frame-options'), 'DENY', path);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', path);
      assert.equal(response.headers.get('referrer-policy'), 'same-origin', path);
      assert.equal(response.headers.get('strict-transport-security'), null, 'no HSTS over plain HTTP');
    }
    const page = await (await fetch(`${service.baseUrl}/login`)).text();
    assert.doesNotMatch(page, /\son[a-z]+=/i, 'no inline event handler');
    assert.doesNotMatch(page, /<script(?![^>]*\ssrc=)/i, 'no inline script');
  });

  test('finding 14: expired sessions are purged', async () => {
    const org = await createOrganization(service.db, { name: 'Purge' });
    await addUserToOrganization(service.db, org.id, 'purge@example.com', PASSWORD);
    const client = new Client(service.baseUrl);
    await client.login('purge@example.com');
    await service.db.query(
      "UPDATE sessions SET expires_at = now() - interval '1 day' WHERE user_id = (SELECT id FROM users WHERE email = 'purge@example.com')",
    );
    // Any new session purges the expired ones.
    await new Client(service.baseUrl).login('purge@example.com');
    const left = await service.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM sessions WHERE expires_at <= now()',
    );
    assert.equal(left[0]?.n, 0);
  });

  test('finding 14: a request whose headers are too large gets a French JSON 431', async () => {
    const { port } = new URL(service.baseUrl);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(`GET /login HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (d) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 431 /);
    assert.match(answer, /application\/json/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: string };
    assert.match(body.error, /En-têtes/);
  });
});
