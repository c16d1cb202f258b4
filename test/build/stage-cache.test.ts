/**
 * The worker threads' stages remembered between builds
 * (build/answers/stage-cache.ts): a stage is started once and its answers
 * read back after, under a key that changes with the build's code; an entry
 * whose bytes are not what was written is made again; a failed stage keeps
 * nothing; and a rebuild of the full archive that takes the dataset and the
 * records from the cache writes the same dist/ as a build that makes them.
 */
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Apart } from '../../build/answers/apart.ts';
import { codeFingerprint, remembered, STAGE_CACHE_KEEP, stageKey } from '../../build/answers/stage-cache.ts';
import { build } from '../../build/build.ts';
import { FULL_SOURCE } from '../helpers/paths.ts';
import { sharedBuild, tempDir, treeDigest } from '../helpers/temp.ts';

/** A stage that answers `answers` (or fails with `failure`), counting its starts and what is posted to it. */
function stage(answers: unknown[], failure?: Error) {
  const made = { starts: 0, posted: [] as unknown[] };
  const start = (): Apart<unknown> => {
    made.starts++;
    const results = answers.map((answer) => (failure ? Promise.reject(failure) : Promise.resolve(answer)));
    for (const result of results) result.catch(() => {});
    return { result: results[0], results, post: (m) => made.posted.push(m), stop: async () => 0 };
  };
  return { made, start };
}

const answers = [['search', 'files'], { files: [{ name: 'a.csv', bytes: new Uint8Array([1, 2, 3]) }], ms: 12 }];

