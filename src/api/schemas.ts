// The public API's schemas, declared once with TypeBox (issue 10, D1). The same declarations
// validate each request (Fastify, through the type provider) and make GET /api/openapi.json
// (@fastify/swagger, src/api/openapi.ts): the two cannot drift.
//
// The query string's rules and their French messages (section 10) stay in the parse step
// (src/query/parse.ts). A request the schema refuses is handed to it for the message; a property
// test (test/unit/api/schemas.test.ts) checks that the schema accepts every query the parse step
// accepts, so the document never forbids what the service takes. The parse step is the stricter
// of the two where JSON Schema cannot say a rule (decimal digits only, a real time zone, `from`
// not after `to`): those answers are the documented 400s.
import type { Static, TSchema } from '@fastify/type-provider-typebox';
import { Type } from '../json-schema.js';
import { atLineGrain, DIMENSIONS, GRAINS, METRICS } from '../catalog.js';
import { ERROR_CODES, ERROR_KINDS, type ErrorCode } from '../errors.js';
import { COMPARE_MODES } from '../query/compare.js';
import { GRANULARITIES } from '../query/dates.js';
import {
  DEFAULT_LIMIT,
  FILTER_DIMENSIONS,
  FILTER_PREFIX,
  FORMATS,
  MAX_FILTER_VALUES,
  MAX_LIMIT,
  MAX_OFFSET,
  CATALOG_SCOPES,
  parseIdList,
  type RawQuery,
} from '../query/parse.js';

const DIMENSION_IDS = DIMENSIONS.map((d) => d.id);
const METRIC_IDS = METRICS.map((m) => m.id);
/** L7: every id, ascending or descending (`-`). */
const SORT_KEYS = [...DIMENSION_IDS, ...METRIC_IDS].flatMap((id) => [id, `-${id}`]);
const LINE_DIMENSION_IDS = DIMENSIONS.filter((d) => d.grain === 'line').map((d) => d.id);

/** L4, from the catalog: what each order metric becomes at line grain. */
const GRAIN_RULE = METRICS.filter((m) => m.grain === 'order')
  .map((m) => {
    const reading = atLineGrain(m.id);
    if (reading.kind === 'distinct') return `\`${m.id}\` counts distinct`;
    return reading.kind === 'refused'
      ? `\`${m.id}\` is refused${reading.replacement ? ` (use \`${reading.replacement}\`)` : ''}`
      : '';
  })
  .join(', ');

/**
 * A comma-separated list (P1), documented as OpenAPI's `style: form, explode: false` (openapi.ts).
 * The parameter given twice is also accepted (its values are joined), so both array styles of
 * client libraries work.
 */
const commaList = (items: TSchema, options: Record<string, unknown>) => Type.Array(items, options);

const filter = (dimension: string, description: string, examples: readonly string[][]) =>
  Type.Optional(
    commaList(Type.String({ minLength: 1, pattern: '^[^\\u0000]+$' }), {
      minItems: 1,
      maxItems: MAX_FILTER_VALUES,
      description: `Keeps the orders whose ${dimension} is one of these values (compared exactly as a row shows them).${description ? ` ${description}` : ''} Applies whether or not the dimension is requested; several filters combine with AND.`,
      examples,
    }),
  );

const lineFilter = (dimension: string, examples: readonly string[][]) =>
  Type.Optional(
    commaList(Type.String({ minLength: 1, pattern: '^[^\\u0000]+$' }), {
      minItems: 1,
      maxItems: MAX_FILTER_VALUES,
      description: `Keeps the order lines whose ${dimension} is one of these values (\`Unknown\` for none), and the orders with at least one kept line: order metrics count those orders whole, line metrics and line rows their kept lines only. Orders without lines are left out. Combines with every other filter with AND.`,
      examples,
    }),
  );

