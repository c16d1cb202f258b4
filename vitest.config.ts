import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
    // The JSON report is what .ci/run counts; the default reporter is what people read.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
