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
import { Type, type Static, type TSchema } from '@fastify/type-provider-typebox';
import { DIMENSIONS, METRICS } from '../catalog.js';
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
  parseIdList,
  type RawQuery,
} from '../query/parse.js';

const DIMENSION_IDS = DIMENSIONS.map((d) => d.id);
const METRIC_IDS = METRICS.map((m) => m.id);

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
      description: `F1: keeps the orders whose ${dimension} is one of these values (compared exactly as a row shows them).${description ? ` ${description}` : ''} Applies whether or not the dimension is requested; several filters combine with AND.`,
      examples,
    }),
  );

/** The query parameters of GET /api/reports/tabular (sections 6 and 14). Others are ignored (P7). */
export const TabularParameters = Type.Object(
  {
    metrics: commaList(Type.Enum(METRIC_IDS), {
      minItems: 1,
      description:
        'P1, P2: metric ids, comma-separated, in the order of the answer. Blanks are trimmed, empty items and duplicates dropped. An unknown id is a 400 listing it in unknownMetrics.',
      examples: [['orders', 'net_revenue']],
    }),
    dimensions: Type.Optional(
      commaList(Type.Enum(DIMENSION_IDS), {
        description:
          'P1, P2: dimension ids, comma-separated; rows are sorted by them in this order (T3). None: one row of totals (T5).',
        examples: [['date', 'store']],
      }),
    ),
    from: Type.Optional(
      Type.String({
        format: 'date',
        description:
          'P3, P4: first UTC day, YYYY-MM-DD. Default: `to` minus 30 days. Moved up to two years before `to` at most; the answer shows the day used.',
        examples: ['2026-01-01'],
      }),
    ),
    to: Type.Optional(
      Type.String({
        format: 'date',
        description: 'P3: last UTC day, YYYY-MM-DD, included. Default: today (UTC).',
        examples: ['2026-01-31'],
      }),
    ),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        default: 'UTC',
        description: 'P5: IANA time zone of the `date` dimension (never of the period, T1). Echoed as given.',
        examples: ['Europe/Paris'],
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LIMIT,
        default: DEFAULT_LIMIT,
        description: 'P6, T6: the number of rows kept; the header X-Rows-Truncated: true says rows remain.',
      }),
    ),
    offset: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_OFFSET,
        default: 0,
        description:
          'O1: rows skipped in T3 order before `limit` applies, in decimal digits, to page through any answer. Pages are separate requests: give `from` and `to` so that they cover the same period.',
      }),
    ),
    granularity: Type.Optional(
      Type.Enum(GRANULARITIES, {
        default: 'day',
        description:
          'G2: the `date` dimension gives the first day of the order’s day, ISO week (Monday), month, quarter or year in `timezone`. The period is unchanged: the first and last buckets may be partial.',
      }),
    ),
    compare: Type.Optional(
      Type.Enum(COMPARE_MODES, {
        description:
          'PC1: a second period, matched row by row: `previous_period` (as many days, ending the day before `from`), `previous_year` (one calendar year earlier, 29 February → 28 February) or `custom` (`compare_from` and `compare_to`). Adds `date_previous` after `date`, then `<metric>_previous` and `<metric>_change` for each metric.',
      }),
    ),
    compare_from: Type.Optional(
      Type.String({
        format: 'date',
        description:
          'PC1: with `compare=custom` only (required then): the comparison’s first UTC day (P3, P4).',
        examples: ['2025-01-01'],
      }),
    ),
    compare_to: Type.Optional(
      Type.String({
        format: 'date',
        description:
          'PC1: with `compare=custom` only (required then): the comparison’s last UTC day, included.',
        examples: ['2025-01-31'],
      }),
    ),
    format: Type.Optional(
      Type.Enum(FORMATS, {
        default: 'json',
        description: 'V1: `csv` answers text/csv (as does the header Accept: text/csv). Errors stay JSON.',
      }),
    ),
    'filter.store': filter('store address', '', [['https://shop.example.com']]),
    'filter.country': filter('country', 'Upper-case ISO codes, or `Unknown` for orders without one.', [
      ['FR', 'BE'],
      ['Unknown'],
    ]),
    'filter.customer_type': filter(
      'customer type',
      '`new`, `returning` or `anonymous`, in the period’s meaning (U3).',
      [['new']],
    ),
    'filter.status': filter('status', 'Statuses as the store sent them.', [['completed', 'processing']]),
  },
  { additionalProperties: true },
);
export type TabularParameters = Static<typeof TabularParameters>;

