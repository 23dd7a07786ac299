// The set-up the connected-store tests of both platforms share (issues 11 and 21): the real
// `sales-metrics serve` and CLI processes on a fresh database, trusting a stand-in shop's
// certificate; the comparison with a file import of the same orders; and a Chromium session on
// the Boutiques page. Each test keeps its own steps (kills, restarts, what it asserts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { addUserToOrganization } from '../../src/domain/users.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { launchBrowser } from './browser.js';
import {
  runCli,
  startServer,
  startServerOnFreshDatabase,
  type FreshServer,
  type ServerProcess,
} from './processes.js';
import type { TestService } from './service.js';
import { answers, assertSameAnswers } from './woocommerce-expectations.js';

export interface StoreProcesses {
  readonly dir: string;
  /** The server's environment: its database, the stand-in's certificate, the sync settings. */
  readonly serverEnv: Record<string, string>;
  /** The CLI's environment: the same database and certificate (its own log level). */
  readonly env: Record<string, string>;
  readonly fresh: FreshServer;
  /** Every server started, killed ones included (their whole output can be searched). */
  readonly servers: ServerProcess[];
  /** The server running now (the last one started). */
  current(): ServerProcess;
  /** `sales-metrics ARGS --json`: its parsed answer; a failure fails the test. */
  cli(...args: string[]): Promise<Record<string, unknown>>;
  /**
   * `sales-metrics store connect --org ORG --platform PLATFORM --address ADDRESS EXTRA --json`,
   * `stdin` written to it: its exit code and output as they came (refusals are what some tests check).
   */
  connect(
    store: { readonly org: string; readonly platform: 'woocommerce' | 'shopify'; readonly address: string },
    extra: readonly string[],
    stdin?: string,
  ): ReturnType<typeof runCli>;
  /** GET on the running server, with an API key. */
  get(query: string, key?: string): Promise<Response>;
  /** The database, as the CLI opens it (once). */
  database(): Promise<Database>;
  /** Starts another server on the same database (after a kill, or a second instance). */
  startAnother(env?: Record<string, string>): Promise<ServerProcess>;
  /** Stops the servers (the last one's exit code, 0 expected), drops the database and the folder. */
  stop(): Promise<number | null>;
}

/** `sales-metrics serve` on a fresh database, trusting `ca` (NODE_EXTRA_CA_CERTS). */
export async function startStoreProcesses(options: {
  ca: string;
  prefix: string;
  serverEnv: Record<string, string>;
}): Promise<StoreProcesses> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), options.prefix));
  const caFile = path.join(dir, 'stand-in-ca.pem');
  fs.writeFileSync(caFile, options.ca);
  const serverEnv: Record<string, string> = { ...options.serverEnv, NODE_EXTRA_CA_CERTS: caFile };
  const fresh = await startServerOnFreshDatabase(serverEnv);
  const cliEnv = Object.fromEntries(Object.entries(serverEnv).filter(([name]) => name !== 'LOG_LEVEL'));
  const env = { ...fresh.env, ...cliEnv };
  const servers: ServerProcess[] = [fresh.server];
  let db: Database | undefined;
  const current = () => servers.at(-1)!;
  return {
    dir,
    serverEnv,
    env,
    fresh,
    servers,
    current,
    async cli(...args) {
      const result = await runCli([...args, '--json'], env);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return JSON.parse(result.stdout) as Record<string, unknown>;
    },
    connect: (store, extra, stdin) =>
      runCli(
        [
          'store',
          'connect',
          '--org',
          store.org,
          '--platform',
          store.platform,
          '--address',
          store.address,
          ...extra,
          '--json',
        ],
        env,
        stdin,
      ),
    get: (query, key) =>
      fetch(`${current().baseUrl}${query}`, { headers: key ? { authorization: `Bearer ${key}` } : {} }),
    async database() {
      db ??= await openDatabase(loadConfig({ ...fresh.env }), { role: 'cli' });
      return db;
    },
    async startAnother(extra = {}) {
      const server = await startServer({ ...fresh.env, ...serverEnv, ...extra });
      servers.push(server);
      return server;
    },
    async stop() {
      await db?.close();
      const others = servers.slice(1);
      const codes = await Promise.all(others.map((server) => server.stop()));
      await fresh.stop();
      fs.rmSync(dir, { recursive: true, force: true });
      return codes.at(-1) ?? 0;
    },
  };
}

