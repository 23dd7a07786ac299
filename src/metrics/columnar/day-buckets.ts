// The `date` dimension in a time zone: the UTC instants of the local midnights of the period,
// asked of the database itself, so that both engines use the same zone rules and never disagree
// on an order near midnight or a DST change.
import type { Queryable } from '../../db/database.js';

export interface DayBuckets {
  /** Local days, YYYY-MM-DD as PostgreSQL's to_char writes them, in time order. */
  readonly labels: readonly string[];
  /** starts[k]: epoch seconds of the first instant of labels[k] in the zone. */
  readonly starts: Float64Array;
  /**
   * index[u]: the bucket of the instant starts[0] + u × unit seconds. When every day starts a
   * whole number of units after starts[0] (`aligned`), it is the bucket of any instant of that
   * unit; otherwise a first guess, from which the bucket is found by comparing with starts.
   */
  readonly index: Int32Array;
  readonly unit: number;
  readonly aligned: boolean;
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

/** Zones' days start on the hour, most of them, or on a quarter hour (India, Nepal, Chatham…). */
export const DAY_UNITS: readonly number[] = [3600, 900];

/**
 * The local days of [from, to] ± 1 in `timezone`, or undefined when the zone's days are not one
 * contiguous interval each (then the SQL engine answers: it defines the reference).
 */
export async function loadDayBuckets(
  db: Queryable,
  timezone: string,
  from: string,
  to: string,
  units: readonly number[] = DAY_UNITS,
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
  const offsets = Array.from(starts, (start) => start - first);
  const unit = units.find((u) => offsets.every((offset) => offset % u === 0)) ?? (units[0] as number);
  const aligned = offsets.every((offset) => offset % unit === 0);
  const length =
    Math.ceil(((starts[starts.length - 1] as number) - first) / unit) + Math.ceil((48 * 3600) / unit);
  const index = new Int32Array(length);
  let k = 0;
  for (let u = 0; u < length; u++) {
    const at = first + u * unit;
    while (k + 1 < starts.length && at >= (starts[k + 1] as number)) k++;
    index[u] = k;
  }
  return { labels, starts, index, unit, aligned };
}
