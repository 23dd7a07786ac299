// Issue 28, item 3, in Chromium: while the organization's snapshot builds (held by a real lock on
// the orders table), the Revenue page says « Calcul en cours… » with the time left instead of an
// error, and shows the figures by itself once the build is done. On a PostgreSQL server: there
// the lock holds the build alone (on the embedded database its transaction holds the one session,
// and with it the page's sign-in).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { addUserToOrganization } from '../../src/domain/users.js';
import { chromiumAvailable, launchBrowser } from '../helpers/browser.js';
import { engine } from '../helpers/database.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { PASSWORD } from '../helpers/web-client.js';

// Registered on PostgreSQL only (the lock would hold the embedded database’s one session): a skipped test fails CI's run.
const onPostgres = engine === 'postgres';
const order = (id: number, total: string) => ({
  store: 'https://froid.example',
  id: String(id),
  created_at: `2026-03-0${id}T10:00:00Z`,
  status: 'completed',
  customer_email: `c${id}@x.fr`,
  items: 1,
  total,
});

let service: TestService;
let browser: Browser;
let page: Page;

before(async () => {
  if (!onPostgres) return;
  assert.ok(chromiumAvailable(), 'Debian chromium is installed');
  // No background preparation: the page's own request starts the build.
  service = await startTestService({
    REPORT_BUILDING_SQL_MS: '300',
    REPORT_WARM_INTERVAL_MS: '0',
    REPORT_SNAPSHOT_DIR: 'none',
  });
  const { org } = await service.addOrganization('Atelier Froid', [order(1, '100.00'), order(2, '50.00')]);
  await addUserToOrganization(service.db, org.id, 'froid@example.com', PASSWORD);
  browser = await launchBrowser();
  page = await browser.newPage();
});
after(async () => {
  await browser?.close();
  await service?.cleanup();
});

if (onPostgres)
  test('issue 28: the Revenue page shows « Calcul en cours » and the time left while the snapshot builds, then the figures by itself', async () => {
    let release = () => {};
    let locked = () => {};
    const held = new Promise<void>((resolve) => (locked = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const lock = service.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      locked();
      await released;
    });
    await held;
    try {
      // Signed in under the lock: the page it lands on would otherwise start (and end) the build.
      await page.goto(`${service.baseUrl}/login`);
      await page.getByLabel('Adresse e-mail').fill('froid@example.com');
      await page.getByLabel('Mot de passe').fill(PASSWORD);
      await page.getByRole('button', { name: 'Se connecter' }).click();
      await page.waitForURL((url) => !url.pathname.startsWith('/login'));
      const response = await page.goto(`${service.baseUrl}/reports/revenue?from=2026-03-01&to=2026-03-31`);
      assert.equal(response?.status(), 503);
      const notice = (await page.getByRole('status').textContent()) ?? '';
      assert.match(notice, /Calcul en cours…/);
      assert.match(notice, /encore environ\s+\d+\s(s|min)\b/);
      assert.equal(await page.locator('#revenue-totals').count(), 0, 'no figures yet');
    } finally {
      release();
      await lock;
    }
    // The page reloads itself after Retry-After (seconds): the figures, from the built snapshot.
    const orders = page.locator('#revenue-totals td[data-col=orders]');
    await orders.waitFor({ timeout: 20_000 });
    assert.match((await orders.textContent()) ?? '', /^\s*2\s*$/);
  });
