// SPEC E3 over real HTTP: every error body carries the code of its kind, so that a client tells
// two 401s or two 429s apart without reading French; the fields of sections 6–10 are unchanged.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mintKey } from '../../src/auth/keys.js';
import { setSubscription } from '../../src/domain/organizations.js';
import { ERROR_KINDS, type ErrorCode } from '../../src/errors.js';
import { startTestService, type TestService } from '../helpers/service.js';

async function expectError(response: Response, code: ErrorCode): Promise<Record<string, unknown>> {
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const body = (await response.json()) as Record<string, unknown>;
  assert.equal(body.code, code, JSON.stringify(body));
  assert.equal(response.status, ERROR_KINDS[code].status, JSON.stringify(body));
  assert.equal(typeof body.error, 'string');
  assert.equal(Object.keys(body).at(-1), 'code', 'the code comes after the fields of sections 6–10');
  return body;
}

describe('E3: error codes over HTTP', () => {
  let service: TestService;
  let key: string;
  before(async () => {
    service = await startTestService({ RATE_LIMIT_MAX: '3', AUTH_FAILURE_LIMIT: '2' });
    key = (await service.addOrganization('Codes', [])).key;
  });
  after(() => service.cleanup());

  test('E3: 400s are told apart: unknown ids (with both arrays), no metric, a bad parameter, a malformed URL', async () => {
    const unknown = await expectError(
      await service.get('/api/reports/tabular?metrics=orders,bogus&dimensions=nope', key),
      'UNKNOWN_IDENTIFIERS',
    );
    assert.deepEqual(Object.keys(unknown), ['error', 'unknownDimensions', 'unknownMetrics', 'code']);
    assert.deepEqual(unknown.unknownDimensions, ['nope']);
    await expectError(await service.get('/api/reports/tabular?dimensions=date', key), 'MISSING_METRICS');
    await expectError(
      await service.get('/api/reports/tabular?metrics=orders&from=2026-13-01', key),
      'INVALID_PARAMETER',
    );
    await expectError(await service.get('/api/reports/%E0%A4%A', key), 'BAD_REQUEST');
  });

  test('E3: 401s are told apart: no key and a stopped subscription', async () => {
    await expectError(await service.get('/api/reports/catalog'), 'UNAUTHENTICATED');
    const stopped = await service.addOrganization('Arrêtée', []);
    await setSubscription(service.db, stopped.org.id, 'stopped');
    await expectError(await service.get('/api/reports/catalog', stopped.key), 'SUBSCRIPTION_INACTIVE');
  });

  test('E3: 404 and 405', async () => {
    await expectError(await service.get('/api/nothing-here', key), 'NOT_FOUND');
    await expectError(
      await fetch(`${service.baseUrl}/api/reports/catalog`, { method: 'DELETE' }),
      'METHOD_NOT_ALLOWED',
    );
  });

  test('E3: 429s are told apart: the key’s rate limit and the address’s failed authentications', async () => {
    const own = (await service.addOrganization('Limitée', [])).key;
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) last = await service.get('/api/reports/catalog', own);
    await expectError(last!, 'RATE_LIMITED');
    // Unknown keys are 401 until the address has used up its failures (the earlier tests count too).
    let failures = 0;
    for (;;) {
      const response = await service.get('/api/reports/catalog', mintKey());
      if (response.status === 429) break;
      await expectError(response, 'UNAUTHENTICATED');
      assert.ok(++failures <= 2, 'AUTH_FAILURE_LIMIT is 2');
    }
    await expectError(await service.get('/api/reports/catalog', key), 'AUTH_FAILURES_LIMITED');
  });

  test('E3: headers over 16 KiB get a French JSON 431 with its code, before any route', async () => {
    const url = new URL(service.baseUrl);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () =>
        socket.write(`GET /api/reports/catalog HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      );
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('utf8')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 431 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    assert.equal(body.code, 'HEADERS_TOO_LARGE');
    assert.match(String(body.error), /En-têtes/);
  });
});
