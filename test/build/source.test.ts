import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../build/build.ts';
import { BuildRefused } from '../../build/refused.ts';
import { fetchData } from '../../build/update/fetch-data.ts';
import { resolveSource, SAMPLE_FILE, SAMPLE_SUMMARY_FILE, SUMMARY_FILE } from '../../build/archive/source.ts';
import source from '../../data/source.json' with { type: 'json' };
import { missingArchive } from '../helpers/global-setup.ts';
import { FULL_SOURCE, fullSource, ROOT } from '../helpers/paths.ts';
import { cleanCopy, tempDir } from '../helpers/temp.ts';

/** `npm run data:fetch` as a user runs it (node under this Node), with `env` added. */
function fetchCommand(env: Record<string, string>): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['build/update/fetch-data.ts'],
      { cwd: ROOT, env: { ...process.env, ...env } },
      (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? Number(error.code) : 0 }),
    );
  });
}

describe('where the archive comes from', () => {
  it('prefers --source, then ARCHIVE_SOURCE', async () => {
    expect(await resolveSource('/x', { ARCHIVE_SOURCE: FULL_SOURCE }).catch((e: Error) => e.message)).toContain(
      '--source points at /x, which does not exist',
    );
    expect(await resolveSource(undefined, { ARCHIVE_SOURCE: FULL_SOURCE })).toMatchObject({
      file: FULL_SOURCE,
      via: 'ARCHIVE_SOURCE',
    });
  });

  it('keeps the sample to its own summary when it is named as a source', async () => {
    expect(await resolveSource(SAMPLE_FILE, {})).toMatchObject({
      file: SAMPLE_FILE,
      via: '--source',
      summaryFile: SAMPLE_SUMMARY_FILE,
    });
    expect(await resolveSource(undefined, { ARCHIVE_SOURCE: SAMPLE_FILE })).toMatchObject({
      summaryFile: SAMPLE_SUMMARY_FILE,
    });
  });

  it('refuses an ARCHIVE_SOURCE that does not exist instead of quietly serving the sample', async () => {
    const dir = await tempDir('source');
    const error = await build({
      out: path.join(dir, 'dist'),
      env: { ARCHIVE_SOURCE: path.join(dir, 'missing.csv') },
      log: () => {},
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BuildRefused);
    expect((error as Error).message).toContain('ARCHIVE_SOURCE points at');
  });

  it('uses the data:fetch cache when given nothing, and the sample when nothing is cached', async () => {
    const dir = await tempDir('sample');
    const cache = path.join(dir, 'oscars.csv');
    expect(await resolveSource(undefined, {}, cache)).toMatchObject({
      file: SAMPLE_FILE,
      via: 'sample',
      summaryFile: SAMPLE_SUMMARY_FILE,
    });
    await writeFile(cache, '');
    expect(await resolveSource(undefined, {}, cache)).toMatchObject({
      file: cache,
      via: 'data/cache',
      summaryFile: SUMMARY_FILE,
    });
    // How loudly the sample is announced: test/runtimes/start.test.ts
    // and test/ops/operations.test.ts, on a fresh clone.
  });

  it('pins the upstream revision with the sha256 of the shared copy', async () => {
    const sha = createHash('sha256')
      .update(await readFile(FULL_SOURCE))
      .digest('hex');
    expect(source.sha256).toBe(sha);
    expect(source.url).toContain(source.commit);
  });

  it('downloads the pinned file and checks its sha256, and says to set ARCHIVE_SOURCE when offline', async () => {
    const dir = await tempDir('fetch');
    const bytes = await readFile(FULL_SOURCE);
    const target = path.join(dir, 'cache/oscars.csv');
    const ok = (async () => new Response(bytes)) as unknown as typeof fetch;
    expect(await fetchData({ fetch: ok, target, env: {} })).toEqual({ target, from: source.url });
    expect((await readFile(target)).equals(bytes)).toBe(true);

    const tampered = (async () => new Response(Buffer.concat([bytes, Buffer.from('x')]))) as unknown as typeof fetch;
    const other = path.join(dir, 'other.csv');
    await expect(fetchData({ fetch: tampered, target: other, env: {} })).rejects.toThrow(
      /expected 3b1d39ee.*nothing saved/,
    );
    expect(existsSync(other)).toBe(false);

    const offline = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    const error = (await fetchData({ fetch: offline, target: path.join(dir, 'x.csv'), env: {} }).catch(
      (e: Error) => e,
    )) as Error;
    expect(error.message).toMatch(
      /^cannot download https:\/\/raw\.githubusercontent\.com\/DLu\/oscar_data\/.*set ARCHIVE_SOURCE=/,
    );
    expect(error.message).not.toContain('\n');
  });

  it('keeps a cache that already holds the pinned revision, offline; downloads over any other file there', async () => {
    const clone = await cleanCopy('fetch-cached', 'symlink');
    const cache = path.join(clone, source.cacheFile);
    await mkdir(path.dirname(cache), { recursive: true });
    await copyFile(FULL_SOURCE, cache);
    // As a user runs it, in a clone whose cache is filled, with ARCHIVE_SOURCE unset: no download is asked for.
    const env = { ...process.env };
    delete env.ARCHIVE_SOURCE;
    const run = await new Promise<{ stdout: string; code: number }>((resolve) =>
      execFile(process.execPath, ['build/update/fetch-data.ts'], { cwd: clone, env }, (error, stdout) =>
        resolve({ stdout, code: error ? Number(error.code) : 0 }),
      ),
    );
    expect(run).toEqual({
      code: 0,
      stdout: `${cache} already holds the pinned revision (sha256 verified); nothing downloaded\n`,
    });
    const offline = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    expect(await fetchData({ fetch: offline, target: cache, env: {} })).toEqual({ target: cache, from: cache });
    expect((await readFile(cache)).equals(await readFile(FULL_SOURCE))).toBe(true);
    // Another file in the cache (cut short) is not the revision: downloaded again, and kept only once checked.
    await writeFile(cache, (await readFile(FULL_SOURCE)).subarray(0, 1000));
    await expect(fetchData({ fetch: offline, target: cache, env: {} })).rejects.toThrow(/^cannot download /);
    const ok = (async () => new Response(await readFile(FULL_SOURCE))) as unknown as typeof fetch;
    expect(await fetchData({ fetch: ok, target: cache, env: {} })).toEqual({ target: cache, from: source.url });
    expect((await readFile(cache)).equals(await readFile(FULL_SOURCE))).toBe(true);
  });

  it('copies ARCHIVE_SOURCE into the cache after checking the pinned sha256, without the network', async () => {
    const dir = await tempDir('fetch-local');
    const target = path.join(dir, 'cache/oscars.csv');
    const network = (async () => {
      throw new Error('data:fetch used the network although ARCHIVE_SOURCE was set');
    }) as unknown as typeof fetch;
    expect(await fetchData({ fetch: network, target, env: { ARCHIVE_SOURCE: FULL_SOURCE } })).toEqual({
      target,
      from: FULL_SOURCE,
    });
    expect((await readFile(target)).equals(await readFile(FULL_SOURCE))).toBe(true);
  });

  it('refuses an ARCHIVE_SOURCE that is not the pinned revision with one line, and saves nothing', async () => {
    const dir = await tempDir('fetch-wrong');
    const wrong = path.join(dir, 'oscars.csv');
    await writeFile(wrong, (await readFile(FULL_SOURCE)).subarray(0, 100_000));
    const { stdout, stderr, code } = await fetchCommand({ ARCHIVE_SOURCE: wrong });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(`^data:fetch: ${wrong} has sha256 [0-9a-f]{64}, expected ${source.sha256} .*nothing saved`),
      ),
    ]);

    const missing = await fetchCommand({ ARCHIVE_SOURCE: path.join(dir, 'missing.csv') });
    expect(missing.code).toBe(1);
    expect(missing.stderr.trimEnd().split('\n')).toEqual([
      `data:fetch: ARCHIVE_SOURCE points at ${path.join(dir, 'missing.csv')}, which cannot be read (ENOENT)`,
    ]);
  });
});

