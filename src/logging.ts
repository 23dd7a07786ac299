// Log options of the server (issue 7, finding 9; K2: a key is never logged). Redaction happens on
// every finished log line, not at each call site: whatever a key, a session token or a credential
// came through (query string, header, error message, any field of any log call), it is masked
// before the line is written.
import type { FastifyRequest, FastifyServerOptions } from 'fastify';
import type { LogFormat } from './config.js';

/** Where JSON log lines go (stdout by default; tests capture them). */
export interface LogDestination {
  write(line: string): unknown;
}

export const MASK = '[masqué]';

const SECRETS: [RegExp, string][] = [
  // K1 key format: smk_ and 38 base62 characters (the 12-character display prefix is not secret).
  [/smk_[0-9A-Za-z]{38}/g, `smk_${MASK}`],
  // Credentials of an Authorization header or a URL, session and CSRF cookies, whatever the field.
  [/\b(Bearer|Basic)(\s+)[^\s"'\\,;]+/gi, `$1$2${MASK}`],
  [/\b(sm_session|_csrf)=[^\s"'\\;,&]+/g, `$1=${MASK}`],
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@"']*):[^\s/@"']*@/gi, `$1:${MASK}@`],
];

// Every pattern above needs one of these: most lines (request lines) skip the four replacements.
const MAY_HOLD_SECRET = /smk_|bearer|basic|sm_session|_csrf|:\/\//i;

/** The line with every secret it contains masked. */
export function redactSecrets(line: string): string {
  if (!MAY_HOLD_SECRET.test(line)) return line;
  let redacted = line;
  for (const [pattern, replacement] of SECRETS) redacted = redacted.replace(pattern, replacement);
  return redacted;
}

/** A destination that masks secrets in each line before passing it on. */
export function redactingDestination(target: LogDestination): LogDestination {
  return { write: (line: string) => target.write(redactSecrets(line)) };
}

let pendingLines: string[] = [];

function flushPendingLines(): void {
  if (pendingLines.length === 0) return;
  const text = pendingLines.join('');
  pendingLines = [];
  process.stdout.write(text);
}

/**
 * Standard output, written once per turn of the event loop instead of once per line (a write
 * system call per request line was a large share of a cached answer, issue 9 item 5). Lines still
 * pending when the process exits are written then ('exit' event); a process killed by a signal
 * it does not handle loses at most the lines of its last turn.
 */
export const stdoutLines: LogDestination = {
  write(line: string) {
    if (pendingLines.push(line) === 1) setImmediate(flushPendingLines);
    else if (pendingLines.length >= 1_000) flushPendingLines();
  },
};
process.on('exit', flushPendingLines);

/** Request logs name the path only: a query string may carry anything a client put there. */
function requestSummary(request: FastifyRequest) {
  return {
    method: request.method,
    url: request.url.split('?')[0],
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'AVERTISSEMENT',
  50: 'ERREUR',
  60: 'FATAL',
};

/** The fields of a JSON log line that a short line shows. */
interface LogEvent {
  level?: number;
  time?: number;
  msg?: string;
  /** What happened, for the events that say it in a field (`report snapshot`: built, updated…). */
  event?: unknown;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  err?: { message?: string };
}

/** One JSON log line as a short line for a person: time, level, message, request, error. */
export function humanLine(json: string): string {
  let event: LogEvent;
  try {
    event = JSON.parse(json) as LogEvent;
  } catch {
    return json;
  }
  const time = new Date(event.time ?? Date.now()).toISOString().slice(11, 19);
  const parts = [time, LEVEL_NAMES[event.level ?? 30] ?? String(event.level), event.msg ?? ''];
  if (typeof event.event === 'string') parts.push(event.event);
  if (event.req?.method) parts.push(`${event.req.method} ${event.req.url ?? ''}`);
  if (event.res?.statusCode) parts.push(`→ ${event.res.statusCode}`);
  if (event.err?.message) parts.push(`: ${event.err.message}`);
  return `${parts.join(' ')}\n`;
}

const REQUEST_LINE = /"msg":"(request completed|incoming request)"/;

/**
 * LOG_FORMAT=text (issue 30): every event as a short line, except the access lines of the
 * requests that succeeded (info level), which would scroll the demo banner away within a minute.
 * Failed requests are logged at error level, so they still show.
 */
export function humanDestination(target: LogDestination): LogDestination {
  return {
    write(line: string) {
      if (line.startsWith('{"level":30') && REQUEST_LINE.test(line)) return;
      target.write(humanLine(line));
    },
  };
}

export function loggerOptions(
  level: string,
  destination: LogDestination,
  format: LogFormat = 'json',
): FastifyServerOptions['logger'] {
  const stream = redactingDestination(destination);
  return {
    level,
    // Belt and braces: these fields are masked even before the line is written.
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.password',
        '*.key',
        '*.apiKey',
        '*.token',
      ],
      censor: MASK,
    },
    serializers: { req: requestSummary },
    stream: format === 'text' ? humanDestination(stream) : stream,
  };
}
