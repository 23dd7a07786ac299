// The engine the service runs reports with (REPORT_ENGINE): the columnar engine in front of the
// SQL engine, which stays the reference and answers whatever the columnar engine cannot.
import type { Config } from '../config.js';
import type { ReportPlan } from '../query/plan.js';
import {
  observeSnapshotBytes,
  observeSnapshotsHeld,
  reportAnswers,
  snapshotBuildDuration,
  snapshotBuilds,
  snapshotDeltas,
  countEviction,
  observeOldestSnapshotIdle,
} from '../observability/metrics.js';
import type { SnapshotSource } from './columnar/build-snapshot.js';
import { ColumnarReportEngine, type SnapshotEvent } from './columnar/columnar-engine.js';
import { SqlReportEngine, type ReportEngine, type ReportRows } from './engine.js';

/** The SQL engine, each answer counted (issue 29: which engine answered, in /metrics). */
class CountedSqlEngine implements ReportEngine {
  constructor(private readonly sql: ReportEngine) {}

  run(plan: ReportPlan, signal?: AbortSignal): Promise<ReportRows> {
    reportAnswers.inc({ engine: 'sql' });
    return this.sql.run(plan, signal);
  }
}

/** Issue 29: the snapshot events an operator graphs, counted as they happen. */
function countEvent(event: SnapshotEvent): void {
  switch (event.event) {
    case 'built':
    case 'loaded':
      snapshotBuilds.inc({ outcome: event.event });
      snapshotBuildDuration.observe(
        { source: event.event === 'built' ? 'database' : 'file' },
        event.ms / 1000,
      );
      break;
    case 'unsupported':
      snapshotBuilds.inc({ outcome: 'unsupported' });
      break;
    case 'updated':
      snapshotDeltas.inc();
      break;
    case 'evicted':
      countEviction(event.bytes, event.idleMs / 1000);
      break;
    default:
  }
}

export function reportEngineFor(
  config: Pick<Config, 'reportEngine' | 'reportMemoryMb'> &
    Partial<Pick<Config, 'reportSnapshotDir' | 'reportBuildingSqlMs' | 'reportLargeBuildRows'>>,
  db: SnapshotSource,
  options: {
    readonly onEvent?: (event: SnapshotEvent) => void;
    /**
     * No report is answered while it builds (a command that prepares the reports, issue 28 item
     * 1): its builds read the lines ahead as the orders (BuildOptions.linesAhead).
     */
    readonly linesAhead?: boolean;
  } = {},
): ReportEngine {
  const { onEvent, linesAhead } = options;
  const sql = new CountedSqlEngine(new SqlReportEngine(db));
  if (config.reportEngine === 'sql') return sql;
  return new ColumnarReportEngine(db, sql, {
    memoryBudgetBytes: config.reportMemoryMb * 1024 * 1024,
    ...(config.reportSnapshotDir ? { snapshotDir: config.reportSnapshotDir } : {}),
    onEvent: (event) => {
      countEvent(event);
      onEvent?.(event);
    },
    ...(config.reportBuildingSqlMs ? { buildingSqlBudgetMs: config.reportBuildingSqlMs } : {}),
    ...(config.reportLargeBuildRows ? { largeBuildRows: config.reportLargeBuildRows } : {}),
    ...(linesAhead ? { linesAhead } : {}),
  });
}

/** Registers the engine's snapshots (count and bytes) with /metrics; returns the unregistration. */
export function observeEngine(engine: ReportEngine): () => void {
  if (!(engine instanceof ColumnarReportEngine)) return () => undefined;
  const stopCount = observeSnapshotsHeld(() => engine.snapshotsHeld);
  const stopBytes = observeSnapshotBytes(() => engine.memoryInUse);
  const stopIdle = observeOldestSnapshotIdle(() => engine.oldestIdleSeconds);
  return () => {
    stopCount();
    stopBytes();
    stopIdle();
  };
}
