// D1: GET /api/openapi.json, an OpenAPI 3.1 document of the public API made by @fastify/swagger
// from the routes' own schemas (src/api/schemas.ts), and GET /api/docs, a reference page rendered
// from it by Swagger UI, served from node_modules (no outside CDN). Neither needs a key.
//
// Responses are documented from each route's `config.docResponses`: declared as `schema.response`
// they would also make Fastify serialize bodies through them, and the service writes its own
// (pre-serialized answers, error bodies with their extra fields).
import type { FastifyInstance, FastifySchema } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ERROR_CODES, ERROR_KINDS } from '../errors.js';
import { LIST_PARAMETERS, METHOD_NOT_ALLOWED_RESPONSE, NOT_FOUND_BODY } from './schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The responses of an /api/ route, for the OpenAPI document only. */
    docResponses?: FastifySchema['response'];
    /** A summary and an id for the document's operation. */
    docOperation?: { readonly summary: string; readonly operationId: string; readonly description?: string };
  }
}

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PATH = '/api/docs';

const DESCRIPTION = `Read-only JSON API of an organization's sales metrics: a table of metrics (orders, revenue,
customers…) split by date, store, country, customer type and order status.

Authenticate with an API key (\`smk_…\`, created in the web application) in the
\`Authorization: Bearer\` header; never put a key in a URL. Answers are cached for 60 s, and each key
may make a limited number of requests per window (X-RateLimit-* headers).

Errors are JSON: \`error\` says in French what is wrong, \`code\` is a stable identifier of its kind.
An unknown path under /api/ answers 404 with a \`NotFoundError\` body (\`NOT_FOUND\`); another method
than GET, HEAD or OPTIONS answers 405 (\`METHOD_NOT_ALLOWED\`, with the Allow header).`;

/** Other methods on an API path: B2's 405, documented so that clients and fuzzers know it. */
const REFUSED_METHODS = ['post', 'put', 'patch', 'delete'] as const;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** E3: every kind of error of the catalogue (src/errors.ts), those of the web pages included. */
const ERROR_CODE = {
  type: 'string',
  enum: ERROR_CODES,
  description: [
    'The `code` of an error body, a stable identifier of its kind:',
    '',
    ...ERROR_CODES.map((code) => `- \`${code}\` (${ERROR_KINDS[code].status}): ${ERROR_KINDS[code].doc}`),
  ].join('\n'),
};

const componentSchemas = (components: object | undefined): object =>
  components && 'schemas' in components && isRecord(components.schemas) ? components.schemas : {};

/** Adds what the routes' schemas cannot say: list styles, B2's 405, E2's 404. */
function complete<T extends { paths?: object; components?: object }>(document: T): T {
  Object.assign(document, {
    components: {
      ...document.components,
      responses: { MethodNotAllowed: METHOD_NOT_ALLOWED_RESPONSE },
      // E2: the body of an unknown path under /api/, which is no operation of its own.
      schemas: {
        ...componentSchemas(document.components),
        NotFoundError: NOT_FOUND_BODY,
        ErrorCode: ERROR_CODE,
      },
    },
  });
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    if (!isRecord(operations)) continue;
    for (const operation of Object.values(operations)) {
      const parameters: unknown = isRecord(operation) ? operation.parameters : undefined;
      for (const parameter of Array.isArray(parameters) ? parameters : []) {
        if (isRecord(parameter) && parameter.in === 'query' && LIST_PARAMETERS.has(String(parameter.name))) {
          parameter.style = 'form';
          parameter.explode = false;
        }
      }
    }
    const name = path.split('/').filter(Boolean).join('_');
    for (const method of REFUSED_METHODS) {
      operations[method] = {
        summary: `Refused (${method.toUpperCase()})`,
        operationId: `${method}_${name}`,
        description: 'The API is read-only: any method other than GET, HEAD or OPTIONS answers 405.',
        tags: ['read-only'],
        security: [],
        responses: { 405: { $ref: '#/components/responses/MethodNotAllowed' } },
      };
    }
  }
  return document;
}

export async function openApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sales Metrics API',
        version: '1.0.0',
        description: DESCRIPTION,
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: '/', description: 'This server' }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key, `smk_` then 38 characters, in `Authorization: Bearer <key>`.',
          },
        },
      },
      security: [{ apiKey: [] }],
      tags: [
        { name: 'reports', description: 'Sales metrics: the catalog and the table.' },
        { name: 'read-only', description: 'Methods the read-only API refuses.' },
      ],
    },
    // Only the public API: the web application's pages and the health checks are not part of it.
    transform: ({ schema, url, route }) => {
      if (!url.startsWith('/api/reports/')) return { schema: { ...schema, hide: true }, url };
      const operation = route.config?.docOperation;
      const responses = route.config?.docResponses;
      return {
        schema: {
          ...schema,
          ...(operation ?? {}),
          tags: ['reports'],
          ...(responses ? { response: responses } : {}),
        },
        url,
      };
    },
    transformObject: (documentObject) =>
      complete(
        'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject,
      ),
  });

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('cache-control', 'public, max-age=300')
      .type('application/json; charset=utf-8')
      .send(app.swagger()),
  );

  // The page's own policy: Swagger UI sets styles inline and draws images from data: URLs; its
  // scripts stay files of this origin, and it asks no outside validator.
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    // The page reads the document at /api/docs/json (the plugin's own copy of app.swagger()).
    uiConfig: { validatorUrl: null, deepLinking: false, tryItOutEnabled: false },
    staticCSP:
      "default-src 'self'; base-uri 'none'; font-src 'self'; frame-ancestors 'none'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'; connect-src 'self'; form-action 'self'",
  });
}
