import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../src/errors.js';
import { toOrganization } from '../../../src/domain/organizations.js';

const ROW = {
  id: '7',
  slug: 'acme',
  name: 'Acme',
  currency: 'EUR',
  subscription_state: 'trialing',
  trial_ends_on: '2026-12-08',
  excluded_statuses: ['pending', 'failed'],
  deductions: ['refunds', 'taxes'],
};

test('toOrganization decodes a row of ORGANIZATION_COLUMNS', () => {
  assert.deepEqual(toOrganization(ROW), {
    id: '7',
    slug: 'acme',
    name: 'Acme',
    currency: 'EUR',
    subscriptionState: 'trialing',
    trialEndsOn: '2026-12-08',
    settings: { excludedStatuses: ['pending', 'failed'], deductions: ['refunds', 'taxes'] },
  });
  assert.equal(
    toOrganization({ ...ROW, subscription_state: 'active', trial_ends_on: null }).trialEndsOn,
    null,
  );
});

test('toOrganization checks what it decodes: a row that breaks the schema is an internal error, not a cast', () => {
  for (const broken of [
    { subscription_state: 'paused' },
    { trial_ends_on: new Date() },
    { excluded_statuses: 'pending' },
    { excluded_statuses: [1] },
    { deductions: ['refunds', 'bribes'] },
  ]) {
    assert.throws(
      () => toOrganization({ ...ROW, ...broken }),
      (error: unknown) => error instanceof AppError && error.code === 'INTERNAL',
      JSON.stringify(broken),
    );
  }
});
