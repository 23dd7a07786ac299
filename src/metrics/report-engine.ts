// The engine the service runs reports with (REPORT_ENGINE): the columnar engine in front of the
// SQL engine, which stays the reference and answers whatever the columnar engine cannot.
import type { Config } from '../config.js';
import type { SnapshotSource } from './columnar/build-snapshot.js';
import { ColumnarReportEngine, type SnapshotEvent } from './columnar/columnar-engine.js';
import { SqlReportEngine, type ReportEngine } from './engine.js';

export function reportEngineFor(
  config: Pick<Config, 'reportEngine' | 'reportMemoryMb'> &
    Partial<Pick<Config, 'reportSnapshotDir' | 'reportBuildingSqlMs'>>,
  db: SnapshotSource,
  onEvent?: (event: SnapshotEvent) => void,
): ReportEngine {
  const sql = new SqlReportEngine(db);
  if (config.reportEngine === 'sql') return sql;
  return new ColumnarReportEngine(db, sql, {
    memoryBudgetBytes: config.reportMemoryMb * 1024 * 1024,
    ...(config.reportSnapshotDir ? { snapshotDir: config.reportSnapshotDir } : {}),
    ...(config.reportBuildingSqlMs ? { buildingSqlBudgetMs: config.reportBuildingSqlMs } : {}),
    ...(onEvent ? { onEvent } : {}),
  });
}
