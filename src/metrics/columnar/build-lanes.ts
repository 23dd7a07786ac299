// Issue 29, item 2: snapshot builds in two lanes, one build at a time in each. In one queue,
// bench:tenants at 1,000 organizations saw the instance holding a 1,000,000-order organization
// build nothing else for minutes while SQL answered its hundreds of small organizations. Every
// build starts in the small lane, where a saved file is read back first (a restart's read-back
// waits for no count: issue 19's "the first request waits for the file"); only a build from the
// database counts the organization's rows, and one of more than `largeBuildRows` goes on in the
// large lane, letting the small lane go; that count is the one its build then goes by (and the
// start's memory check's, when it counted: the engine's `counted`), taken once. On PostgreSQL a
// build with no recent count chooses its lane from one short statement instead (its orders, its
// lines up to the bound) and counts the rest after its orders (issue 28). docs/operations.md,
// "Fair under load".
import type { SnapshotSize } from './snapshot-size.js';

/** Orders and lines beyond which a build from the database takes the large lane (REPORT_LARGE_BUILD_ROWS). */
export const LARGE_BUILD_ROWS = 200_000;

/** Tasks one after the other, each started once the one before has ended (whether it failed or not). */
export class BuildLane {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.tail.then(task);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/**
 * Whether a build from the database of an organization of this size belongs in the large lane;
 * small if it could not be counted.
 */
export function inLargeLane(size: SnapshotSize | undefined, largeBuildRows: number): boolean {
  return size !== undefined && size.orders + size.lines > largeBuildRows;
}
