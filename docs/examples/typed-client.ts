// A typed TypeScript client of the Sales Metrics API: the types are generated from the service's
// own description (GET /api/openapi.json) by openapi-typescript, the calls are made by openapi-fetch.
// A parameter, an id or a field that the document does not describe is a compile error.
//
//   npm install openapi-fetch && npm install -D openapi-typescript typescript
//   npx openapi-typescript "$SALES_METRICS_URL/api/openapi.json" -o sales-metrics-api.d.ts
//   npx tsc --strict --module nodenext --outDir out typed-client.ts
//   SALES_METRICS_URL=http://127.0.0.1:3000 SALES_METRICS_KEY=smk_… node out/typed-client.js 2025-01-01 2025-12-31
//
// It prints one JSON object: the URLs it sent, a page of monthly figures for two countries, the
// same page as CSV, and the catalog. test/contract/typed-client.test.ts generates the types from
// the live document, compiles this file and runs it against a live server.
import createClient from 'openapi-fetch';
import type { paths } from './sales-metrics-api.js';

type TabularQuery = paths['/api/reports/tabular']['get']['parameters']['query'];

const baseUrl = process.env.SALES_METRICS_URL ?? 'http://127.0.0.1:3000';
const key = process.env.SALES_METRICS_KEY; // never in a URL: it would end up in logs
if (!key) {
  console.error('Set SALES_METRICS_KEY to an API key (smk_…).');
  process.exit(2);
}
const [from = '2025-01-01', to = '2025-12-31'] = process.argv.slice(2);

const client = createClient<paths, 'application/json'>({
  baseUrl,
  headers: { Authorization: `Bearer ${key}` },
  // The document declares the array parameters `style: form, explode: false`:
  // metrics=orders,net_revenue (one parameter, comma-separated), not metrics=orders&metrics=net_revenue.
  querySerializer: { array: { style: 'form', explode: false } },
});
const sent: string[] = [];
client.use({
  onRequest({ request }) {
    sent.push(request.url);
  },
});

// `satisfies` makes an unknown parameter an error too (an object literal checked against the type).
const monthly = {
  metrics: ['orders', 'net_revenue'],
  dimensions: ['date', 'country'],
  'filter.country': ['FR', 'Unknown'],
  granularity: 'month',
  timezone: 'Europe/Paris',
  from,
  to,
  offset: 2,
  limit: 5,
} satisfies TabularQuery;

async function main(): Promise<void> {
  const { data, error, response } = await client.GET('/api/reports/tabular', { params: { query: monthly } });
  if (error) throw new Error(`${response.status} ${error.code}: ${error.error}`);
  const netRevenue: number = data.rows.reduce((sum, row) => sum + (row.net_revenue ?? 0), 0);

  const csv = await client.GET('/api/reports/tabular', {
    params: { query: { ...monthly, format: 'csv' } },
    parseAs: 'text',
  });
  if (csv.error) throw new Error(`${csv.response.status} ${csv.error.code}: ${csv.error.error}`);

  const catalog = await client.GET('/api/reports/catalog');
  if (catalog.error) throw new Error(`${catalog.response.status} ${catalog.error.code}`);

  console.log(
    JSON.stringify({
      sent,
      monthly: {
        body: data,
        rowCount: data.rowCount,
        truncated: response.headers.get('X-Rows-Truncated'),
        netRevenue: Math.round(netRevenue * 100) / 100,
      },
      csv: csv.data,
      catalog: catalog.data,
      metricIds: catalog.data.metrics.map((metric) => metric.id),
    }),
  );
}

/** Never called: each line below must fail to compile, or the directive above it does. */
export async function rejectedByTheTypes(): Promise<void> {
  await client.GET('/api/reports/tabular', {
    params: {
      query: {
        // @ts-expect-error -- bounce_rate is not one of the document's metric ids
        metrics: ['orders', 'bounce_rate'],
      },
    },
  });
  await client.GET('/api/reports/tabular', {
    params: {
      query: {
        metrics: ['orders'],
        // @ts-expect-error -- limit is an integer, not a string
        limit: 'x',
      },
    },
  });
  await client.GET('/api/reports/tabular', {
    params: {
      query: {
        metrics: ['orders'],
        // @ts-expect-error -- the date dimension cannot be filtered (F1)
        'filter.date': ['2025-01-01'],
      } satisfies TabularQuery,
    },
  });
  await client.GET('/api/reports/tabular', {
    params: {
      query: {
        metrics: ['orders'],
        // @ts-expect-error -- granularity is day, week, month, quarter or year (G2)
        granularity: 'hour',
      },
    },
  });
}

await main();
