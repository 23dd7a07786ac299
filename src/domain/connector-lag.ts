// Issue 29, item 4: the connector lag an operator watches, per platform (bounded: two values), read
// from the connections every instance shares when /metrics is scraped, so that every instance
// reports the same figure whichever of them synced the store.
import type { Queryable } from '../db/database.js';

const LAG_BY_PLATFORM = `
  SELECT platform,
         extract(epoch FROM now() - min(coalesce(last_success_at, created_at)))::float8 AS lag
    FROM store_connections
   GROUP BY platform`;

/** Seconds since the least recently synced store of each platform last synced (or was connected). */
export async function connectorLagByPlatform(db: Queryable): Promise<Map<string, number>> {
  const rows = await db.query<{ platform: string; lag: number }>(LAG_BY_PLATFORM);
  return new Map(rows.map((row) => [row.platform, Math.max(0, Number(row.lag))]));
}
