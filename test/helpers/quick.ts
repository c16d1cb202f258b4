/**
 * `npm run test:quick` (vitest.quick.config.ts) sets TEST_QUICK=1: the suites
 * it picks run on the in-process core only and start no Node, Deno or workerd
 * process; every assertion on the core still runs. `npm test` runs them all.
 */
export const QUICK = process.env.TEST_QUICK === '1';
