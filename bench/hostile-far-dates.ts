// bench:hostile's phases for issue 18, finding 1: dates at the edges of the calendar on every
// page and API route. GET /reports/revenue?to=9999-12-31 looped for ever (the day after
// 9999-12-31, '10000-01-01', sorted before it as text) and took the server from 0.35 to 5.2 GB
// until it died; these phases send that request and its whole class — years 0001 and 9999, every
// granularity, zones whose local day leaves those years, O1's largest offset, the largest limit,
// CSV — while bench/hostile.ts probes /healthz and reads the server's memory. The finding's
// request comes 10 at a time, as an attack would (past the report slots: 503 SERVICE_BUSY); the
// sweeps 2 at a time, so that the slots let nearly all of them be computed.
import type { Client } from '../test/helpers/web-client.js';

export interface HostileContext {
  readonly baseUrl: string;
  /** An API key of the demo organization. */
  readonly key: string;
  /** A signed-in browser of the demo organization. */
  readonly client: Client;
  /** Runs one phase while /healthz is probed, and prints its line of figures. */
  readonly phase: (name: string, work: () => Promise<string>) => Promise<void>;
}

const GRANULARITIES = ['day', 'week', 'month', 'quarter', 'year'];
const PERIODS = [
  'from=0001-01-01&to=9999-12-31',
  'from=2026-11-01&to=9999-12-31',
  'from=9999-12-31&to=9999-12-31',
  'from=0001-01-01&to=0001-01-14',
  'from=0001-01-01&to=0003-12-31',
  'to=9999-12-31',
  'to=0001-01-01',
  'from=0000-12-31&to=10000-01-01',
];
const ZONES = ['UTC', 'America/New_York', 'Asia/Tokyo', 'Pacific/Kiritimati', 'Pacific/Pago_Pago'];
/** Pages that take no date, sent one anyway (P7 reads nothing of it). */
const OTHER_PAGES = ['/settings/stores', '/settings/report', '/settings/api-keys', '/settings/subscription'];

/** "n × status" for each status met, 0 meaning a dropped connection or no answer within 30 s. */
function tally(statuses: readonly number[]): string {
  const count = new Map<number, number>();
  for (const s of statuses) count.set(s, (count.get(s) ?? 0) + 1);
  return [...count]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${n} × ${s || 'none'}`)
    .join(', ');
}

/** Sends the requests `parallel` at a time; their statuses, and the slowest answer. */
async function send(
  requests: readonly (() => Promise<Response>)[],
  parallel: number,
): Promise<{ statuses: number[]; slowestMs: number }> {
  const statuses: number[] = [];
  let slowestMs = 0;
  for (let i = 0; i < requests.length; i += parallel) {
    await Promise.all(
      requests.slice(i, i + parallel).map(async (request) => {
        const started = performance.now();
        const status = await request().then(
          async (r) => (await r.arrayBuffer(), r.status),
          () => 0,
        );
        slowestMs = Math.max(slowestMs, performance.now() - started);
        statuses.push(status);
      }),
    );
  }
  return { statuses, slowestMs };
}

const summary = ({ statuses, slowestMs }: { statuses: number[]; slowestMs: number }): string =>
  `${tally(statuses)}; slowest ${slowestMs.toFixed(0)} ms`;

/** Finding 1's class on every page and API route, each phase printed by bench/hostile.ts. */
export async function hostileFarDates({ baseUrl, key, client, phase }: HostileContext): Promise<void> {
  const page = (path: string) => () =>
    fetch(`${baseUrl}${path}`, {
      headers: { cookie: client.cookieHeader },
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
  const api = (query: string) => () =>
    fetch(`${baseUrl}/api/reports/tabular?${query}`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(30_000),
    });

  await phase('finding 1: 50 × revenue to=9999-12-31', async () =>
    summary(
      await send(
        Array.from({ length: 50 }, () => page('/reports/revenue?from=2026-11-01&to=9999-12-31')),
        10,
      ),
    ),
  );

  await phase('far dates: pages and CSV (192)', async () => {
    const requests = PERIODS.flatMap((period) =>
      GRANULARITIES.flatMap((g) => [
        page(`/reports/revenue?${period}&granularity=${g}`),
        page(`/reports/revenue.csv?${period}&granularity=${g}`),
      ]),
    );
    const others = OTHER_PAGES.flatMap((path) => PERIODS.map((period) => page(`${path}?${period}`)));
    return summary(await send([...requests, ...others, ...requests], 2));
  });

  await phase('far dates: API, zones, offsets (800)', async () => {
    const requests = PERIODS.flatMap((period) =>
      GRANULARITIES.flatMap((g) =>
        ZONES.flatMap((zone) => [
          api(`metrics=orders,net_revenue&dimensions=date&${period}&granularity=${g}&timezone=${zone}`),
          api(
            `metrics=orders,unique_customers&dimensions=date,store,country,customer_type,status&${period}&granularity=${g}&timezone=${zone}&offset=10000000&limit=100000`,
          ),
          api(`metrics=orders&dimensions=date,status&${period}&granularity=${g}&timezone=${zone}&format=csv`),
          api(`metrics=orders&${period}&timezone=${zone}&offset=${g === 'day' ? 10_000_001 : 9_999_999}`),
        ]),
      ),
    );
    return summary(await send(requests, 2));
  });
}