/**
 * An organization that imported `lines` from a file with `sales-metrics import` answers the same
 * as `org` on each server given (default: the running one).
 */
export async function assertSameAsFileImport(
  processes: StoreProcesses,
  org: string,
  lines: readonly Record<string, unknown>[],
  on: readonly ServerProcess[] = [processes.current()],
): Promise<void> {
  const { cli } = processes;
  const { slug: twin } = await cli('org', 'create', '--name', `Import ${org}`.slice(0, 100));
  const file = path.join(processes.dir, `commandes-${String(twin)}.ndjson`);
  fs.writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  assert.deepEqual(await cli('import', '--org', String(twin), file), {
    imported: lines.length,
    updated: 0,
    rejected: 0,
  });
  const synced = String((await cli('key', 'create', '--org', org, '--name', 'comparaison')).key);
  const imported = String((await cli('key', 'create', '--org', String(twin), '--name', 'comparaison')).key);
  for (const server of on) {
    const service = {
      get: (query: string, key?: string) =>
        fetch(`${server.baseUrl}${query}`, { headers: key ? { authorization: `Bearer ${key}` } : {} }),
    };
    assertSameAnswers(await answers(service, synced), await answers(service, imported));
  }
}

/** A secret as it could be written: itself, in hex (bytea as text) and in base64. */
export const secretForms = (secrets: readonly string[]): string[] =>
  secrets.flatMap((s) => [s, Buffer.from(s).toString('hex'), Buffer.from(s).toString('base64')]);

/** The database as a dump: no secret in any row of any table, as text (bytea as hex). */
export async function assertNoSecretInDatabase(db: Database, secrets: readonly string[]): Promise<void> {
  const forms = secretForms(secrets);
  const tables = await db.query<{ name: string }>(
    `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name
     FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  assert.ok(tables.some((t) => t.name.endsWith('store_connections')));
  for (const { name } of tables) {
    const rows = await db.query<{ text: string | null }>(
      `SELECT string_agg(t::text, E'\\n') AS text FROM ${name} t`,
    );
    const dump = rows[0]?.text ?? '';
    for (const form of forms) assert.ok(!dump.includes(form), `a secret in ${name}`);
  }
}

export interface StoresPageSession {
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  /** Every address the browser asked for. */
  readonly requested: string[];
  /** Every answer's body (to search for secrets). */
  readonly bodies: Promise<string>[];
}

/** A member of `organizationId` logged in, in Chromium, on the Boutiques page. */
export async function openStoresPage(
  service: TestService,
  organizationId: string,
  user: { email: string; password: string },
  prepare: (context: BrowserContext) => Promise<void> = async () => undefined,
): Promise<StoresPageSession> {
  await addUserToOrganization(service.db, organizationId, user.email, user.password);
  const browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await prepare(context);
  const page = await context.newPage();
  const requested: string[] = [];
  const bodies: Promise<string>[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('response', (response: PageResponse) => void bodies.push(response.text().catch(() => '')));
  await page.goto(`${service.baseUrl}/login?next=${encodeURIComponent('/settings/stores')}`);
  await page.getByLabel('Adresse e-mail').fill(user.email);
  await page.getByLabel('Mot de passe').fill(user.password);
  await page.getByRole('button', { name: 'Se connecter' }).click();
  await page.waitForURL(/\/settings\/stores$/);
  return { browser, context, page, requested, bodies };
}
