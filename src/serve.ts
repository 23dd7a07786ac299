// The server: open the database, migrate, seed the demo if asked, listen; stop on SIGTERM/SIGINT.
import type { Config } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { buildApp } from './app.js';
import { seedDemo, printDemo, type DemoAccess } from './demo/seed.js';
import { recoverInterruptedImports } from './ingest/jobs.js';
import { releaseAllLeases } from './ingest/connectors/connections.js';

export async function serve(config: Config): Promise<void> {
  const db = await openDatabase(config, { role: 'server' });
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let demo: DemoAccess | undefined;
  try {
    await migrate(db);
    // Imports killed with a previous process: failed, their staged rows gone (finding 7). On the
    // embedded database this server is the only process, so every unfinished job was killed.
    const interrupted = await recoverInterruptedImports(db, { everyJob: db.engine === 'embedded' });
    if (interrupted > 0) process.stderr.write(`${interrupted} import(s) interrompu(s) marqué(s) en échec\n`);
    if (db.engine === 'embedded') await releaseAllLeases(db);
    demo = config.demo ? await seedDemo(db, (line) => process.stderr.write(`${line}\n`)) : undefined;
    app = await buildApp(config, { db });
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // Port in use, failed migration…: release the database (and its lock) so the command exits.
    await app?.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
  const server = app;
  const baseUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  // The demo key and password go to the terminal (stderr), never into the JSON log stream on
  // stdout that a log collector keeps (issue 7, finding 9).
  if (demo) printDemo(demo, baseUrl, process.stderr);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    server.log.info({ signal }, 'arrêt en cours : fin des requêtes en cours, fermeture des connexions');
    void server
      .close()
      .then(() => db.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
