/**
 * Tests leave nothing in the system temp folder: each file removes the
 * folders it made (test/helpers/cleanup.ts), and the run's own temp folder, where
 * TMPDIR points for the workers and everything they start, takes with it what
 * tools make there, whether the tests passed, failed or were skipped.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTempFolder } from '../helpers/global-setup.ts';
import { tempDir } from '../helpers/temp.ts';

describe("a test run's temp folder", () => {
  it('is where this worker and what it starts make their temp files', async () => {
    expect(path.basename(os.tmpdir())).toMatch(/^faa-test-run-/);
    expect(path.dirname(await tempDir('where'))).toBe(os.tmpdir());
  });

  it('is removed with whatever a tool left in it, and TMPDIR is given back', async () => {
    const env: NodeJS.ProcessEnv = { TMPDIR: os.tmpdir() };
    const remove = await runTempFolder(env);
    const dir = env.TMPDIR!;
    expect(path.dirname(dir)).toBe(os.tmpdir());
    // Every Node process the run starts shares one compile cache, inside the run's folder.
    expect(env.NODE_COMPILE_CACHE).toBe(path.join(dir, 'node-compile-cache'));
    // What playwright-core leaves when Chromium cannot start.
    await mkdir(path.join(dir, 'playwright-artifacts-x1y2z3'), { recursive: true });
    await writeFile(path.join(dir, 'playwright-artifacts-x1y2z3', 'trace'), 'left behind');
    await remove();
    expect(existsSync(dir)).toBe(false);
    expect(env.TMPDIR).toBe(os.tmpdir());
    expect(env.NODE_COMPILE_CACHE).toBeUndefined();
  });

  it('leaves TMPDIR unset afterwards when it was unset before', async () => {
    const env: NodeJS.ProcessEnv = {};
    const remove = await runTempFolder(env);
    expect(env.TMPDIR).toBeDefined();
    await remove();
    expect(env).toEqual({});
  });
});
