import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
    files: ['src/config.ts', 'test/**', 'bench/**', 'scripts/**', 'docs/**'], // docs/: standalone examples
    rules: { 'no-restricted-properties': 'off' },
  },
);
