// The example order files of docs/import-format.md (issue 30), downloadable from the Boutiques
// import form: the very files of docs/examples/, so the form and the docs cannot disagree. Read
// once at start; served without a session, as the docs are public.
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';

export const IMPORT_EXAMPLES_PATH = '/import/examples';

const EXAMPLES_DIR = new URL('../../../docs/examples/', import.meta.url);

const EXAMPLES = {
  'orders-example.ndjson': 'application/x-ndjson; charset=utf-8',
  'orders-example.csv': 'text/csv; charset=utf-8',
} as const;

export async function importExamples(app: FastifyInstance): Promise<void> {
  for (const [name, type] of Object.entries(EXAMPLES)) {
    const bytes = fs.readFileSync(new URL(name, EXAMPLES_DIR));
    app.get(`${IMPORT_EXAMPLES_PATH}/${name}`, async (_request, reply) =>
      reply
        .header('cache-control', 'public, max-age=300')
        .header('content-disposition', `attachment; filename="${name}"`)
        .type(type)
        .send(bytes),
    );
  }
}
