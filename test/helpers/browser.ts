// Debian's Chromium (apt-get install chromium) driven by playwright-core: never a downloaded
// browser. Under CI=true a missing Chromium fails the run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Browser } from 'playwright-core';

// require(), not import: an ESM import of this CommonJS package has Node scan its whole bundle
// for export names first (cjs-module-lexer), about half a second of CPU in every browser test file.
const { chromium } = createRequire(import.meta.url)('playwright-core') as typeof import('playwright-core');

export const CHROMIUM = '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  const found = fs.existsSync(CHROMIUM);
  if (!found && process.env.CI === 'true') throw new Error('CI=true and /usr/bin/chromium is not installed');
  return found;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      // Without these, Chromium keeps trying to reach outside hosts, refused on this network.
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ], // playwright gives each launch a fresh empty profile of its own
  });
}

export const SCREENSHOTS = path.join(os.tmpdir(), 'sales-metrics-screenshots');
