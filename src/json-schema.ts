// The TypeBox builders our routes' schemas use, written out. TypeBox's package is some 700 ES
// modules: loading them was a fifth of the server's start on a 2-core machine, and every start,
// every test that spawns a server, paid it (issue 28). Each builder returns the very object
// TypeBox's does (the same keys in the same order, the same hidden `~kind` and `~optional`
// marks) and is typed as TypeBox types it, so that `Static<>`, Fastify's type provider, the
// validation and the OpenAPI document are what they were; test/unit/json-schema.test.ts compares
// them with TypeBox's own.
import type { Type as TypeBox } from 'typebox';

type Schema = Record<string, unknown>;

function hide(schema: Schema, key: '~kind' | '~optional', value: unknown): Schema {
  return Object.defineProperty(schema, key, { configurable: true, writable: true, enumerable: false, value });
}

/** TypeBox's Memory.Create: the schema's own keys, then the options, then its hidden kind. */
const create = (kind: string, own: Schema, options: object = {}): Schema =>
  hide({ ...own, ...options }, '~kind', kind);

const optional = (schema: Schema): Schema =>
  hide(Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)), '~optional', true);

function object(properties: Record<string, Schema>, options: object = {}): Schema {
  const required = Object.keys(properties).filter(
    (key) => !Object.hasOwn(properties[key] ?? {}, '~optional'),
  );
  return create(
    'Object',
    { type: 'object', ...(required.length > 0 ? { required } : {}), properties },
    options,
  );
}

function enumeration(values: unknown, options?: object): Schema {
  // TypeBox also takes a TypeScript enum; we never pass one.
  if (!Array.isArray(values)) throw new TypeError('Type.Enum: a list of values');
  return create('Enum', { enum: values }, options);
}

export const Type = {
  String: ((options?: object) =>
    create('String', { type: 'string' }, options)) as unknown as typeof TypeBox.String,
  Integer: ((options?: object) =>
    create('Integer', { type: 'integer' }, options)) as unknown as typeof TypeBox.Integer,
  Number: ((options?: object) =>
    create('Number', { type: 'number' }, options)) as unknown as typeof TypeBox.Number,
  Null: ((options?: object) => create('Null', { type: 'null' }, options)) as unknown as typeof TypeBox.Null,
  Enum: enumeration as unknown as typeof TypeBox.Enum,
  Array: ((items: Schema, options?: object) =>
    create('Array', { type: 'array', items }, options)) as unknown as typeof TypeBox.Array,
  Union: ((anyOf: Schema[], options?: object) =>
    create('Union', { anyOf }, options)) as unknown as typeof TypeBox.Union,
  Object: object as unknown as typeof TypeBox.Object,
  Optional: optional as unknown as typeof TypeBox.Optional,
};
