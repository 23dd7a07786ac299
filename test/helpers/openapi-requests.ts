// Requests made from an OpenAPI document with fast-check (issue 10, contract fuzzing): each query
// parameter's JSON schema mapped to an arbitrary, so every request is one the document allows.
// What a schema cannot say (which free texts make sense, which days hold data) comes as hints.
// A schema the mapper does not know fails loudly: a new kind of parameter needs a mapping here.
import fc from 'fast-check';
import { operationsOf, type JsonSchema, type OpenApiDocument, type Parameter } from './openapi-document.js';

export interface RequestHints {
  /** Days for `format: date` values. */
  readonly dates: { readonly min: Date; readonly max: Date };
  /** Free texts, by parameter name (the items of a list parameter included). */
  readonly texts?: Readonly<Record<string, fc.Arbitrary<string>>>;
}

export interface GeneratedRequest {
  readonly method: string;
  readonly path: string;
  /** The path and query string, e.g. `/api/reports/tabular?metrics=orders,taxes`. */
  readonly target: string;
  /** The values sent, by parameter name (a list's items). */
  readonly parameters: Readonly<Record<string, readonly string[]>>;
}

/** Small values most of the time (offsets that keep rows), the whole range otherwise. */
function integerText(schema: JsonSchema): fc.Arbitrary<string> {
  const min = schema.minimum ?? -1_000;
  const max = schema.maximum ?? 1_000;
  return fc
    .oneof(
      { weight: 3, arbitrary: fc.integer({ min, max: Math.min(max, min + 60) }) },
      { weight: 1, arbitrary: fc.integer({ min, max }) },
    )
    .map(String);
}

function scalarText(name: string, schema: JsonSchema, hints: RequestHints): fc.Arbitrary<string> {
  if (schema.enum) return fc.constantFrom(...schema.enum.map(String));
  if (schema.type === 'integer') return integerText(schema);
  if (schema.type === 'boolean') return fc.constantFrom('true', 'false');
  if (schema.type === 'string' && schema.format === 'date') {
    return fc.date({ ...hints.dates, noInvalidDate: true }).map((day) => day.toISOString().slice(0, 10));
  }
  if (schema.type === 'string' && schema.format === undefined) {
    const minLength = schema.minLength ?? 0;
    const maxLength = schema.maxLength ?? 40;
    const text = hints.texts?.[name] ?? fc.string({ minLength, maxLength: Math.min(maxLength, 40) });
    return text.filter((value) => value.length >= minLength && value.length <= maxLength);
  }
  throw new Error(`no arbitrary for parameter ${name}: ${JSON.stringify(schema)}`);
}

/** The values of one parameter: one text, or a list's items (never empty). */
function parameterValues(parameter: Parameter, hints: RequestHints): fc.Arbitrary<string[]> {
  const schema = parameter.schema ?? {};
  if (schema.type !== 'array') return scalarText(parameter.name, schema, hints).map((value) => [value]);
  // A comma inside an item would split it in a `style: form, explode: false` list.
  const item = scalarText(parameter.name, schema.items ?? {}, hints).filter((value) => !value.includes(','));
  const minLength = Math.max(1, schema.minItems ?? 0);
  return fc.uniqueArray(item, { minLength, maxLength: Math.min(schema.maxItems ?? 4, minLength + 3) });
}

/** `name=value`, or for a list `name=a,b` (form, explode: false) or `name=a&name=b` (explode). */
function queryPart(parameter: Parameter, values: readonly string[]): string {
  const name = encodeURIComponent(parameter.name);
  const isList = parameter.schema?.type === 'array';
  if (isList && parameter.explode === false && (parameter.style ?? 'form') === 'form') {
    return `${name}=${values.map(encodeURIComponent).join(',')}`;
  }
  return values.map((value) => `${name}=${encodeURIComponent(value)}`).join('&');
}

/**
 * Requests to every operation of the document; an operation with more parameters is drawn more
 * often. Optional parameters are absent half of the time.
 */
export function documentedRequests(
  document: OpenApiDocument,
  hints: RequestHints,
): fc.Arbitrary<GeneratedRequest> {
  const choices = operationsOf(document).map(({ path, method, operation }) => {
    const parameters = operation.parameters ?? [];
    for (const parameter of parameters) {
      if (parameter.in !== 'query')
        throw new Error(`no arbitrary for ${parameter.in} parameter ${parameter.name}`);
    }
    const values = parameters.map((parameter) => {
      const arbitrary = parameterValues(parameter, hints);
      return parameter.required ? arbitrary : fc.option(arbitrary, { nil: undefined, freq: 2 });
    });
    const arbitrary = fc.tuple(...values).map((drawn): GeneratedRequest => {
      const sent = parameters.flatMap((parameter, i) => {
        const value = drawn[i];
        return value === undefined ? [] : [{ parameter, value }];
      });
      const query = sent.map(({ parameter, value }) => queryPart(parameter, value)).join('&');
      return {
        method: method.toUpperCase(),
        path,
        target: query === '' ? path : `${path}?${query}`,
        parameters: Object.fromEntries(sent.map(({ parameter, value }) => [parameter.name, value])),
      };
    });
    return { weight: method === 'get' ? 4 + 2 * parameters.length : 1, arbitrary };
  });
  return fc.oneof(...choices);
}
