import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Text that starts like a SQL statement (the project writes its keywords in capitals). */
const SQL_START =
  '/^\\s*(SELECT|INSERT|UPDATE|DELETE|WITH|COPY|CREATE|ALTER|DROP|TRUNCATE|BEGIN|LOCK)\\s+\\S/'; // a keyword and more: the HTTP method 'DELETE' alone is no SQL
const NO_SQL =
  'No SQL in api/web/cli/demo (STYLE): call a function of src/db, src/domain, src/ingest or src/metrics.';

// STYLE's one-way imports between layers are checked by dependency-cruiser (.dependency-cruiser.cjs).
export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration in src/config.ts only.' },
      ],
    },
  },
  {
    // STYLE: no SQL in the delivery modules (HTTP handlers, pages, commands, the demo); they call
    // the core, whose SQL sits in domain/ingest/metrics/query/db (issue 26, item 5).
    files: ['src/api/**', 'src/web/**', 'src/cli/**', 'src/demo/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: `Literal[value=${SQL_START}]`, message: NO_SQL },
        {
          selector: `TemplateLiteral > TemplateElement:first-child[value.raw=${SQL_START}]`,
          message: NO_SQL,
        },
        { selector: "CallExpression[callee.property.name='query']", message: NO_SQL },
      ],
    },
  },
  {
    files: ['src/config.ts', 'test/**', 'bench/**', 'scripts/**', 'docs/**'], // docs/: standalone examples
    rules: { 'no-restricted-properties': 'off' },
  },
);
