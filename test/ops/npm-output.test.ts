/**
 * A quiet install on an older system Node: npm runs on the system's Node,
 * which may be older than the Node 24 `npm ci` fetches for everything else,
 * and prints five lines of EBADENGINE for each package that needs a newer
 * one. `.npmrc` keeps npm to errors; with warnings asked for, the wall is
 * there (so this test sees it when it comes back). Runs npm's check of the
 * locked tree (`npm install --dry-run`, nothing written) in a clean copy,
 * with a system Node older than 24 when the machine has one.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.ts';
import { cleanCopy } from '../helpers/temp.ts';

const run = promisify(execFile);

/** A node on PATH outside this project, older than 24, and the npm beside it; null when there is none. */
function olderSystemNode(): { node: string; npm: string } | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir || path.resolve(dir).startsWith(ROOT)) continue;
    const [node, npm] = [path.join(dir, 'node'), path.join(dir, 'npm')];
    if (!existsSync(node) || !existsSync(npm)) continue;
    const major = Number(
      execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim(),
    );
    return major < 24 ? { node, npm } : null;
  }
  return null;
}
const system = olderSystemNode();

describe.skipIf(!system)('npm on a system Node older than 24', () => {
  it('prints no wall of engine warnings, though the engines are checked', { timeout: 240_000 }, async () => {
    const clone = await cleanCopy('npm-output');
    const npm = async (...extra: string[]) => {
      const { stderr } = await run(
        system!.node,
        [system!.npm, 'install', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund', ...extra],
        { cwd: clone, maxBuffer: 1 << 24 },
      );
      return stderr.split('\n').filter((line) => line.includes('EBADENGINE')).length;
    };
    expect(await npm()).toBe(0);
    expect(await npm('--loglevel', 'warn')).toBeGreaterThan(10);
  });
});
