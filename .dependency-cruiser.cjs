// STYLE's one-way imports, checked by dependency-cruiser (`npm run lint`): the layers of src/,
// top to bottom. A module may import from its own layer and the layers below, never from one
// above; `domain` (organizations, users, stores, accounts) sits under `auth` (who is calling)
// and over the engines it drives (`ingest`, `metrics`). No import cycles anywhere in src/.
const LAYERS = [
  ['src/main.ts', 'src/serve.ts', 'src/app.ts', 'src/cli'],
  ['src/api', 'src/web', 'src/demo'],
  ['src/auth'],
  ['src/domain'],
  ['src/ingest', 'src/metrics'],
  ['src/query', 'src/limits'],
  ['src/db', 'src/catalog.ts'],
  [
    'src/config.ts',
    'src/config',
    'src/errors.ts',
    'src/logging.ts',
    'src/observability',
    'src/json-schema.ts',
  ],
];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// A file matches itself; a folder matches everything under it.
const pattern = (paths) =>
  `^(${paths.map((p) => (p.endsWith('.ts') ? `${escape(p)}$` : `${escape(p)}/`)).join('|')})`;

const upward = LAYERS.slice(1).map((layer, index) => ({
  name: `upward-from-${layer[0].replace(/^src\/|\.ts$/g, '')}`,
  comment: 'imports flow down the layers of STYLE.md',
  severity: 'error',
  from: { path: pattern(layer) },
  to: { path: pattern(LAYERS.slice(0, index + 1).flat()) },
}));

// Delivery modules are siblings that never import each other; the CLI reaches the server only
// through serve.ts.
const DELIVERY = ['src/api', 'src/web', 'src/demo', 'src/cli'];
const siblings = DELIVERY.map((dir) => ({
  name: `${dir.slice(4)}-imports-a-sibling`,
  comment: 'api, web, cli and demo do not import each other',
  severity: 'error',
  from: { path: pattern([dir]) },
  to: { path: pattern(DELIVERY.filter((other) => other !== dir)) },
}));

module.exports = {
  forbidden: [
    ...upward,
    ...siblings,
    {
      name: 'unresolvable-import',
      comment: 'an import the checker cannot follow would escape the rules above',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-cycle',
      comment: 'an import cycle makes the layers meaningless',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages' "exports" maps (e.g. csv-stringify/sync), as Node resolves an ES module import.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default'] },
  },
};
