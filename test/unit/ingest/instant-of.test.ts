// instantOf (src/ingest/validate-order.ts): a checked instant's whole seconds since 1970 and its
// microseconds, as PostgreSQL stores a timestamptz (issue 27: a command's import builds its
// report snapshot and its customers' first orders from them). Against the Date object's reading
// of the same instant, over every form INSTANT accepts, and at the ends of the years allowed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { instantOf } from '../../../src/ingest/validate-order.js';

/** Date.parse's reading, for the ISO forms it takes (four-digit years, a colon in the offset). */
function reference(iso: string): { seconds: number; micros: number } {
  const m = /^(.{19})(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(iso);
  if (!m) throw new Error(iso);
  const ms = Date.parse(`${m[1]}${m[3]}`);
  return { seconds: Math.floor(ms / 1000), micros: Number((m[2] ?? '').padEnd(6, '0')) };
}

test('every form INSTANT accepts reads as the Date object reads it', () => {
  const cases: [string, string][] = [
    ['2026-03-01T23:30:00+01:00', '2026-03-01T23:30:00+01:00'],
    ['2026-03-01 23:30:00+01:00', '2026-03-01T23:30:00+01:00'],
    ['2026-03-01T23:30+0100', '2026-03-01T23:30:00+01:00'],
    ['2026-03-01T23:30Z', '2026-03-01T23:30:00Z'],
    ['2024-02-29T00:00:00.5-09:30', '2024-02-29T00:00:00.5-09:30'],
    ['1969-12-31T23:59:59.999999Z', '1969-12-31T23:59:59.999999Z'],
    ['1900-03-01T12:00:00.000001+14:00', '1900-03-01T12:00:00.000001+14:00'],
    ['2000-01-01T00:00:00-12:00', '2000-01-01T00:00:00-12:00'],
    ['9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999999Z'],
    ['1600-02-29T05:45:00+0545', '1600-02-29T05:45:00+05:45'],
  ];
  for (const [text, iso] of cases) assert.deepEqual(instantOf(text), reference(iso), text);
});

test('years before 100 are years of the proleptic Gregorian calendar, not 1900 and after', () => {
  // 0050-03-01T00:30:00+14:00 is 0050-02-28T10:30:00Z; 0001-01-01 is day -719,162 from 1970.
  assert.deepEqual(instantOf('0001-01-01T00:00:00Z'), { seconds: -719_162 * 86_400, micros: 0 });
  const march = instantOf('0050-03-01T00:30:00+14:00');
  const utc = new Date(0);
  utc.setUTCFullYear(50, 1, 28);
  utc.setUTCHours(10, 30, 0, 0);
  assert.deepEqual(march, { seconds: utc.getTime() / 1000, micros: 0 });
});
