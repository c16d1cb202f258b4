// ESLint's flat config: typescript-eslint's recommended rules on the TypeScript,
// ESLint's on the two page scripts; `npm run lint`, held at zero findings by
// test/ops/lint.test.ts. Prettier owns the layout, so no rule here is about it.
import js from '@eslint/js';
import globals from 'globals';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  // Built output, installed and generated files (and what tests leave) are not ours to lint.
  { ignores: ['dist/', 'dist.*/', '.dist-*/', 'client-package/', 'test-results/', 'data/', '.netlify/', '.wrangler/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: { globals: globals.node },
    rules: {
      // Omitting a field by destructuring (`const { year: _, ...rest } = row`) and a drained loop's `_` are meant.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, varsIgnorePattern: '^_' }],
    },
  },
  {
    // They read JSON of many shapes (answers, the OpenAPI document), checked by value: types would repeat the API's.
    files: ['test/build/records.test.ts', 'test/build/rankings.test.ts', 'test/build/openapi.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The reference page's and the portal's scripts run in the browser as classic scripts.
    files: ['build/site/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'script', globals: globals.browser },
  },
  {
    files: ['eslint.config.js'],
    extends: [js.configs.recommended],
  },
);
