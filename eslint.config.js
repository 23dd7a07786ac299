import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

// The layers of STYLE's layout, top to bottom: a module may import from its own layer and the
// layers below it, never from one above. `domain` (organizations, users, stores, accounts) sits
// under `auth` (who is calling) and over the engines it drives (`ingest`, `metrics`).
const LAYERS = [
  ['src/main.ts', 'src/serve.ts', 'src/app.ts', 'src/cli'],
  ['src/api', 'src/web', 'src/demo'],
  ['src/auth'],
  ['src/domain'],
  ['src/ingest', 'src/metrics'],
  ['src/query', 'src/limits'],
  ['src/db', 'src/catalog.ts'],
  ['src/config.ts', 'src/config', 'src/errors.ts', 'src/logging.ts'],
];
// Every pattern a glob (the rule refuses a mix): a file as @(name).ts, a folder as folder/**.
const asGlob = (path) =>
  path.endsWith('.ts') ? `./${path.replace(/([^/]+)\.ts$/, '@($1).ts')}` : `./${path}/**`;
const layerZones = LAYERS.flatMap((layer, depth) =>
  depth === 0
    ? []
    : [
        {
          target: layer.map(asGlob),
          from: LAYERS.slice(0, depth).flat().map(asGlob),
          message: 'imports flow down the layers of STYLE.md',
        },
      ],
);
// Delivery modules are siblings that never import each other; the CLI reaches the server only
// through serve.ts.
const siblingZones = ['src/api', 'src/web', 'src/demo'].map((dir) => ({
  target: ['./src/api/**', './src/web/**', './src/cli/**', './src/demo/**'].filter((t) => t !== asGlob(dir)),
  from: asGlob(dir),
  message: 'api, web, cli and demo do not import each other',
}));

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
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver()],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: [...layerZones, ...siblingZones] }],
      'import-x/no-cycle': 'error',
    },
  },
  {
    files: ['src/config.ts', 'test/**', 'bench/**', 'scripts/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
