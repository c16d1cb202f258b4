/**
 * The suite starts its long files first (test/helpers/sequencer.ts), on a
 * fresh clone too: every file the list names is a test file that exists, so
 * a renamed or split file cannot drop out of the order unseen.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.ts';
import { LONG_FILES, rank } from '../helpers/sequencer.ts';

describe('the order the suite starts its files in', () => {
  it('names only test files that exist, each once', () => {
    expect(LONG_FILES.filter((file) => !file.endsWith('.test.ts') || !existsSync(path.join(ROOT, file)))).toEqual([]);
    expect(new Set(LONG_FILES).size).toBe(LONG_FILES.length);
  });

  it('puts a long file before any other, in the order of the list', () => {
    const at = (file: string) => rank(ROOT, path.join(ROOT, file));
    expect(at('test/ops/deploy.test.ts')).toBeLessThan(at('test/api/behaviour.test.ts'));
    expect(at('test/api/search.test.ts')).toBeLessThan(at('test/ops/docs.test.ts'));
    expect(at('test/ops/docs.test.ts')).toBe(LONG_FILES.length);
  });
});
