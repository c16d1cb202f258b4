/**
 * The order test files start in: the longest first, so that the workers
 * end together instead of one running a two-minute file alone at the end.
 * vitest orders by the durations it cached from the last run, but a fresh
 * clone (CI) has none and goes by file size, which starts the Netlify build
 * or the install last as often as first. The files below are the long ones
 * of a full run (longest first); every other file follows in vitest's own
 * order.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Test files that take over about 10 s of a full run on two cores (measured 2026-11-27), longest first. */
export const LONG_FILES = [
  'test/ops/deploy.test.ts',
  'test/api/behaviour.test.ts',
  'test/portal/portal.browser.test.ts',
  'test/ops/install.test.ts',
  'test/build/update.test.ts',
  'test/build/reference.test.ts',
  'test/build/build.test.ts',
  'test/runtimes/burst.test.ts',
  'test/runtimes/worker-joins-memory.test.ts',
  'test/runtimes/worker-memory.test.ts',
  'test/ops/operations.test.ts',
  'test/keys/key-database.test.ts',
  'test/keys/keys-postgres.test.ts',
  'test/keys/postgres-faults.test.ts',
  'test/runtimes/varnish.test.ts',
  'test/keys/keys-d1.test.ts',
  'test/build/command-line.test.ts',
  'test/store/answer-cache.test.ts',
  'test/api/search.test.ts',
  'test/ops/lint.test.ts', // added 2026-11-28: ESLint's 14 s of CPU on a cold cache, about a minute of a loaded machine
];

/** Where `file` (an absolute path under `root`) stands in {@link LONG_FILES}; past the end when it is not there. */
export function rank(root: string, file: string): number {
  const at = LONG_FILES.indexOf(
    file
      .slice(root.length + 1)
      .split('\\')
      .join('/'),
  );
  return at < 0 ? LONG_FILES.length : at;
}

export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: files of the same rank keep vitest's order.
    return sorted.sort((a, b) => rank(a.project.config.root, a.moduleId) - rank(b.project.config.root, b.moduleId));
  }
}
