import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, BuildRefused } from '../build/build.ts';
import { fetchData } from '../build/fetch-data.ts';
import { resolveSource, SAMPLE_FILE, SAMPLE_SUMMARY_FILE } from '../build/source.ts';
import source from '../data/source.json' with { type: 'json' };
import { SHARED_SOURCE, tempDir } from './helpers.ts';

describe('where the archive comes from', () => {
  it('prefers --source, then ARCHIVE_SOURCE', async () => {
    expect((await resolveSource('/x', { ARCHIVE_SOURCE: SHARED_SOURCE }).catch((e: Error) => e.message))).toContain('--source points at /x, which does not exist');
    expect(await resolveSource(undefined, { ARCHIVE_SOURCE: SHARED_SOURCE })).toMatchObject({ file: SHARED_SOURCE, via: 'ARCHIVE_SOURCE' });
  });

  it('refuses an ARCHIVE_SOURCE that does not exist instead of quietly serving the sample', async () => {
    const dir = await tempDir('source');
    const error = await build({ out: path.join(dir, 'dist'), env: { ARCHIVE_SOURCE: path.join(dir, 'missing.csv') }, log: () => {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BuildRefused);
    expect((error as Error).message).toContain('ARCHIVE_SOURCE points at');
  });

  it('falls back to the sample, loudly, when given nothing', async () => {
    const resolved = await resolveSource(undefined, {});
    // data/cache/ is git-ignored; on a fresh clone the sample is what is left.
    if (resolved.via === 'data/cache') return expect(resolved.summaryFile).not.toBe(SAMPLE_SUMMARY_FILE);
    expect(resolved).toMatchObject({ file: SAMPLE_FILE, via: 'sample', summaryFile: SAMPLE_SUMMARY_FILE });
    const dir = await tempDir('sample');
    const logs: string[] = [];
    const result = await build({ out: path.join(dir, 'dist'), summary: path.join(dir, 's.json'), env: {}, log: (l) => logs.push(l) });
    expect(result.sample).toBe(true);
    expect(logs.join('\n')).toContain('SMALL SAMPLE');
  });

  it('pins the upstream revision with the sha256 of the shared copy', async () => {
    const sha = createHash('sha256').update(await readFile(SHARED_SOURCE)).digest('hex');
    expect(source.sha256).toBe(sha);
    expect(source.url).toContain(source.commit);
  });

  it('downloads the pinned file and checks its sha256, and says to set ARCHIVE_SOURCE when offline', async () => {
    const dir = await tempDir('fetch');
    const bytes = await readFile(SHARED_SOURCE);
    const target = path.join(dir, 'cache/oscars.csv');
    const ok = (async () => new Response(bytes)) as unknown as typeof fetch;
    expect(await fetchData(ok, target)).toBe(target);
    expect((await readFile(target)).equals(bytes)).toBe(true);

    const tampered = (async () => new Response(Buffer.concat([bytes, Buffer.from('x')]))) as unknown as typeof fetch;
    await expect(fetchData(tampered, path.join(dir, 'other.csv'))).rejects.toThrow(/expected 3b1d39ee.*nothing saved/);

    const offline = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    const error = (await fetchData(offline, path.join(dir, 'x.csv')).catch((e: Error) => e)) as Error;
    expect(error.message).toMatch(/^cannot download https:\/\/raw\.githubusercontent\.com\/DLu\/oscar_data\/.*set ARCHIVE_SOURCE=/);
    expect(error.message).not.toContain('\n');
  });
});
