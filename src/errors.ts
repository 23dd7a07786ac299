// One catalogue of errors (STYLE): each kind has a code, an HTTP status, a French message template
// and a line of documentation. src/api/error-response.ts is the one place that turns them into
// responses; appError() builds an error from its kind's template.

/** A message that never varies. */
const fixed = (text: string) => (): string => text;
/** Kinds whose message names what is wrong in the caller's own words (a field, an object). */
const detail = (text: string): string => text;

export const ERROR_KINDS = {
  BAD_REQUEST: {
    status: 400,
    doc: 'A request refused before it reaches a route: malformed HTTP or URL, a body where none belongs.',
    message: fixed('Requête HTTP mal formée'),
  },
  INVALID_PARAMETER: {
    status: 400,
    doc: 'A query parameter, option or form field is malformed or out of range (dates, time zone, limit, offset…).',
    message: detail,
  },
  MISSING_METRICS: {
    status: 400,
    doc: 'No metric was requested.',
    message: fixed(
      'Paramètre metrics manquant : au moins une métrique est requise (par exemple metrics=orders,net_revenue)',
    ),
  },
  UNKNOWN_IDENTIFIERS: {
    status: 400,
    doc: 'Unknown dimension or metric ids.',
    message: fixed('Dimensions ou métriques inconnues'),
  },
  INCOMPATIBLE_METRICS: {
    status: 400,
    doc: 'Order metrics that have no single meaning per product, asked with a line dimension.',
    message: (metrics: readonly { readonly id: string; readonly replacement?: string }[]) =>
      `Métriques incompatibles avec les dimensions de ligne (produit, variante, SKU, catégorie) : ${metrics
        .map(({ id, replacement }) =>
          replacement === undefined
            ? `${id} (sans équivalent par produit)`
            : `${id} (utilisez ${replacement})`,
        )
        .join(', ')}`,
  },
  UNAUTHENTICATED: {
    status: 401,
    doc: 'Missing, malformed, unknown or revoked API key; no session on a web page.',
    message: detail,
  },
  SUBSCRIPTION_INACTIVE: {
    status: 401,
    doc: 'The organization subscription is stopped or its trial ended.',
    message: fixed(
      'Abonnement inactif : l’abonnement de l’organisation est arrêté ou sa période d’essai est terminée',
    ),
  },
  FORBIDDEN: {
    status: 403,
    doc: 'A web form sent from another origin (cross-site request forgery).',
    message: fixed('Formulaire refusé : il a été envoyé depuis un autre site.'),
  },
  NOT_FOUND: {
    status: 404,
    doc: 'Unknown path, or unknown object named by a command or a page.',
    message: detail,
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    doc: 'The API is read-only: GET, HEAD and OPTIONS only.',
    message: (method: string) => `Méthode ${method} non autorisée : l’API est en lecture seule (GET)`,
  },
  REQUEST_TIMEOUT: {
    status: 408,
    doc: 'The client took too long to send its request.',
    message: fixed('Requête trop lente : délai dépassé'),
  },
  CONFLICT: { status: 409, doc: 'The object already exists (operator commands).', message: detail },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    doc: 'A request body over its bound (web forms, uploads).',
    message: fixed('Corps de requête trop volumineux'),
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    doc: 'A request body of a content type no route reads.',
    message: fixed('Type de contenu non pris en charge'),
  },
  RATE_LIMITED: {
    status: 429,
    doc: 'Too many requests for this key in the window.',
    message: (max: number, windowS: number, retryS: number) =>
      `Trop de requêtes : ${max} requêtes par ${windowS} s au plus pour une clé, réessayez dans ${retryS} s`,
  },
  AUTH_FAILURES_LIMITED: {
    status: 429,
    doc: 'Too many failed authentications from this address.',
    message: (retryS: number) =>
      `Trop d’échecs d’authentification depuis cette adresse : réessayez dans ${retryS} s`,
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    doc: 'Request headers over 16 KiB, refused by Node before routing.',
    message: fixed('En-têtes de requête trop volumineux (16 Kio au plus)'),
  },
  INTERNAL: {
    status: 500,
    doc: 'Unexpected failure; the response carries a request id only.',
    message: fixed('Erreur interne du serveur'),
  },
  SERVICE_BUSY: {
    status: 503,
    doc: 'Too much work at once (reports, answers being sent, imports): nothing was done; retry after Retry-After.',
    message: detail,
  },
  SNAPSHOT_BUILDING: {
    status: 503,
    doc: 'The organization’s report data is being prepared (a first read after an import or a start) and this report could not be computed meanwhile within its budget; retry after Retry-After, sized to the preparation’s expected end (issue 28).',
    message: detail,
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    doc: 'The database cannot be reached; retry later.',
    message: fixed('Base de données momentanément indisponible, réessayez plus tard'),
  },
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

/** An error of `code` with its catalogue message: `appError('METHOD_NOT_ALLOWED', 'POST')`. */
export function appError<C extends ErrorCode>(
  code: C,
  ...params: Parameters<(typeof ERROR_KINDS)[C]['message']>
): AppError {
  const template: (...args: never[]) => string = ERROR_KINDS[code].message;
  return new AppError(code, template(...(params as never[])));
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** The `code` and `statusCode` a thrown value carries, if any (Node, Fastify and plugin errors). */
export function errorFields(error: unknown): { code?: string; statusCode?: number } {
  if (typeof error !== 'object' || error === null) return {};
  const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  const statusCode =
    'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : undefined;
  return { ...(code === undefined ? {} : { code }), ...(statusCode === undefined ? {} : { statusCode }) };
}

/**
 * Our own database busy (every pool connection taken, a statement over its budget) or unreachable
 * for a moment (src/db/database.ts): a caller that can wait tries again in seconds.
 */
export function databaseMomentarilyOut(error: unknown): error is AppError {
  return (
    error instanceof AppError && (error.code === 'SERVICE_BUSY' || error.code === 'DATABASE_UNAVAILABLE')
  );
}
