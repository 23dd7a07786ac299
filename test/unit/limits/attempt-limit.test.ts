import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { AttemptLimit } from '../../../src/limits/attempt-limit.js';

/** A real Fastify app with the real rate-limit plugin: POST /try makes a slow attempt that fails. */
async function appWithLimit(serialize: boolean) {
  const fastify = Fastify();
  await fastify.register(rateLimit, { global: false });
  const failures = new AttemptLimit(fastify.createRateLimit({ max: 3, timeWindow: 60_000 }));
  let made = 0;
  fastify.post('/try', async (request) => {
    const result = await failures.run(
      request,
      async () => {
        made++;
        await new Promise((r) => setTimeout(r, 10));
        return { ok: false };
      },
      (outcome) => !outcome.ok,
      { serialize },
    );
    return { limited: 'limitedForMs' in result };
  });
  return { fastify, made: () => made };
}

const burst = async (fastify: Awaited<ReturnType<typeof appWithLimit>>['fastify'], n: number) =>
  Promise.all(
    Array.from({ length: n }, async () =>
      (await fastify.inject({ method: 'POST', url: '/try' })).json<{ limited: boolean }>(),
    ),
  );

test('AttemptLimit: parallel failing attempts from one address make no more attempts than the limit', async () => {
  const { fastify, made } = await appWithLimit(true);
  const answers = await burst(fastify, 20);
  assert.equal(made(), 3);
  assert.equal(answers.filter((a) => a.limited).length, 17);
  await fastify.close();
});

test('AttemptLimit: without the queue (serialize: false) parallel attempts all pass the check — why it exists', async () => {
  const { fastify, made } = await appWithLimit(false);
  await burst(fastify, 20);
  assert.ok(made() > 3, `${made()} attempts`);
  await fastify.close();
});
