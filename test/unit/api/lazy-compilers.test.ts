// Issue 28 and D1: the routes' schemas are compiled when first needed (or once the server listens),
// not at start, and each route validates its input exactly as Fastify's own compilers do: the same
// requests, through an app with Fastify's default compilers and one with LazyCompilers, get the
// same answers (accepted with the same coerced values, or refused for the same reasons).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { LazyCompilers } from '../../../src/api/lazy-compilers.js';
import { TabularParameters } from '../../../src/api/schemas.js';
import { LoginForm } from '../../../src/web/forms.js';

type Factory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

function withRoutes(app: FastifyInstance): FastifyInstance {
  const echo = async (request: { query: unknown; body: unknown; validationError?: Error }) => ({
    query: request.query,
    body: request.body ?? null,
    refused: request.validationError?.message ?? null,
  });
  app.get('/tabular', { schema: { querystring: TabularParameters }, attachValidation: true }, echo);
  app.post('/login', { schema: { body: LoginForm }, attachValidation: true }, echo);
  return app;
}

const requests = [
  { method: 'GET', url: '/tabular?metrics=orders' },
  { method: 'GET', url: '/tabular?metrics=orders&limit=12&offset=3' },
  { method: 'GET', url: '/tabular?metrics=orders&limit=abc' },
  { method: 'GET', url: '/tabular?metrics=orders&metrics=net_revenue&granularity=week' },
  { method: 'GET', url: '/tabular?granularity=hour' },
  { method: 'GET', url: '/tabular' },
  { method: 'POST', url: '/login', payload: { email: 'a@b.fr', password: 'x' } },
  { method: 'POST', url: '/login', payload: { email: 'a@b.fr', extra: 'refused' } },
  { method: 'POST', url: '/login', payload: { email: ['a', 'b'] } },
] as const;

test('issue 28, D1: lazily compiled validators answer every request as Fastify’s own do', async () => {
  const eager = withRoutes(Fastify());
  const compilers = new LazyCompilers();
  const lazy = withRoutes(
    Fastify({
      schemaController: {
        compilersFactory: {
          buildValidator: compilers.buildValidator as unknown as Factory['buildValidator'],
          buildSerializer: compilers.buildSerializer as unknown as Factory['buildSerializer'],
        },
      },
    }),
  );
  await Promise.all([eager.ready(), lazy.ready()]);
  assert.equal(compilers.pending, 3, 'nothing compiled by the start (GET, its HEAD, POST)');
  try {
    const answers: { query: { limit?: unknown }; refused: string | null }[] = [];
    for (const request of requests) {
      const [expected, actual] = await Promise.all([eager.inject(request), lazy.inject(request)]);
      assert.equal(actual.statusCode, expected.statusCode, request.url);
      assert.deepEqual(actual.json(), expected.json(), `${request.method} ${request.url}`);
      answers.push(actual.json());
    }
    assert.equal(compilers.pending, 1, 'compiled by the requests that needed them: HEAD /tabular not yet');
    assert.equal(answers[1]?.query.limit, 12, 'the query string coerced as before');
    assert.equal(answers.filter((a) => a.refused !== null).length, 4, 'the same refusals');
  } finally {
    await Promise.all([eager.close(), lazy.close()]);
  }
});

/** The test routes on an app whose validators come from LazyCompilers, ready, none compiled yet. */
async function lazyValidatorsApp() {
  const compilers = new LazyCompilers();
  const app = Fastify({
    schemaController: {
      compilersFactory: { buildValidator: compilers.buildValidator as unknown as Factory['buildValidator'] },
    },
  });
  withRoutes(app);
  await app.ready();
  return { compilers, app };
}

test('issue 28: compileRest compiles, in the background, what no request has needed', async () => {
  const { compilers, app } = await lazyValidatorsApp();
  assert.equal(compilers.pending, 3); // GET, its HEAD, POST
  const failures: unknown[] = [];
  compilers.compileRest((error) => failures.push(error));
  assert.equal(compilers.pending, 2, 'one a turn of the event loop');
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(compilers.pending, 0);
  assert.deepEqual(failures, []);
  await app.close();
});

test('issue 28: compileRest waits while requests are under way, then compiles', async () => {
  const { compilers, app } = await lazyValidatorsApp();
  let busy = true;
  compilers.compileRest(
    (error) => assert.fail(String(error)),
    () => busy,
  );
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(compilers.pending, 3, 'nothing compiled while the server is busy');
  busy = false;
  const until = Date.now() + 5_000;
  while (compilers.pending > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(compilers.pending, 0, 'compiled once the server is idle');
  await app.close();
});
