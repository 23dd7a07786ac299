// The server: open the database, migrate, seed the demo if asked, listen; stop on SIGTERM/SIGINT.
import type { Config } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { buildApp } from './app.js';
import { seedDemo, printDemo } from './demo/seed.js';

export async function serve(config: Config): Promise<void> {
  const db = await openDatabase(config, { role: 'server' });
  await migrate(db);
  const demo = config.demo ? await seedDemo(db, (line) => process.stderr.write(`${line}\n`)) : undefined;
  const app = await buildApp(config, { db });
  await app.listen({ port: config.port, host: config.host });
  const baseUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  if (demo) printDemo(demo, baseUrl, process.stdout);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    void app
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
