/**
 * The tree is formatted and linted: Prettier (.prettierrc.json) and ESLint
 * with typescript-eslint's recommended rules (eslint.config.js) find nothing,
 * as `npm run lint` runs them, each within a time bound. Both also run on a
 * planted mistake given on stdin, so a checker that no longer sees one
 * (a broken config, an ignore that swallows `src/`) fails here too.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.ts';

const ESLINT = path.join(ROOT, 'node_modules/eslint/bin/eslint.js');
const PRETTIER = path.join(ROOT, 'node_modules/prettier/bin/prettier.cjs');
/** ESLint on a cold cache: 14 s of CPU, 60 to 70 s of wall time on a loaded two-core machine. Prettier: a few. */
const TIME_LIMIT_MS = 180_000;

/** Runs a checker in the repository: its exit code and what it printed (`code` null when it ran out of time). */
function run(script: string, args: string[], stdin?: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [script, ...args],
      { cwd: ROOT, timeout: TIME_LIMIT_MS, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, out: `${stdout}${stderr}`.trim() });
      },
    );
    child.stdin!.end(stdin ?? '');
  });
}

const eslint = (...args: string[]) =>
  run(ESLINT, ['--cache', '--cache-location', 'node_modules/.cache/eslint/', ...args]);
const prettier = (...args: string[]) => run(PRETTIER, ['--cache', ...args]);

describe('formatting and lint', () => {
  it('finds no ESLint finding in the tree', { timeout: TIME_LIMIT_MS + 10_000 }, async () => {
    const { code, out } = await eslint('.');
    expect(out).toBe('');
    expect(code).toBe(0);
  });

  it(
    'finds every file formatted as Prettier would (`npm run format` writes them)',
    { timeout: TIME_LIMIT_MS + 10_000 },
    async () => {
      const { code, out } = await prettier('--list-different', '.');
      expect(out.split('\n').filter(Boolean)).toEqual([]);
      expect(code).toBe(0);
    },
  );

  it('reports a planted unused variable and a planted `any` in a file of src/', async () => {
    const { code, out } = await run(
      ESLINT,
      ['--stdin', '--stdin-filename', 'src/shared/planted.ts'],
      'const unused = 1;\nexport const x: any = 2;\n',
    );
    expect(code).toBe(1);
    expect(out).toContain("'unused' is assigned a value but never used");
    expect(out).toContain('@typescript-eslint/no-explicit-any');
  });

  it('reports a planted badly formatted file of src/, and passes it once formatted', async () => {
    const planted = (
      await run(PRETTIER, ['--check', '--stdin-filepath', 'src/shared/planted.ts'], 'export const x = {a:"b"}\n')
    ).code;
    const formatted = await run(PRETTIER, ['--stdin-filepath', 'src/shared/planted.ts'], 'export const x = {a:"b"}\n');
    expect([planted, formatted.out]).toEqual([1, "export const x = { a: 'b' };"]);
    expect(
      (await run(PRETTIER, ['--check', '--stdin-filepath', 'src/shared/planted.ts'], `${formatted.out}\n`)).code,
    ).toBe(0);
  });
});
