// Issue 20 on the Revenue page: the period compared with a second one (PC1). Both periods are run
// through the API's report engine (S3), one after the other so that a page never holds more
// report slots than a page without comparison; buckets are matched by index exactly as PC1
// matches a compared request's `date` rows, and every change is PC1's percentChange. The key
// figures are one compared run (PC1 without dimensions). The table stays two reports: refunds and
// fees are not catalog metrics (three plans of different deductions per period), and the
// comparison's totals count all its buckets, which a compared `date` run drops past the main count.
import type { MetricId, ReportSettings } from '../catalog.js';
import type { Comparison } from '../query/compare.js';
import { changeOf, percentChange, previousOf } from '../query/compare.js';
import type { Granularity } from '../query/dates.js';
import { MAX_LIMIT, NO_EXTENSIONS } from '../query/parse.js';
import type { Period } from '../query/period.js';
import { planReport } from '../query/plan.js';
import type { ReportEngine } from './engine.js';
import { FIGURES, revenueReport, type Figures, type RevenueDay, type RevenueReport } from './revenue.js';

type Organization = { readonly id: string; readonly settings: ReportSettings };

/** The key figures at the top of the page: catalog metrics over the whole period (S3). */
export const KEY_METRICS = [
  'net_revenue',
  'gross_sales',
  'orders',
  'average_order_value',
  'unique_customers',
  'new_customers',
] as const satisfies readonly MetricId[];
export type KeyMetric = (typeof KEY_METRICS)[number];
export type KeyFigures = Record<KeyMetric, number>;

/** A figure of the main period beside the comparison's: PC1's `_previous` and `_change`. */
export interface Compared {
  readonly value: number;
  readonly previous: number | null;
  readonly change: number | null;
}

export type FigureId = keyof Figures;
export const FIGURE_IDS: readonly FigureId[] = FIGURES;

/** One row of the compared table: bucket k of the main period and bucket k of the comparison. */
export interface ComparedBucket {
  readonly main: RevenueDay;
  /** The comparison's k-th bucket, undefined past its count (PC1: `date_previous` null). */
  readonly previous: RevenueDay | undefined;
}

/** The table of both periods, buckets matched (what the CSV needs). */
export interface ComparedReports {
  readonly main: RevenueReport;
  readonly previous: RevenueReport;
  readonly comparison: Comparison;
  readonly buckets: readonly ComparedBucket[];
}

export interface ComparedRevenue extends ComparedReports {
  readonly keyFigures: Record<KeyMetric, Compared>;
}

/** The plan of the key figures: one row over the whole period, with PC1's comparison if given. */
const keyPlan = (organization: Organization, period: Period, comparison?: Comparison) =>
  planReport(
    {
      dimensions: [],
      metrics: [...KEY_METRICS],
      from: period.from,
      to: period.to,
      timezone: 'UTC',
      limit: MAX_LIMIT,
      ...NO_EXTENSIONS,
      ...(comparison ? { comparison } : {}),
    },
    organization,
  );

/**
 * The key figures of one period, as a request without dimensions answers them: one row over
 * the whole period, new customers relative to the period's own start (U3).
 */
export async function keyFigures(
  engine: ReportEngine,
  organization: Organization,
  period: Period,
): Promise<KeyFigures> {
  const row = (await engine.run(keyPlan(organization, period))).rows[0] ?? {};
  return Object.fromEntries(KEY_METRICS.map((m) => [m, Number(row[m] ?? 0)])) as KeyFigures;
}

/** PC1's pair for one figure: the change from the two values as written, null against 0. */
export const compared = (value: number, previous: number | null): Compared => ({
  value,
  previous,
  change: percentChange(value, previous),
});

/**
 * PC1's matching: the k-th bucket of the main period with the k-th of the comparison, each
 * counted from its period's first bucket; comparison buckets past the main count are left out.
 */
export function matchBuckets(main: readonly RevenueDay[], previous: readonly RevenueDay[]): ComparedBucket[] {
  return main.map((day, k) => ({ main: day, previous: previous[k] }));
}

/** The figures of a row beside the comparison's (all null without a k-th comparison bucket). */
export function comparedFigures(value: Figures, previous: Figures | undefined): Record<FigureId, Compared> {
  return Object.fromEntries(
    FIGURE_IDS.map((id) => [id, compared(value[id], previous === undefined ? null : previous[id])]),
  ) as Record<FigureId, Compared>;
}

/** The main period's report beside the comparison's, buckets matched as PC1 matches them. */
export async function comparedReports(
  engine: ReportEngine,
  organization: Organization,
  main: Period,
  comparison: Comparison,
  granularity: Granularity,
): Promise<ComparedReports> {
  // One period after the other: each holds at most three report slots, as a plain page does.
  const mainReport = await revenueReport(engine, organization, main.from, main.to, granularity);
  const previous = await revenueReport(engine, organization, comparison.from, comparison.to, granularity);
  return {
    main: mainReport,
    previous,
    comparison: { ...comparison, from: previous.from, to: previous.to },
    buckets: matchBuckets(mainReport.days, previous.days),
  };
}

/**
 * The key figures of both periods from ONE compared run (PC1 without dimensions): the very row a
 * `compare` request over the same periods answers (S3), `_change` included, in one report slot.
 */
export async function comparedKeyFigures(
  engine: ReportEngine,
  organization: Organization,
  main: Period,
  comparison: Comparison,
): Promise<Record<KeyMetric, Compared>> {
  const row = (await engine.run(keyPlan(organization, main, comparison))).rows[0] ?? {};
  const figure = (m: KeyMetric): Compared => {
    const change = row[changeOf(m)];
    return {
      value: Number(row[m] ?? 0),
      previous: Number(row[previousOf(m)] ?? 0),
      change: typeof change === 'number' ? change : null,
    };
  };
  return Object.fromEntries(KEY_METRICS.map((m) => [m, figure(m)])) as Record<KeyMetric, Compared>;
}

/** The compared reports and the key figures of both periods. */
export async function comparedRevenue(
  engine: ReportEngine,
  organization: Organization,
  main: Period,
  comparison: Comparison,
  granularity: Granularity,
): Promise<ComparedRevenue> {
  const reports = await comparedReports(engine, organization, main, comparison, granularity);
  // After the reports, not beside them: one compared run holds one slot (finding 6).
  const keyFigures = await comparedKeyFigures(engine, organization, reports.main, reports.comparison);
  return { ...reports, keyFigures };
}