/** The parameters that are comma-separated lists (P1, F1). */
export const LIST_PARAMETERS: ReadonlySet<string> = new Set([
  'metrics',
  'dimensions',
  ...FILTER_DIMENSIONS.map((d) => `${FILTER_PREFIX}${d}`),
]);

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
  'X-RateLimit-Limit': integerHeader('R1: requests allowed per window for this key.'),
  'X-RateLimit-Remaining': integerHeader('R1: requests left in the current window.'),
  'X-RateLimit-Reset': integerHeader('R1: seconds until the window resets.'),
};
const RETRY_AFTER = { 'Retry-After': integerHeader('Seconds after which a retry may succeed.') };

const ERROR_MESSAGE = 'E1: what is wrong, in French, naming the parameter at fault and what is allowed.';

/** An error body (E1, E3) whose `code` is one of the kinds with this status. */
function errorBody(status: number, extra: Record<string, TSchema> = {}, only?: readonly ErrorCode[]) {
  const codes = ERROR_CODES.filter(
    (code) => ERROR_KINDS[code].status === status && (only === undefined || only.includes(code)),
  );
  return Type.Object(
    {
      error: Type.String({ description: ERROR_MESSAGE }),
      ...extra,
      code: Type.Enum(codes, { description: `E3: the kind of error: ${codes.join(', ')}.` }),
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

const requestId = { requestId: Type.String({ description: 'E2: quote it when reporting the failure.' }) };

/** 4xx and 5xx answers common to the operations that need a key. */
const KEYED_ERRORS = {
  408: errorResponse(408, 'The client took too long to send its request (`REQUEST_TIMEOUT`).'),
  431: errorResponse(431, 'Request headers over 16 KiB (`HEADERS_TOO_LARGE`), refused before routing.'),
  401: {
    ...errorResponse(
      401,
      'K3: missing, malformed, unknown or revoked key (`UNAUTHENTICATED`), or an inactive subscription (`SUBSCRIPTION_INACTIVE`).',
    ),
  },
  429: {
    ...errorResponse(
      429,
      'R1: too many requests for this key (`RATE_LIMITED`, with X-RateLimit-*), or R2: too many failed authentications from this address (`AUTH_FAILURES_LIMITED`).',
    ),
    headers: { ...RETRY_AFTER, ...RATE_HEADERS },
  },
  500: errorResponse(500, 'E2: unexpected failure; no internal detail.', requestId),
  503: {
    ...errorResponse(
      503,
      'E2: database unreachable (`DATABASE_UNAVAILABLE`), too much work at once (`SERVICE_BUSY`), or the organization’s report data being prepared (`SNAPSHOT_BUILDING`, issue 28): nothing was done, retry after Retry-After.',
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
    Type.String({ format: 'date', description: 'PC1: the first day of the k-th comparison bucket.' }),
  ),
  ...Object.fromEntries(
    METRICS.flatMap((m) => [
      [`${m.id}_previous`, nullable(m.type === 'currency' ? Type.Number() : Type.Integer())],
      [
        `${m.id}_change`,
        nullable(
          Type.Number({
            description: 'PC1: (value − previous) / previous × 100, to one decimal; null when previous is 0.',
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
    from: Type.String({ format: 'date', description: 'The first day used (after P4).' }),
    to: Type.String({ format: 'date' }),
    timezone: Type.String(),
    granularity: Type.Optional(Type.Enum(GRANULARITIES, { description: 'G2, when not `day`.' })),
    filters: Type.Optional(
      Type.Object(
        Object.fromEntries(FILTER_DIMENSIONS.map((d) => [d, Type.Optional(Type.Array(Type.String()))])),
        { additionalProperties: false, description: 'F1, the filters applied, when any.' },
      ),
    ),
    offset: Type.Optional(Type.Integer({ minimum: 1, description: 'O1, when not 0.' })),
    compare: Type.Optional(
      Type.Object(
        {
          mode: Type.Enum(COMPARE_MODES),
          from: Type.String({ format: 'date' }),
          to: Type.String({ format: 'date' }),
        },
        {
          additionalProperties: false,
          description: 'PC1: the comparison period used, when `compare` is given.',
        },
      ),
    ),
    rows: Type.Array(
      Type.Object(
        { ...dimensionValues, ...metricValues, ...comparedValues },
        {
          additionalProperties: false,
          description:
            'T2: the dimension ids then the metric ids, in request order. Amounts in the currency, rounded to the cent (M1). PC1: `date_previous` right after `date`, then `<metric>_previous` and `<metric>_change` for each metric.',
        },
      ),
    ),
    rowCount: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

const CatalogEntry = Type.Object(
  { id: Type.String(), label: Type.String(), type: Type.String() },
  { additionalProperties: false },
);
export const CatalogBody = Type.Object(
  { dimensions: Type.Array(CatalogEntry), metrics: Type.Array(CatalogEntry) },
  { additionalProperties: false },
);

const CACHE_CONTROL = {
  'Cache-Control': Type.String({ description: 'C1: private, max-age=60.' }),
};

export const TABULAR_RESPONSES = {
  200: {
    description: 'The table (section 7): JSON by default, CSV under V1.',
    headers: {
      ...RATE_HEADERS,
      ...CACHE_CONTROL,
      'X-Rows-Truncated': Type.Enum(['true'], {
        description: 'T6, O1: present when rows remain after `offset` + `limit`.',
      }),
      Vary: Type.String({ description: 'V1: Accept (the answer depends on it).' }),
    },
    content: {
      ...json(TabularBody),
      'text/csv': {
        schema: Type.String({
          description:
            'V1, RFC 4180: a header line of the ids, then the same rows and values as the JSON answer; a text cell beginning with =, +, -, @, tab or CR starts with a quote.',
          examples: ['date,orders,net_revenue\r\n2026-01-01,12,1042.5\r\n'],
        }),
      },
    },
  },
  400: {
    ...errorResponse(
      400,
      'P1–P6, F1, G2, O1, V1: a parameter is malformed or out of range (`INVALID_PARAMETER`), no metric is asked (`MISSING_METRICS`), or ids are unknown (`UNKNOWN_IDENTIFIERS`, with both lists).',
      {
        unknownDimensions: Type.Optional(Type.Array(Type.String(), { description: 'P2, F1.' })),
        unknownMetrics: Type.Optional(Type.Array(Type.String(), { description: 'P2.' })),
      },
    ),
    headers: RATE_HEADERS,
  },
  ...KEYED_ERRORS,
};

export const CATALOG_RESPONSES = {
  200: {
    description: 'G1: the catalog, in the reference’s order, with its French labels.',
    headers: { ...RATE_HEADERS, ...CACHE_CONTROL },
    content: json(CatalogBody),
  },
  400: errorResponse(400, 'A malformed request, e.g. a body on this GET (`BAD_REQUEST`).', {}, [
    'BAD_REQUEST',
  ]),
  ...KEYED_ERRORS,
};

/**
 * B2's 405 and E2's 404, written straight into the document (openapi.ts), hence in OpenAPI's own
 * form: a header is an object with its schema.
 */
export const METHOD_NOT_ALLOWED_RESPONSE = {
  ...errorResponse(405, 'B2: the API is read-only.'),
  headers: { Allow: { schema: Type.String(), description: 'B2: GET, HEAD, OPTIONS.' } },
};
export const NOT_FOUND_BODY = errorBody(404);
