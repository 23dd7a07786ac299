#!/usr/bin/env node
// Takes docs/images/revenue.png, the README's picture of the Revenue page, from a running demo
// (`npm start`): signs in with the demo login and shots the page, with Debian's Chromium driven by
// playwright-core as the browser tests do (test/helpers/browser.ts).
// Usage: node scripts/screenshot-revenue.js http://127.0.0.1:3000 demo@sales-metrics.test PASSWORD
import path from 'node:path';
import { chromium } from 'playwright-core';

const [baseUrl = 'http://127.0.0.1:3000', email = 'demo@sales-metrics.test', password] =
  process.argv.slice(2);
if (!password)
  throw new Error('usage: screenshot-revenue.js BASE_URL EMAIL PASSWORD (the demo login npm start prints)');
const out = path.resolve(import.meta.dirname, '../docs/images/revenue.png');

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Adresse e-mail').fill(email);
  await page.getByLabel('Mot de passe').fill(password);
  await page.getByRole('button', { name: 'Se connecter' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/login'));
  await page.goto(`${baseUrl}/reports/revenue`);
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
}
