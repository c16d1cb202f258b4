/**
 * `npm run test:quick`, for the edit loop: the core, store, keys and api
 * suites on the in-process core alone (TEST_QUICK=1, test/helpers/quick.ts),
 * starting no Node, Deno or workerd process, and the formatting and lint
 * check (test/ops/lint.test.ts). The files that test those processes and
 * nothing else are left to `npm test`.
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

export default defineConfig({
  test: {
    ...base.test,
    // The lint test too: formatting and lint findings belong to the edit loop.
    include: ['test/api/**/*.test.ts', 'test/store/**/*.test.ts', 'test/keys/**/*.test.ts', 'test/ops/lint.test.ts'],
    exclude: [
      'test/api/health.test.ts', // /health on the edge function under Deno and the Worker's D1 under workerd
      'test/keys/keys-d1.test.ts', // D1 under workerd, its schema applied by wrangler
      'test/keys/concurrency.test.ts', // npm start and 20 keys commands at once
      'test/keys/key-database.test.ts', // npm start over a locked, read-only or damaged database
    ],
    env: { TEST_QUICK: '1' },
    reporters: ['default', ['json', { outputFile: 'test-results/vitest-quick.json' }]],
  },
});
