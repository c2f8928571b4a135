// Lint: typescript-eslint's recommended rules over every workspace, and the architecture's boundaries
// (eslint.boundaries.js). Types are checked by tsc (npm run typecheck).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { boundaries } from './eslint.boundaries.js';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'shared/src/db/__generated__/**', 'clients/typescript/src/schema.d.ts', '.data/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  // The chart page's script runs in the browser (services/api/src/charts/chart-page.ts serves it).
  {
    files: ['services/api/src/charts/static/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser } },
  },
  ...boundaries,
);
