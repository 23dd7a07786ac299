// The server: open the database (migrate, seed the demo if asked) while the routes are built,
// listen once both are done; stop on SIGTERM/SIGINT.
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { deferredDatabase } from './db/deferred-database.js';
import { migrate } from './db/migrate.js';
import { schemaIsCurrent } from './db/schema-version.js';
import type { DemoAccess } from './demo/seed.js';
import { recoverInterruptedImports } from './ingest/jobs.js';
import { releaseAllLeases } from './ingest/connectors/connections.js';

/** What must be done to the database before the server answers: the schema, then what a killed process left. */
async function prepareDatabase(config: Config, db: Database): Promise<DemoAccess | undefined> {
  // One statement when the schema is current (issue 28), as for a command: migrate() takes a lock
  // and runs a transaction per migration, a hundred round trips through PGlite's one session.
  if (!(await schemaIsCurrent(db))) await migrate(db);
  // Imports killed with a previous process: failed, their staged rows gone (finding 7). On the
  // embedded database this server is the only process, so every unfinished job was killed.
  const interrupted = await recoverInterruptedImports(db, { everyJob: db.engine === 'embedded' });
  if (interrupted > 0) process.stderr.write(`${interrupted} import(s) interrompu(s) marqué(s) en échec\n`);
  if (db.engine === 'embedded') await releaseAllLeases(db);
  if (!config.demo) return undefined;
  // Loaded only for the demo: a tenth of a second of modules before PGlite's worker could start.
  const { seedDemo } = await import('./demo/seed.js');
  return seedDemo(db, config.demoDays, (line) => process.stderr.write(`${line}\n`));
}

/** The database opened and prepared; closed again if its preparation fails. */
async function openPrepared(
  config: Config,
  onHostStarting: () => void,
): Promise<{ db: Database; demo: DemoAccess | undefined }> {
  const db = await openDatabase(config, { role: 'server', onHostStarting });
  try {
    return { db, demo: await prepareDatabase(config, db) };
  } catch (error) {
    // A failed migration…: release the database (and its lock) so the command exits.
    await db.close().catch(() => undefined);
    throw error;
  }
}

export async function serve(config: Config): Promise<void> {
  // Issue 28: PGlite starts in its worker thread while this thread loads the server's modules and
  // builds its routes, a second or two each on a 2-core machine. The app reaches the
  // database through a stand-in that waits for the preparation, so that nothing it starts (the
  // snapshots' read-back, the time zones) reads a schema not yet migrated. The modules are loaded
  // once PGlite's worker has been started: loaded first, they held this thread for about half a
  // second before the worker could start (its WebAssembly compiled, the thread made), and PGlite's
  // own start (a second) came after them instead of beside them.
  let hostStarting = (): void => undefined;
  const modulesMayLoad =
    config.databaseUrl === undefined
      ? new Promise<void>((resolve) => (hostStarting = resolve))
      : Promise.resolve();
  const prepared = openPrepared(config, () => hostStarting());
  void prepared.finally(() => hostStarting()).catch(() => undefined); // not hosted here, or failed
  const db = deferredDatabase(
    // A database that failed to open stops the start below, with its own message; the app, closed
    // then, is not also made to log it from each of its first queries.
    prepared.then(
      (p) => p.db,
      () => new Promise<never>(() => undefined),
    ),
    { engine: config.databaseUrl === undefined ? 'embedded' : 'postgres', secretKey: config.secretKey },
  );
  const building = modulesMayLoad
    .then(() => import('./app.js'))
    .then(({ buildApp }) => buildApp(config, { db }));
  building.catch(() => undefined); // awaited below, after the database
  let opened: Awaited<typeof prepared> | undefined;
  let app: Awaited<typeof building> | undefined;
  try {
    opened = await prepared;
    app = await building;
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // Port in use, failed migration…: release the database (and its lock) so the command exits.
    await (app ?? (await building.catch(() => undefined)))?.close().catch(() => undefined);
    await opened?.db.close().catch(() => undefined);
    throw error;
  }
  const server = app;
  const { demo } = opened;
  const baseUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  // The demo key and password go to the terminal (stderr), never into the JSON log stream on
  // stdout that a log collector keeps (issue 7, finding 9).
  if (demo) (await import('./demo/seed.js')).printDemo(demo, baseUrl, process.stderr);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    server.log.info({ signal }, 'arrêt en cours : fin des requêtes en cours, fermeture des connexions');
    void server
      .close()
      .then(() => opened.db.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
