// Issue 29, item 2: snapshot builds in two lanes, one build at a time in each. In one queue,
// bench:tenants at 1,000 organizations saw the instance holding a 1,000,000-order organization
// build nothing else for minutes while SQL answered its hundreds of small organizations. Every
// build starts in the small lane, where a saved file is read back first (a restart's read-back
// waits for no count: issue 19's "the first request waits for the file"); only a build from the
// database counts the organization's rows, and one of more than `largeBuildRows` goes on in the
// large lane, letting the small lane go. docs/operations.md, "Fair under load".
import type { Database } from '../../db/database.js';
import { expectedSnapshotSize, organizationOrders } from './snapshot-size.js';

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
 * Whether the organization's build from the database belongs in the large lane: its orders and
 * lines counted now (index-only, a few milliseconds for a small organization); small if they
 * cannot be counted. Its orders alone first: more than largeBuildRows of them decide it without
 * the lines, which the embedded database counts in a pass over their table (issue 28, item 2).
 */
export async function buildsInLargeLane(
  db: Pick<Database, 'engine' | 'query'>,
  organizationId: string,
  largeBuildRows: number,
): Promise<boolean> {
  const orders = await organizationOrders(db, organizationId).catch(() => 0);
  if (orders > largeBuildRows) return true;
  const size = await expectedSnapshotSize(db, organizationId).catch(() => undefined);
  return size !== undefined && size.orders + size.lines > largeBuildRows;
}
