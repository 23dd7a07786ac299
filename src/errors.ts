// One catalogue of errors (STYLE): each kind has a code, an HTTP status and a French message.
// src/api/errors.ts is the one place that turns them into responses.

export const ERROR_KINDS = {
  BAD_REQUEST: {
    status: 400,
    doc: 'A request refused before it reaches a route: malformed HTTP or URL, a body where none belongs.',
  },
  INVALID_PARAMETER: { status: 400, doc: 'A query parameter is malformed or out of range (E1, P3–P6).' },
  MISSING_METRICS: { status: 400, doc: 'No metric was requested (P1).' },
  UNKNOWN_IDENTIFIERS: { status: 400, doc: 'Unknown dimension or metric ids (P2).' },
  UNAUTHENTICATED: { status: 401, doc: 'Missing, malformed, unknown or revoked API key (K3).' },
  SUBSCRIPTION_INACTIVE: {
    status: 401,
    doc: 'The organization subscription is stopped or its trial ended (K3).',
  },
  FORBIDDEN: { status: 403, doc: 'A web form sent from another origin (CSRF, finding 5).' },
  NOT_FOUND: { status: 404, doc: 'Unknown path, or unknown object named by an operator command (E2).' },
  METHOD_NOT_ALLOWED: { status: 405, doc: 'The API is read-only (B2).' },
  REQUEST_TIMEOUT: { status: 408, doc: 'The client took too long to send its request.' },
  CONFLICT: { status: 409, doc: 'The object already exists (operator commands).' },
  PAYLOAD_TOO_LARGE: { status: 413, doc: 'A request body over its bound (web forms, uploads).' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, doc: 'A request body of a content type no route reads.' },
  RATE_LIMITED: { status: 429, doc: 'Too many requests for this key in the window (R1).' },
  AUTH_FAILURES_LIMITED: { status: 429, doc: 'Too many failed authentications from this address (R2).' },
  HEADERS_TOO_LARGE: { status: 431, doc: 'Request headers over 16 KiB, refused by Node before routing.' },
  INTERNAL: { status: 500, doc: 'Unexpected failure; the response carries a request id only (E2).' },
  SERVICE_BUSY: {
    status: 503,
    doc: 'Too much work at once (reports or imports): nothing was done; retry after Retry-After.',
  },
  DATABASE_UNAVAILABLE: { status: 503, doc: 'The database cannot be reached; retry later (E2).' },
} as const;

export type ErrorCode = keyof typeof ERROR_KINDS;
export const ERROR_CODES = Object.keys(ERROR_KINDS) as readonly ErrorCode[];

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra fields merged into the JSON body, e.g. unknownDimensions (P2). */
  readonly body: Readonly<Record<string, unknown>>;
  /** Seconds after which a retry may succeed (the Retry-After header). */
  readonly retryAfterS: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    body: Record<string, unknown> = {},
    options: { retryAfterS?: number } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_KINDS[code].status;
    this.body = body;
    this.retryAfterS = options.retryAfterS;
  }
}

/** The value as the client sent it, cut short so that an error never echoes a huge input. */
export const quoted = (value: string, max = 80): string =>
  value.length > max ? `${value.slice(0, max)}…` : value;

export const invalidParameter = (name: string, value: string, expected: string): AppError =>
  new AppError('INVALID_PARAMETER', `Paramètre ${name} invalide : « ${quoted(value)} » (${expected})`);

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** The `code` and `statusCode` a thrown value carries, if any (Node, Fastify and plugin errors). */
export function errorFields(error: unknown): { code?: string; statusCode?: number } {
  if (typeof error !== 'object' || error === null) return {};
  const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  const statusCode =
    'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : undefined;
  return { ...(code === undefined ? {} : { code }), ...(statusCode === undefined ? {} : { statusCode }) };
}
