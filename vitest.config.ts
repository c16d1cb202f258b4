import { defineConfig } from 'vitest/config';
import { LongFirstSequencer } from './test/helpers/sequencer.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The full archive exists before any test runs (fetched, or one line saying what to set).
    globalSetup: ['test/helpers/global-setup.ts'],
    // Every file removes the temp folders it made.
    setupFiles: ['test/helpers/cleanup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // gc() for memory checks that measure what is retained, not when the collector last ran (test/api/flood.test.ts).
    execArgv: ['--expose-gc'],
    // Three files at once, on two cores or more: much of a file's time is spent waiting on what it
    // started (Deno, workerd, Chromium, Varnish, npm start), which a third file fills. On the idle
    // 2-core machine the suite took 318 s with two, 277 s with three.
    maxWorkers: 3,
    // The long files first, even on a fresh clone with no durations cached (test/helpers/sequencer.ts).
    sequence: { sequencer: LongFirstSequencer },
    // The JSON report is what .ci/run counts; the default reporter is what people read.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