describe('the stage cache', () => {
  it('fingerprints the build code and the files it reads, not the tests, the docs or the keys', async () => {
    const root = await tempDir('fingerprint');
    const files: Record<string, string> = {
      'build/build.ts': 'build',
      'build/answers/dataset.ts': 'dataset',
      'src/shared/search.ts': 'search',
      'lib/compile-cache.js': 'cache',
      NOTICE: 'notice',
      'package-lock.json': '{}',
      'data/source.json': '{"sha256":"x"}',
      'data/held-years.json': '{"1":1929}',
      'data/keys.db': 'keys',
      'test/build/build.test.ts': 'test',
      'docs/development.md': 'docs',
    };
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(root, file)), { recursive: true });
      await writeFile(path.join(root, file), text);
    }
    const first = codeFingerprint(root);
    expect(codeFingerprint(root)).toBe(first);
    const changed = new Set<string>();
    for (const file of Object.keys(files)) {
      await writeFile(path.join(root, file), `${files[file]} changed`);
      if (codeFingerprint(root) !== first) changed.add(file);
      await writeFile(path.join(root, file), files[file]);
    }
    expect([...changed].sort()).toEqual(
      Object.keys(files)
        .filter((f) => !/^(test\/|docs\/|data\/keys)/.test(f))
        .sort(),
    );
    // A file gone is not a file of any bytes, "missing" included.
    await writeFile(path.join(root, 'NOTICE'), 'missing');
    const written = codeFingerprint(root);
    await rm(path.join(root, 'NOTICE'));
    expect(codeFingerprint(root)).not.toBe(written);
    expect(codeFingerprint(root)).not.toBe(first);
    await writeFile(path.join(root, 'NOTICE'), files.NOTICE);
    // A new file of code is a change; so is one moved.
    await writeFile(path.join(root, 'src/shared/new.ts'), 'new');
    const added = codeFingerprint(root);
    expect(added).not.toBe(first);
    await writeFile(path.join(root, 'src/shared/old.ts'), 'new');
    await writeFile(path.join(root, 'src/shared/new.ts'), '');
    expect(codeFingerprint(root)).not.toBe(added);
    // The key names the stage and each of its inputs.
    const key = stageKey('dataset', first, ['abc', false, null]);
    expect(stageKey('records', first, ['abc', false, null])).not.toBe(key);
    expect(stageKey('dataset', added, ['abc', false, null])).not.toBe(key);
    expect(stageKey('dataset', first, ['abd', false, null])).not.toBe(key);
    expect(stageKey('dataset', first, ['abc', true, null])).not.toBe(key);
  });

  it('starts a stage once, then gives its answers from the entry without starting it', async () => {
    const folder = path.join(await tempDir('stages'), 'cache');
    const { made, start } = stage(answers);
    const first = remembered(folder, 'dataset', 'k1', 2, start);
    expect(first.hit).toBe(false);
    expect(await Promise.all(first.apart.results)).toEqual(answers);
    await first.kept;
    const second = remembered(folder, 'dataset', 'k1', 2, start);
    expect(second.hit).toBe(true);
    second.apart.post({ revision: 'dropped: the key names it' });
    expect(await Promise.all(second.apart.results)).toEqual(answers);
    expect(made.starts).toBe(1);
    expect(made.posted).toEqual([]);
    // Another key, another stage or no folder: started.
    remembered(folder, 'dataset', 'k2', 2, start);
    remembered(folder, 'records', 'k1', 2, start);
    remembered(undefined, 'dataset', 'k1', 2, start);
    expect(made.starts).toBe(4);
  });

  it('starts the stage again for an entry whose bytes are not the ones written, and replaces it', async () => {
    const folder = path.join(await tempDir('stages'), 'cache');
    const { made, start } = stage(answers);
    await remembered(folder, 'dataset', 'k', 2, start).kept;
    const [entry] = readdirSync(folder);
    const bytes = readFileSync(path.join(folder, entry));
    bytes[bytes.length - 1] ^= 1;
    writeFileSync(path.join(folder, entry), bytes);
    const again = remembered(folder, 'dataset', 'k', 2, start);
    expect(again.hit).toBe(false);
    await again.kept;
    writeFileSync(path.join(folder, entry), bytes.subarray(0, 20));
    expect(remembered(folder, 'dataset', 'k', 2, start).hit).toBe(false);
    expect(made.starts).toBe(3);
  });

  it('keeps nothing of a stage that failed', async () => {
    const folder = path.join(await tempDir('stages'), 'cache');
    const failing = stage(answers, new Error('the worker thread ended'));
    const run = remembered(folder, 'records', 'k', 2, failing.start);
    await expect(run.apart.result).rejects.toThrow('the worker thread ended');
    await run.kept;
    expect(existsSync(folder) ? readdirSync(folder) : []).toEqual([]);
  });

  it(`keeps the ${STAGE_CACHE_KEEP} entries of a stage used last, and the other stages' entries`, async () => {
    const folder = path.join(await tempDir('stages'), 'cache');
    const { start } = stage(answers);
    await remembered(folder, 'records', 'other', 2, start).kept;
    for (let n = 0; n < STAGE_CACHE_KEEP; n++) {
      await remembered(folder, 'dataset', `k${n}`, 2, start).kept;
      const at = new Date(Date.now() - (STAGE_CACHE_KEEP - n) * 60_000);
      utimesSync(path.join(folder, `dataset-k${n}.bin`), at, at);
    }
    // Used again, k0 is the latest used but one; k1 is the one used least lately.
    expect(remembered(folder, 'dataset', 'k0', 2, start).hit).toBe(true);
    await remembered(folder, 'dataset', 'new', 2, start).kept;
    expect(readdirSync(folder).sort()).toEqual(
      ['dataset-k0.bin', 'dataset-k2.bin', 'dataset-k3.bin', 'dataset-new.bin', 'records-other.bin'].sort(),
    );
  });

  it('gives a rebuild of the full archive the dataset and records an earlier build made, and the same dist/ byte for byte', async () => {
    const dir = await tempDir('stage-build');
    const stageCache = path.join(dir, 'stages');
    const lines: string[] = [];
    const options = {
      source: FULL_SOURCE,
      summary: path.join(dir, 'summary.json'),
      stageCache,
      log: (l: string) => lines.push(l),
    };
    await build({ ...options, out: path.join(dir, 'first') });
    const made = lines.splice(0);
    expect(made.filter((l) => /^(records|dataset): .* in [\d.]+ s on a worker thread$/.test(l))).toHaveLength(2);
    expect(readdirSync(stageCache).sort()).toEqual([
      expect.stringMatching(/^dataset-/),
      expect.stringMatching(/^records-/),
    ]);
    await build({ ...options, out: path.join(dir, 'again') });
    expect(lines.filter((l) => /^(records|dataset): .*taken from the build cache/.test(l))).toHaveLength(2);
    expect(lines.some((l) => /on a worker thread/.test(l))).toBe(false);
    // Both as a build without the cache writes it (the shared build of the test run makes every stage).
    const [first, again, without] = await Promise.all([
      treeDigest(path.join(dir, 'first')),
      treeDigest(path.join(dir, 'again')),
      sharedBuild(FULL_SOURCE).then(treeDigest),
    ]);
    expect(first.size).toBeGreaterThan(1000);
    expect(first).toEqual(without);
    expect(again).toEqual(without);
  });
});
