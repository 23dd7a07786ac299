// D1 and issue 28: the builders of src/json-schema.ts make the very schemas TypeBox makes (they
// replace its 700 modules at start), so that each route validates its input and the OpenAPI
// document describes it as before. Compared key by key, in order, hidden marks included, on the
// shapes our schemas use, and on the API's own schemas rebuilt with TypeBox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type as TypeBox } from 'typebox';
import { Type } from '../../src/json-schema.js';

type Builders = typeof Type;

/** Every own key in order, with whether it is enumerable, its value, and the same of nested schemas. */
function anatomy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(anatomy);
  if (typeof value !== 'object' || value === null) return value;
  return Reflect.ownKeys(value).map((key) => {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    return [String(key), descriptor?.enumerable, anatomy(descriptor?.value)];
  });
}

/** Schemas of every shape the API and the web forms declare, made with the given builders. */
const shapes = (T: Builders) => ({
  string: T.String(),
  stringWithOptions: T.String({ format: 'date', maxLength: 10, description: 'A day.' }),
  integer: T.Integer({ minimum: 1, maximum: 10_000 }),
  number: T.Number(),
  enumeration: T.Enum(['day', 'week'], { description: 'Grain.', default: 'day' }),
  list: T.Array(T.String({ maxLength: 5 }), { maxItems: 3, description: 'Comma list.' }),
  nullable: T.Optional(T.Union([T.String(), T.Null()])),
  object: T.Object(
    {
      required: T.Enum(['a']),
      optional: T.Optional(T.Integer()),
      nested: T.Optional(T.Object({ inner: T.Optional(T.Array(T.String())) })),
    },
    { additionalProperties: false, description: 'Parameters.' },
  ),
  allOptional: T.Object({ only: T.Optional(T.String()) }),
  empty: T.Object({}),
});

test('D1: each builder makes the schema TypeBox makes, hidden marks and key order included', () => {
  const ours = shapes(Type);
  const theirs = shapes(TypeBox as unknown as Builders);
  for (const name of Object.keys(theirs) as (keyof typeof theirs)[]) {
    assert.deepEqual(anatomy(ours[name]), anatomy(theirs[name]), name);
    assert.equal(JSON.stringify(ours[name]), JSON.stringify(theirs[name]), name);
  }
});

test('D1: Optional marks a copy, leaving the schema it was given required elsewhere', () => {
  const shared = Type.String();
  const schema = Type.Object({ a: shared, b: Type.Optional(shared) });
  assert.deepEqual(schema.required, ['a']);
  assert.equal(Object.hasOwn(shared, '~optional'), false);
});
