/**
 * The suite does not care what data/cache/ holds. `npm run data:fetch` (and
 * CI, through check:netlify) leaves the full archive in data/cache/oscars.csv,
 * which every command then builds from by default: a test that started
 * `npm start` over its sample build without naming the source had the build
 * replaced by the full archive, and the next command over it (dev:netlify,
 * told the sample) refused to shrink it. So the test helpers tell every
 * process over a test build the source it was built from. Shown here the way
 * the portal's browser test runs them, `npm start` then `npm run dev:netlify`
 * over one sample build, in a clone with and without the cache.
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULL_SOURCE, SAMPLE_SOURCE } from '../helpers/paths.ts';
import { startServer } from '../helpers/processes.ts';
import { buildInto, cleanCopy, tempDir, treeDigest } from '../helpers/temp.ts';

let clone: string;
beforeAll(async () => {
  clone = await cleanCopy('data-cache');
});
afterAll(() => rm(path.join(clone, 'data/cache'), { recursive: true, force: true }));

/** What /health says of the archive a started process serves. */
async function archiveOf(base: string): Promise<{ sample: boolean }> {
  const reply = await fetch(`${base}/health`);
  expect(reply.status).toBe(200);
  return ((await reply.json()) as { archive: { sample: boolean } }).archive;
}

describe('a process started over a test build', () => {
  it.each(['with', 'without'])('serves that build, untouched, %s the full archive in data/cache/', async (cached) => {
    if (cached === 'with') {
      await mkdir(path.join(clone, 'data/cache'), { recursive: true });
      await copyFile(FULL_SOURCE, path.join(clone, 'data/cache/oscars.csv'));
    } else {
      await rm(path.join(clone, 'data/cache'), { recursive: true, force: true });
    }
    const dist = await buildInto(SAMPLE_SOURCE, 'data-cache');
    const before = await treeDigest(dist);
    const dir = await tempDir('data-cache-run');
    const start = await startServer({ DIST_DIR: dist, KEYS_DB: path.join(dir, 'keys.db') }, { cwd: clone });
    try {
      expect(await archiveOf(start.base)).toMatchObject({ sample: true });
    } finally {
      await start.stop();
    }
    const netlify = await startServer(
      { DIST_DIR: dist, NETLIFY_LOCAL_DIR: path.join(dir, 'netlify') },
      { cwd: clone, script: 'cli/netlify-local.ts', ready: 'ready:' },
    );
    try {
      expect(await archiveOf(netlify.base)).toMatchObject({ sample: true });
    } finally {
      await netlify.stop();
    }
    expect(await treeDigest(dist)).toEqual(before);
  });
});
