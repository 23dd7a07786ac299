// D1: GET /api/docs renders the OpenAPI document in Debian's Chromium, with everything served by
// the service itself (no request leaves for another host) and nothing refused by its CSP; and
// GET /api/openapi.json answers without a key.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchBrowser } from '../helpers/browser.js';
import { describeOn } from '../helpers/database.js';
import { startTestService, type TestService } from '../helpers/service.js';

/** A rule id of the contract (docs/rules.md): S1, U3, PC1, L10… as a word of its own. */
const RULE_ID = /\b(?:PC1|L10|[SUMPTKCRBEGXIFODVL][1-9])\b/g;

describeOn('embedded', 'API reference page', () => {
  let service: TestService;
  let browser: Browser;

  before(async () => {
    assert.ok(chromiumAvailable(), 'Debian chromium is installed');
    service = await startTestService();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await service?.cleanup();
  });

  test('D1: /api/openapi.json needs no key and is OpenAPI 3.1 with the bearer scheme', async () => {
    const response = await fetch(`${service.baseUrl}/api/openapi.json`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, unknown>;
      components: { securitySchemes: Record<string, { type: string; scheme: string }> };
    };
    assert.equal(document.openapi, '3.1.0');
    assert.deepEqual(Object.keys(document.paths).sort(), ['/api/reports/catalog', '/api/reports/tabular']);
    const schemes = Object.values(document.components.securitySchemes);
    assert.deepEqual(
      schemes.map(({ type, scheme }) => ({ type, scheme })),
      [{ type: 'http', scheme: 'bearer' }],
    );
  });

  test('issue 30: the OpenAPI document names no rule id of the contract: its reader has only the service', async () => {
    const document = await (await fetch(`${service.baseUrl}/api/openapi.json`)).text();
    const ruleIds = [...document.matchAll(RULE_ID)].map(([id]) => id);
    assert.deepEqual(ruleIds, [], 'rule ids (K3, PC1…) in the texts of /api/openapi.json and /api/docs');
    assert.doesNotMatch(document, /\bsections? \d/i, 'no section number of the contract either');
    // The check itself: it sees an id in a sentence and leaves dates, error codes and words alone.
    assert.deepEqual([...'P1, P2: ids; PC1 (T3). L10 2026-03-01T23:30 B2B K3s'.matchAll(RULE_ID)].length, 5);
  });

  test('D1: /api/docs renders both operations in Chromium, from this origin only, with no CSP refusal', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    const refused: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(service.baseUrl) && !request.url().startsWith('data:'))
        elsewhere.push(request.url());
    });
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
    });
    const response = await page.goto(`${service.baseUrl}/api/docs`);
    assert.equal(response?.status(), 200);
    await page.getByText('Sales Metrics API').first().waitFor({ timeout: 20_000 });
    await page.getByText('/api/reports/tabular').first().waitFor();
    await page.getByText('/api/reports/catalog').first().waitFor();
    assert.deepEqual(elsewhere, [], 'no request to another host');
    assert.deepEqual(refused, [], 'nothing refused by the page’s CSP');
    const csp = response?.headers()['content-security-policy'] ?? '';
    assert.match(csp, /script-src 'self'(;|$)/, 'scripts from this origin only, none inline');
    await page.close();
  });
});
