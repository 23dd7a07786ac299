// Issue 27, item 6: the PostgreSQL settings of the embedded database by the role of the process
// that hosts it (src/db/embedded.ts, HOST_SETTINGS). A command hosting it for itself (a large
// `import` with no server running) gets a larger buffer pool, so that the import's staging, the
// orders and lines it writes and the snapshot read back from them stay in memory; a server keeps
// PGlite's default (it holds the snapshots in memory for days). Both skip zero-filling new WAL
// files. Embedded engine only: a PostgreSQL server's settings are its operator's.
import assert from 'node:assert/strict';
import type { Config } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { migratedConfig, testOn } from '../helpers/database.js';

const settingsOf = async (config: Config, role: 'cli' | 'server') => {
  const db = await openDatabase(config, { role });
  try {
    const [row] = await db.query<{ buffers: string; zero: string }>(
      `SELECT current_setting('shared_buffers') AS buffers, current_setting('wal_init_zero') AS zero`,
    );
    return row;
  } finally {
    await db.close();
  }
};

testOn(
  'embedded',
  'issue 27 item 6: a command hosting the embedded database gets a larger buffer pool than a server',
  async () => {
    const { config, drop } = await migratedConfig();
    try {
      assert.deepEqual(await settingsOf(config, 'cli'), { buffers: '512MB', zero: 'off' });
      assert.deepEqual(await settingsOf(config, 'server'), { buffers: '128MB', zero: 'off' });
    } finally {
      await drop();
    }
  },
);
