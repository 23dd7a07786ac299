// Issue 18, finding 7: user and store text on the pages, in Chromium at 1,280 px. A long value
// without spaces (status, organization name, store address, key name) wraps instead of widening
// the page; a right-to-left override (U+202E) in a value neither reverses the value nor the text
// after it: the value is isolated (<bdi>) and the override shown as what it is.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createApiKey } from '../../src/auth/api-keys.js';
import { createOrganization, setSubscription } from '../../src/domain/organizations.js';
import { addUserToOrganization } from '../../src/domain/users.js';
import { importOrderRecords } from '../../src/ingest/import.js';
import { chromiumAvailable, launchBrowser } from '../helpers/browser.js';
import { describeOn } from '../helpers/database.js';
import { startTestService, type TestService } from '../helpers/service.js';

const RLO = '\u202e';
const LONG_STATUS = 's'.repeat(200);
const LONG_NAME = 'O'.repeat(100); // MAX_ORGANIZATION_NAME
const LONG_STORE = `https://boutique.example.fr/${'chemin'.repeat(80)}`;
const EMAIL = `${'u'.repeat(60)}@${'d'.repeat(60)}.example.fr`;
const PASSWORD = 'long enough password';
const SPOOFED = `${RLO}gnp.exe`;

const order = (id: string, store: string, status: string) => ({
  store,
  id,
  created_at: '2026-03-01T10:00:00Z',
  status,
  items: 1,
  total: '10.00',
});

// In the page (the tests' TypeScript has no DOM types): each text node holding "gnp.exe", whether
// its element isolates it, and its text.
const HOLDERS = `(() => {
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.includes('gnp.exe')) continue;
    const element = node.parentElement;
    if (!element || element.closest('option, select')) continue;
    // The element holding the text itself (the UA stylesheet isolates every div, p, form… but
    // that only matters with a dir attribute, and not for the text that follows in the block).
    const isolated = element.localName === 'bdi' || getComputedStyle(element).unicodeBidi === 'isolate';
    found.push({ isolated, shown: node.textContent, html: element.outerHTML.slice(0, 200) });
  }
  return found;
})()`;

// Where the "g" of "gnp.exe" and the "e" after its dot are drawn, in the first text holding it.
const DRAWN = `(() => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.textContent.indexOf('gnp.exe');
    if (at < 0) continue;
    const left = (start) => {
      const range = document.createRange();
      range.setStart(node, start);
      range.setEnd(node, start + 1);
      return range.getBoundingClientRect().left;
    };
    return { g: left(at), e: left(at + 4) };
  }
  return null;
})()`;

// Boxes whose content is wider than they are (a table scrolled sideways in .table-wrap).
const SCROLLED = `[...document.querySelectorAll('.table-wrap')]
  .filter((box) => box.scrollWidth > box.clientWidth + 1)
  .map((box) => box.scrollWidth + ' > ' + box.clientWidth + ': ' + box.innerHTML.slice(0, 80))`;

const PAGES = [
  '/reports/revenue?from=2026-03-01&to=2026-03-31',
  '/settings/report',
  '/settings/stores',
  '/settings/api-keys',
  '/settings/api-keys/new',
  '/settings/subscription',
];

describeOn('embedded', 'long and right-to-left text on the pages (Chromium, 1,280 px)', () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;

  const signIn = async (email: string) => {
    await page.goto(`${service.baseUrl}/login`);
    await page.getByLabel('Adresse e-mail').fill(email);
    await page.getByLabel('Mot de passe').fill(PASSWORD);
    await page.getByRole('button', { name: 'Se connecter' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/login'));
  };
  const scrollWidth = async () => (await page.evaluate('document.documentElement.scrollWidth')) as number;

  before(async () => {
    assert.ok(chromiumAvailable(), 'Debian chromium is installed');
    service = await startTestService();
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    await browser?.close();
    await service?.cleanup();
  });

  test('finding 7: a 200-character status, a long organization name, store address, key name and e-mail keep every page within 1,280 px', async () => {
    const org = await createOrganization(service.db, { name: LONG_NAME });
    await setSubscription(service.db, org.id, 'active');
    await addUserToOrganization(service.db, org.id, EMAIL, PASSWORD);
    await importOrderRecords(service.db, org.id, [
      order('1', LONG_STORE, LONG_STATUS),
      order('2', 'https://autre.example.fr', 'completed'),
    ]);
    await createApiKey(service.db, org.id, 'K'.repeat(100));
    await signIn(EMAIL);
    for (const path of PAGES) {
      await page.goto(`${service.baseUrl}${path}`);
      const body = (await page.locator('body').textContent()) ?? '';
      if (path === '/settings/report')
        assert.ok(body.includes(LONG_STATUS), 'the long status is on the page');
      if (path === '/settings/stores')
        assert.ok(body.includes(LONG_STORE), 'the long address is on the page');
      assert.ok(body.includes(LONG_NAME), `the organization's name is on ${path}`);
      const width = await scrollWidth();
      assert.ok(width <= 1280, `${path} is ${width} px wide at 1,280`);
      // Nor is a table's column pushed out of sight in its own scrolling box.
      assert.deepEqual(await page.evaluate(SCROLLED), [], `${path}: boxes scrolled sideways`);
    }
  });

  test('finding 7: a right-to-left override in a status or organization name is isolated and shown, not obeyed', async () => {
    const name = `Atelier ${SPOOFED}`;
    const org = await createOrganization(service.db, { name });
    await setSubscription(service.db, org.id, 'active');
    const email = 'rtl@atelier.example';
    await addUserToOrganization(service.db, org.id, email, PASSWORD);
    await importOrderRecords(service.db, org.id, [order('1', `https://rtl.example.fr`, SPOOFED)]);
    await page.context().clearCookies();
    await signIn(email);
    for (const path of [
      '/settings/report',
      '/settings/stores',
      '/reports/revenue?from=2026-03-01&to=2026-03-31',
    ]) {
      await page.goto(`${service.baseUrl}${path}`);
      // Every element whose own text holds the value: inside a <bdi> (or an isolating element).
      const holders = (await page.evaluate(HOLDERS)) as { isolated: boolean; shown: string; html: string }[];
      assert.ok(holders.length > 0, `the value is on ${path}`);
      for (const holder of holders) {
        assert.ok(holder.isolated, `not isolated on ${path}: ${holder.html}`);
        assert.ok(!holder.shown.includes(RLO), `the override is obeyed on ${path}: ${holder.html}`);
      }
    }
    // Visually: in the checkbox label "‮gnp.exe", "gnp" is drawn left of ".exe" (logical order).
    await page.goto(`${service.baseUrl}/settings/report`);
    const drawn = (await page.evaluate(DRAWN)) as { g: number; e: number } | null;
    assert.ok(drawn, 'the status is drawn');
    assert.ok(drawn.g < drawn.e, `"g" at ${drawn.g} px, "e" of ".exe" at ${drawn.e} px: reversed`);
  });
});