/** The query parameters of GET /api/reports/tabular (sections 6 and 14). Others are ignored (P7). */
export const TabularParameters = Type.Object(
  {
    metrics: commaList(Type.Enum(METRIC_IDS), {
      minItems: 1,
      description: `Metric ids, comma-separated, in the order of the answer. Blanks are trimmed, empty items and duplicates dropped. An unknown id is a 400 listing it in unknownMetrics. The line metrics sum order lines. With a line dimension, ${GRAIN_RULE}: 400 \`INCOMPATIBLE_METRICS\`.`,
      examples: [['orders', 'net_revenue']],
    }),
    dimensions: Type.Optional(
      commaList(Type.Enum(DIMENSION_IDS), {
        description: `Dimension ids, comma-separated; rows are sorted by them in this order, comparing values as text. None: one row of totals. An unknown id is a 400 listing it in unknownDimensions. ${LINE_DIMENSION_IDS.map((d) => `\`${d}\``).join(', ')} are line dimensions: the rows are then made of order lines (a line is in the row of each of its categories).`,
        examples: [['date', 'store']],
      }),
    ),
    from: Type.Optional(
      Type.String({
        format: 'date',
        description:
          'First UTC day, YYYY-MM-DD (a day that exists). Default: `to` minus 30 days. Moved up to two years before `to` at most; the answer shows the day used.',
        examples: ['2026-01-01'],
      }),
    ),
    to: Type.Optional(
      Type.String({
        format: 'date',
        description: 'Last UTC day, YYYY-MM-DD, included, not before `from`. Default: today (UTC).',
        examples: ['2026-01-31'],
      }),
    ),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        default: 'UTC',
        description:
          'IANA time zone of the `date` dimension only: the period is always made of whole UTC days. Echoed as given.',
        examples: ['Europe/Paris'],
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LIMIT,
        default: DEFAULT_LIMIT,
        description:
          'The number of rows kept (1 to 100000); the header X-Rows-Truncated: true says rows remain.',
      }),
    ),
    offset: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_OFFSET,
        default: 0,
        description:
          'Rows skipped, in the answer’s order, before `limit` applies, in decimal digits, to page through any answer. Pages are separate requests: give `from` and `to` so that they cover the same period.',
      }),
    ),
    granularity: Type.Optional(
      Type.Enum(GRANULARITIES, {
        default: 'day',
        description:
          'The `date` dimension gives the first day of the order’s day, ISO week (Monday), month, quarter or year in `timezone`. The period is unchanged: the first and last buckets may be partial.',
      }),
    ),
    compare: Type.Optional(
      Type.Enum(COMPARE_MODES, {
        description:
          'A second period, matched row by row: `previous_period` (as many days, ending the day before `from`), `previous_year` (one calendar year earlier, 29 February → 28 February) or `custom` (`compare_from` and `compare_to`). Adds `date_previous` after `date`, then `<metric>_previous` and `<metric>_change` for each metric.',
      }),
    ),
    compare_from: Type.Optional(
      Type.String({
        format: 'date',
        description:
          'With `compare=custom` only (required then): the comparison’s first UTC day, YYYY-MM-DD, moved up to two years before `compare_to` at most.',
        examples: ['2025-01-01'],
      }),
    ),
    compare_to: Type.Optional(
      Type.String({
        format: 'date',
        description: 'With `compare=custom` only (required then): the comparison’s last UTC day, included.',
        examples: ['2025-01-31'],
      }),
    ),
    format: Type.Optional(
      Type.Enum(FORMATS, {
        default: 'json',
        description: '`csv` answers text/csv (as does the header Accept: text/csv). Errors stay JSON.',
      }),
    ),
    'filter.store': filter('store address', '', [['https://shop.example.com']]),
    'filter.country': filter('country', 'Upper-case ISO codes, or `Unknown` for orders without one.', [
      ['FR', 'BE'],
      ['Unknown'],
    ]),
    'filter.customer_type': filter(
      'customer type',
      '`new` (first order within the period), `returning` (first order before it) or `anonymous` (no usable e-mail).',
      [['new']],
    ),
    'filter.status': filter('status', 'Statuses as the store sent them.', [['completed', 'processing']]),
    'filter.product': lineFilter('product name', [['T-shirt bio']]),
    'filter.product_id': lineFilter('product id', [['1042']]),
    'filter.variant': lineFilter('variant name', [['Bleu / M']]),
    'filter.sku': lineFilter('SKU', [['TS-BIO-M']]),
    'filter.category': lineFilter('categories (one of them)', [['Vêtements']]),
    sort: Type.Optional(
      commaList(Type.Enum(SORT_KEYS), {
        minItems: 1,
        description:
          'The row order: requested dimension or metric ids, comma-separated, each prefixed with `-` for descending; metrics compare as numbers, dimensions as text as without `sort`; remaining ties in the usual order (by the dimensions); then `offset` and `limit` (`sort=-product_net_sales&limit=10` is the top ten). With `compare`, a metric sorts by the main period’s value. An id not requested, an empty key or a key given twice: 400 naming `sort`.',
        examples: [['-product_net_sales'], ['store', '-orders']],
      }),
    ),
  },
  { additionalProperties: true },
);
export type TabularParameters = Static<typeof TabularParameters>;

/** The parameters that are comma-separated lists (P1, F1). */
export const LIST_PARAMETERS: ReadonlySet<string> = new Set([
  'metrics',
  'dimensions',
  ...FILTER_DIMENSIONS.map((d) => `${FILTER_PREFIX}${d}`),
  'sort',
]);

/** The query parameters of GET /api/reports/catalog (L9). */
export const CatalogParameters = Type.Object(
  {
    scope: Type.Optional(
      Type.Enum(CATALOG_SCOPES, {
        description:
          '`all` lists the order lines’ dimensions and metrics too, each entry with its `grain` (`order` or `line`). Without it, the reference’s ten metrics and five dimensions. Anything else: 400 naming `scope`.',
      }),
    ),
  },
  { additionalProperties: true },
);

/** The query string as Fastify parsed it: each parameter a text, or a list of texts when repeated. */
export function rawQuery(parsed: unknown): RawQuery {
  if (typeof parsed !== 'object' || parsed === null) return {};
  const entries = Object.entries(parsed).flatMap(([name, value]): [string, string | string[]][] =>
    typeof value === 'string' ? [[name, value]] : Array.isArray(value) ? [[name, value.map(String)]] : [],
  );
  return Object.freeze(Object.fromEntries(entries)); // own properties, even one named __proto__
}

/**
 * The query as the schema reads it: each list parameter split, trimmed and cleaned as P1 says
 * (a repeated one joined); the others as they came.
 */
export function schemaView(raw: RawQuery): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(raw).map(([name, value]) => [
      name,
      LIST_PARAMETERS.has(name) ? parseIdList(value) : value,
    ]),
  );
}

// ---------------------------------------------------------------------------------------------
// Responses (documentation: bodies are serialized by the service itself, never by a schema)

// A response header is documented by its schema, whose description @fastify/swagger moves up.
const integerHeader = (description: string) => Type.Integer({ minimum: 0, description });

/** R1: on every authenticated answer. */
const RATE_HEADERS = {
  'X-RateLimit-Limit': integerHeader('Requests allowed per window for this key.'),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window.'),
  'X-RateLimit-Reset': integerHeader('Seconds until the window resets.'),
};
const RETRY_AFTER = { 'Retry-After': integerHeader('Seconds after which a retry may succeed.') };

const ERROR_MESSAGE = 'What is wrong, in French, naming the parameter at fault and what is allowed.';

/** An error body (E1, E3) whose `code` is one of the kinds with this status. */
function errorBody(status: number, extra: Record<string, TSchema> = {}, only?: readonly ErrorCode[]) {
  const codes = ERROR_CODES.filter(
    (code) => ERROR_KINDS[code].status === status && (only === undefined || only.includes(code)),
  );
  return Type.Object(
    {
      error: Type.String({ description: ERROR_MESSAGE }),
      ...extra,
      code: Type.Enum(codes, { description: `The kind of error, a stable identifier: ${codes.join(', ')}.` }),
    },
    { additionalProperties: false },
  );
}

const json = (schema: TSchema) => ({ 'application/json': { schema } });

function errorResponse(
  status: number,
  description: string,
  extra: Record<string, TSchema> = {},
  only?: readonly ErrorCode[],
) {
  return { description, content: json(errorBody(status, extra, only)) };
}

const requestId = { requestId: Type.String({ description: 'Quote it when reporting the failure.' }) };

/** 4xx and 5xx answers common to the operations that need a key. */
const KEYED_ERRORS = {
  408: errorResponse(408, 'The client took too long to send its request (`REQUEST_TIMEOUT`).'),
  431: errorResponse(431, 'Request headers over 16 KiB (`HEADERS_TOO_LARGE`), refused before routing.'),
  401: {
    ...errorResponse(
      401,
      'Missing, malformed, unknown or revoked key (`UNAUTHENTICATED`), or an inactive subscription (`SUBSCRIPTION_INACTIVE`).',
    ),
  },
  429: {
    ...errorResponse(
      429,
      'Too many requests for this key (`RATE_LIMITED`, with X-RateLimit-*), or too many failed authentications from this address (`AUTH_FAILURES_LIMITED`).',
    ),
    headers: { ...RETRY_AFTER, ...RATE_HEADERS },
  },
  500: errorResponse(500, 'Unexpected failure; no internal detail, a request id to quote.', requestId),
  503: {
    ...errorResponse(
      503,
      'Database unreachable (`DATABASE_UNAVAILABLE`), too much work at once (`SERVICE_BUSY`), or the organization’s report data being prepared (`SNAPSHOT_BUILDING`): nothing was done, retry after Retry-After.',
      { requestId: Type.Optional(requestId.requestId) },
    ),
    headers: RETRY_AFTER,
  },
};

const dimensionValues = Object.fromEntries(
  DIMENSIONS.map((d) => [
    d.id,
    Type.Optional(d.id === 'date' ? Type.String({ format: 'date' }) : Type.String()),
  ]),
);
const metricValues = Object.fromEntries(
  METRICS.map((m) => [m.id, Type.Optional(m.type === 'currency' ? Type.Number() : Type.Integer())]),
);
/** PC1: a compared row's added fields, null where the comparison has no k-th `date` bucket. */
const nullable = (schema: TSchema) => Type.Optional(Type.Union([schema, Type.Null()]));
const comparedValues = {
  date_previous: nullable(
    Type.String({
      format: 'date',
      description: 'The first day of the comparison bucket matched with this row’s `date`.',
    }),
  ),
  ...Object.fromEntries(
    METRICS.flatMap((m) => [
      [`${m.id}_previous`, nullable(m.type === 'currency' ? Type.Number() : Type.Integer())],
      [
        `${m.id}_change`,
        nullable(
          Type.Number({
            description:
              '(value − previous) / previous × 100, to one decimal; null when previous is 0 or null.',
          }),
        ),
      ],
    ]),
  ),
};

export const TabularBody = Type.Object(
  {
    dimensions: Type.Array(Type.Enum(DIMENSION_IDS)),
    metrics: Type.Array(Type.Enum(METRIC_IDS)),
    from: Type.String({ format: 'date', description: 'The first day used (after the two-year cap).' }),
    to: Type.String({ format: 'date' }),
    timezone: Type.String(),
    granularity: Type.Optional(
      Type.Enum(GRANULARITIES, { description: 'The `granularity` used, when not `day`.' }),
    ),
    filters: Type.Optional(
      Type.Object(
        Object.fromEntries(FILTER_DIMENSIONS.map((d) => [d, Type.Optional(Type.Array(Type.String()))])),
        { additionalProperties: false, description: 'The filters applied, when any.' },
      ),
    ),
    offset: Type.Optional(Type.Integer({ minimum: 1, description: 'The `offset` used, when not 0.' })),
    compare: Type.Optional(
      Type.Object(
        {
          mode: Type.Enum(COMPARE_MODES),
          from: Type.String({ format: 'date' }),
          to: Type.String({ format: 'date' }),
        },
        {
          additionalProperties: false,
          description: 'The comparison period used, when `compare` is given.',
        },
      ),
    ),
    rows: Type.Array(
      Type.Object(
        { ...dimensionValues, ...metricValues, ...comparedValues },
        {
          additionalProperties: false,
          description:
            'The dimension ids then the metric ids, in request order. Amounts in the organization’s currency, rounded once to the cent. With `compare`: `date_previous` right after `date`, then `<metric>_previous` and `<metric>_change` for each metric.',
        },
      ),
    ),
    rowCount: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

const CatalogEntry = Type.Object(
  {
    id: Type.String(),
    label: Type.String(),
    type: Type.String(),
    grain: Type.Optional(
      Type.Enum(GRAINS, {
        description:
          'With `scope=all` only: `line` for the entries that read order lines (a request with a line dimension is made of lines).',
      }),
    ),
  },
  { additionalProperties: false },
);
export const CatalogBody = Type.Object(
  { dimensions: Type.Array(CatalogEntry), metrics: Type.Array(CatalogEntry) },
  { additionalProperties: false },
);

const CACHE_CONTROL = {
  'Cache-Control': Type.String({
    description: 'private, max-age=60: an answer may be served from the cache for 60 s.',
  }),
};

export const TABULAR_RESPONSES = {
  200: {
    description: 'The table: JSON by default, CSV with `format=csv` or Accept: text/csv.',
    headers: {
      ...RATE_HEADERS,
      ...CACHE_CONTROL,
      'X-Rows-Truncated': Type.Enum(['true'], {
        description: 'Present when rows remain after `offset` + `limit`.',
      }),
      Vary: Type.String({ description: 'Accept (the answer depends on it).' }),
    },
    content: {
      ...json(TabularBody),
      'text/csv': {
        schema: Type.String({
          description:
            'RFC 4180: a header line of the ids, then the same rows and values as the JSON answer; a text cell beginning with =, +, -, @, tab or CR starts with a quote.',
          examples: ['date,orders,net_revenue\r\n2026-01-01,12,1042.5\r\n'],
        }),
      },
    },
  },
  400: {
    ...errorResponse(
      400,
      'A parameter is malformed or out of range (`INVALID_PARAMETER`), no metric is asked (`MISSING_METRICS`), ids are unknown (`UNKNOWN_IDENTIFIERS`, with both lists), or order metrics are asked with a line dimension (`INCOMPATIBLE_METRICS`).',
      {
        unknownDimensions: Type.Optional(
          Type.Array(Type.String(), {
            description: 'Unknown dimension ids, in `dimensions` or in a `filter.` name.',
          }),
        ),
        unknownMetrics: Type.Optional(Type.Array(Type.String(), { description: 'Unknown metric ids.' })),
        incompatibleMetrics: Type.Optional(
          Type.Array(Type.String(), {
            description:
              'The order metrics that have no meaning per product, in request order; `error` names the line metric to use instead where there is one.',
          }),
        ),
      },
    ),
    headers: RATE_HEADERS,
  },
  ...KEYED_ERRORS,
};

export const CATALOG_RESPONSES = {
  200: {
    description: 'The catalog: every dimension and metric with its French label and type.',
    headers: { ...RATE_HEADERS, ...CACHE_CONTROL },
    content: json(CatalogBody),
  },
  400: errorResponse(
    400,
    'A malformed request, e.g. a body on this GET (`BAD_REQUEST`), or a `scope` other than `all` (`INVALID_PARAMETER`).',
    {},
    ['BAD_REQUEST', 'INVALID_PARAMETER'],
  ),
  ...KEYED_ERRORS,
};

/**
 * B2's 405 and E2's 404, written straight into the document (openapi.ts), hence in OpenAPI's own
 * form: a header is an object with its schema.
 */
export const METHOD_NOT_ALLOWED_RESPONSE = {
  ...errorResponse(405, 'The API is read-only.'),
  headers: { Allow: { schema: Type.String(), description: 'GET, HEAD, OPTIONS.' } },
};
export const NOT_FOUND_BODY = errorBody(404);