describe('the full archive the tests read', () => {
  const offline = (async () => {
    throw new TypeError('fetch failed');
  }) as unknown as typeof fetch;

  it('is ARCHIVE_SOURCE when set, else the data:fetch cache', () => {
    expect(fullSource({ ARCHIVE_SOURCE: 'x/oscars.csv' }, '/cache.csv')).toBe(path.resolve('x/oscars.csv'));
    expect(fullSource({}, '/cache.csv')).toBe('/cache.csv');
  });

  it('is fetched into the cache when neither exists and the network works', async () => {
    const cache = path.join(await tempDir('setup-online'), 'cache/oscars.csv');
    const bytes = await readFile(FULL_SOURCE);
    const online = (async () => new Response(bytes)) as unknown as typeof fetch;
    expect(await missingArchive({ env: {}, cache, fetch: online })).toBeNull();
    expect((await readFile(cache)).equals(bytes)).toBe(true);
  });

  it('is named in one line saying what to set when offline with neither', async () => {
    const cache = path.join(await tempDir('setup-offline'), 'cache/oscars.csv');
    const line = await missingArchive({ env: {}, cache, fetch: offline });
    expect(line).toMatch(
      /^tests need the full archive: set ARCHIVE_SOURCE=\/path\/to\/oscars\.csv, or run npm run data:fetch online \(cannot download https:.*\)$/,
    );
    expect(line).not.toContain('\n');
    expect(existsSync(cache)).toBe(false);
  });

  it('is named in one line when ARCHIVE_SOURCE points nowhere, without trying the network', async () => {
    const missing = path.join(await tempDir('setup-missing'), 'oscars.csv');
    expect(await missingArchive({ env: { ARCHIVE_SOURCE: missing }, fetch: offline })).toBe(
      `tests need the full archive, and ARCHIVE_SOURCE points at ${missing}, which does not exist`,
    );
  });
});
