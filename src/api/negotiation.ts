// V1: which format a tabular answer takes, from `format` or else the Accept header.
import Negotiator from 'negotiator';
import { parseFormat, type Format, type RawQuery } from '../query/parse.js';

/**
 * The Accept header's media ranges without their parameters but `q`: `charset=utf-8` or RFC 4180's
 * `header=present` say nothing about which format is wanted, and the negotiator would otherwise
 * match only a type offered with those very parameters.
 */
function rangesWithoutParameters(accept: string): string {
  return accept
    .split(',')
    .map((range) => {
      const [type = '', ...parameters] = range.split(';');
      const q = parameters.map((p) => p.trim()).find((p) => /^q=/i.test(p));
      return q === undefined ? type.trim() : `${type.trim()};${q}`;
    })
    .join(', ');
}

/**
 * `format` when given, else CSV when the Accept header names text/csv and prefers it to JSON;
 * JSON otherwise (no Accept, `*\/*`, `text/*`, or types the API does not make: as before V1).
 */
export function answerFormat(query: RawQuery, accept: string | undefined): Format {
  const asked = parseFormat(query);
  if (asked) return asked;
  if (accept === undefined || !accept.toLowerCase().includes('text/csv')) return 'json';
  const best = new Negotiator({ headers: { accept: rangesWithoutParameters(accept) } }).mediaType([
    'application/json',
    'text/csv',
  ]);
  return best === 'text/csv' ? 'csv' : 'json';
}
