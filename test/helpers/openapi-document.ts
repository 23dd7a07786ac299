// The parts of an OpenAPI 3.1 document the contract tests read (issue 10), and a check of a body
// against the document's schema for it, for answers that cannot go through Prism (an unknown path,
// a request Prism refuses before the service sees it).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import SwaggerParser from '@apidevtools/swagger-parser';

export interface JsonSchema {
  readonly type?: string;
  readonly enum?: readonly unknown[];
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly items?: JsonSchema;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
}

export interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly schema?: JsonSchema;
  readonly style?: string;
  readonly explode?: boolean;
}

export interface MediaType {
  readonly schema?: JsonSchema;
}

export interface ResponseObject {
  readonly content?: Readonly<Record<string, MediaType>>;
  readonly headers?: Readonly<Record<string, unknown>>;
}

export interface Operation {
  readonly operationId?: string;
  readonly parameters?: readonly Parameter[];
  readonly responses: Readonly<Record<string, ResponseObject>>;
}

export interface OpenApiDocument {
  readonly openapi: string;
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>;
  readonly components?: { readonly schemas?: Readonly<Record<string, JsonSchema>> };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

export interface DocumentedOperation {
  readonly path: string;
  readonly method: string;
  readonly operation: Operation;
}

/** Every operation of the document (references resolved when the document is dereferenced). */
export function operationsOf(document: OpenApiDocument): DocumentedOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({ path, method, operation })),
  );
}

/** The document with every $ref replaced by what it points to. */
export async function dereferenced(document: OpenApiDocument): Promise<OpenApiDocument> {
  return (await SwaggerParser.dereference(structuredClone(document) as never)) as unknown as OpenApiDocument;
}

/**
 * Checks JSON bodies against the schemas of a dereferenced document. Formats (`date`) are not
 * checked: the bodies checked here are error bodies, which have none.
 */
export class BodyChecker {
  private readonly ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  private readonly compiled = new Map<JsonSchema, ValidateFunction>();

  /** The problems of `body` against `schema`, none when it conforms. */
  problems(schema: JsonSchema, body: unknown): string[] {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}`);
  }

  /** The problems of a JSON answer of `operation` with `status`, per the document. */
  responseProblems(operation: Operation, status: number, body: unknown): string[] {
    const response = operation.responses[String(status)];
    const schema = response?.content?.['application/json']?.schema;
    if (!schema) return [`no JSON answer ${status} documented`];
    return this.problems(schema, body);
  }
}
