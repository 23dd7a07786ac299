// COPY's text format (the import's bulk path): every value goes in as exactly one field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyField } from '../../../src/ingest/import.js';

test('copyField: NULL is \\N; backslash, tab, line feed and carriage return are escaped; the rest is literal', () => {
  assert.equal(copyField(null), '\\N');
  assert.equal(copyField(undefined), '\\N');
  assert.equal(copyField('\\N'), '\\\\N');
  assert.equal(copyField('a\tb\nc\rd\\e'), 'a\\tb\\nc\\rd\\\\e');
  assert.equal(copyField(`quotes "x" 'y', commas; café ✓ 😀`), `quotes "x" 'y', commas; café ✓ 😀`);
  assert.equal(copyField(42), '42');
  assert.equal(copyField('12.30'), '12.30');
});
