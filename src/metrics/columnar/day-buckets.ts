// The `date` dimension in a time zone: the UTC instants of the local midnights of the period,
// asked of the database itself, so that both engines use the same zone rules and never disagree
// on an order near midnight or a DST change.
import type { Queryable } from '../../db/database.js';

export interface DayBuckets {
  /** Local days, YYYY-MM-DD as PostgreSQL's to_char writes them, in time order. */
  readonly labels: readonly string[];
  /** starts[k]: epoch seconds of the first instant of labels[k] in the zone. */
  readonly starts: Float64Array;
  /** hourIndex[h]: the bucket of the instant starts[0] + h hours, a first guess for any later one. */
  readonly hourIndex: Int32Array;
}

// From the day before `from` to the day after `to`: an order of the UTC period (T1) falls on one
// of them in any zone (offsets stay within a day). For each day: its local midnight as an
// instant, and the local day the database gives that instant and the second before it, to check
// that the midnight really is where the day begins (a zone whose clock skips or repeats midnight).
const LOCAL_MIDNIGHTS = `
  SELECT to_char(d.day, 'YYYY-MM-DD') AS label, extract(epoch FROM d.midnight)::float8 AS start,
    to_char(d.midnight AT TIME ZONE $3, 'YYYY-MM-DD') AS day_at_start,
    to_char((d.midnight - interval '1 second') AT TIME ZONE $3, 'YYYY-MM-DD') AS day_before
  FROM (SELECT g.day, g.day::timestamp AT TIME ZONE $3 AS midnight
        FROM (SELECT $1::date - 1 + n AS day FROM generate_series(0, $2::date - $1::date + 2) AS s(n)) AS g
  ) AS d ORDER BY d.day`;

const HOUR = 3600;

/**
 * The local days of [from, to] ± 1 in `timezone`, or undefined when the zone's days are not one
 * contiguous interval each (then the SQL engine answers: it defines the reference).
 */
export async function loadDayBuckets(
  db: Queryable,
  timezone: string,
  from: string,
  to: string,
): Promise<DayBuckets | undefined> {
  const rows = await db.query<{ label: string; start: number; day_at_start: string; day_before: string }>(
    LOCAL_MIDNIGHTS,
    [from, to, timezone],
  );
  const labels = rows.map((r) => r.label);
  const starts = Float64Array.from(rows, (r) => r.start);
  for (let k = 0; k < rows.length; k++) {
    const row = rows[k] as (typeof rows)[number];
    const previous = k === 0 ? undefined : labels[k - 1];
    if (row.day_at_start !== row.label) return undefined;
    if (
      previous !== undefined &&
      (row.day_before !== previous || (starts[k] as number) <= (starts[k - 1] as number))
    ) {
      return undefined;
    }
  }
  const first = starts[0] as number;
  const hours = Math.ceil(((starts[starts.length - 1] as number) - first) / HOUR) + 48;
  const hourIndex = new Int32Array(hours);
  let k = 0;
  for (let h = 0; h < hours; h++) {
    const at = first + h * HOUR;
    while (k + 1 < starts.length && at >= (starts[k + 1] as number)) k++;
    hourIndex[h] = k;
  }
  return { labels, starts, hourIndex };
}

/** The bucket of an instant at or after starts[0] (T1 guarantees it for an order of the period). */
export function bucketOf(buckets: DayBuckets, seconds: number): number {
  const { starts, hourIndex } = buckets;
  const first = starts[0] as number;
  const h = Math.min(hourIndex.length - 1, Math.floor((seconds - first) / HOUR));
  let k = hourIndex[h] as number;
  while (k + 1 < starts.length && seconds >= (starts[k + 1] as number)) k++;
  return k;
}
