// Issue 28, item 1: a large import leaves its organization's report snapshot built and saved, so
// that the first report after it (a server started now, or one already running that reads the
// saved file) takes the fast path instead of SQL while the server builds it. The command prepares
// it as a server's background preparation would (src/metrics/columnar/cold-start.ts): the saved
// file read back and brought up to date, or a build from the database, then saved. On PostgreSQL
// with a shared REPORT_SNAPSHOT_DIR the build runs under the same advisory lock as the instances'
// builds, so an instance that notices the import meanwhile waits for it and reads the file.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { errorFields } from '../errors.js';
import type { ImportSnapshot } from '../metrics/columnar/import-snapshot.js';

/**
 * A batch this large leaves the snapshot ready; a smaller one (a few orders into a large
 * organization) is left to the server's delta, which costs far less than reading a file back,
 * bringing it up to date and saving it again from a command.
 */
export const PREPARE_MIN_ORDERS = 10_000;

export type Preparation =
  | {
      readonly prepared: true;
      readonly orders: number;
      readonly ms: number;
      /** Built from the orders as the import wrote them, or read back from the database. */
      readonly from: 'import' | 'database';
    }
  | { readonly prepared: false; readonly reason: string };

/**
 * Issue 27: the snapshot a command's first import builds as it writes its orders
 * (src/metrics/columnar/import-snapshot.ts), when the reports use snapshots saved to a folder;
 * prepareReports then saves it instead of reading the rows back.
 */
export async function snapshotWhileWriting(
  config: Config,
  db: Database,
  organizationId: string,
): Promise<ImportSnapshot | undefined> {
  if (!db.hostedByCommand || config.reportEngine !== 'columnar' || !config.reportSnapshotDir)
    return undefined;
  const { ImportSnapshot } = await import('../metrics/columnar/import-snapshot.js');
  return new ImportSnapshot(organizationId, config.reportMemoryMb * 1024 * 1024);
}

/** The statistics' refresh an import left to its command (refreshAfterImport), with work beside it. */
export type Refresh = (beside?: () => Promise<void>) => Promise<void>;

/**
 * Prepares and saves the organization's snapshot after a batch of `written` orders: `built` when
 * the import built it as it wrote (and nothing changed since), else read from the database.
 * `refresh`: the statistics' refresh the import left to the command, run here in any case, and
 * with the built snapshot made and saved while the database analyzes (issue 27: at a million
 * orders, ANALYZE held PGlite's thread 1.7 s, then the snapshot the command's 1.3 s, one after the
 * other); before a read from the database, whose plans want the fresh statistics.
 */
export async function prepareReports(
  config: Config,
  db: Database,
  organizationId: string,
  written: number,
  built?: ImportSnapshot,
  refresh?: Refresh,
): Promise<Preparation> {
  let refreshed: Promise<void> | undefined;
  const refreshing: Refresh = (beside) => (refreshed ??= refresh?.(beside) ?? Promise.resolve());
  try {
    return await prepare(config, db, organizationId, written, built, refreshing);
  } finally {
    await refreshing();
  }
}

async function prepare(
  config: Config,
  db: Database,
  organizationId: string,
  written: number,
  built: ImportSnapshot | undefined,
  refreshing: Refresh,
): Promise<Preparation> {
  if (written < PREPARE_MIN_ORDERS) return { prepared: false, reason: 'small' };
  if (config.reportEngine !== 'columnar' || !config.reportSnapshotDir)
    return { prepared: false, reason: 'no-snapshots' };
  // The report engines are loaded by a large import only (issue 28: a command's start).
  const { ColumnarReportEngine } = await import('../metrics/columnar/columnar-engine.js');
  const { reportEngineFor } = await import('../metrics/report-engine.js');
  const engine = reportEngineFor(config, db, { linesAhead: true }); // no report to answer meanwhile
  if (!(engine instanceof ColumnarReportEngine)) return { prepared: false, reason: 'no-snapshots' };
  const started = performance.now();
  try {
    const make = await built?.labelled(db);
    if (make) {
      // Its statements first: the database's identity too, which the saved file is named by.
      const { identityOf } = await import('../metrics/columnar/persist.js');
      const identity = await identityOf(db, organizationId);
      let adopted: Promise<void> | undefined;
      const adopt = () => (adopted ??= make().then((live) => engine.adopt(organizationId, live, identity)));
      await refreshing(adopt);
      await adopt(); // when nothing was analyzed
    } else {
      await refreshing();
      await engine.prepare(organizationId, undefined, { save: true });
    }
    await engine.saved();
    const orders = engine.heldOrders(organizationId);
    if (orders === undefined) return { prepared: false, reason: 'not-built' };
    return {
      prepared: true,
      orders,
      ms: Math.round(performance.now() - started),
      from: make ? 'import' : 'database',
    };
  } catch (error) {
    return {
      prepared: false,
      reason: errorFields(error).code ?? (error instanceof Error ? error.message : String(error)),
    };
  } finally {
    await engine.close();
  }
}
