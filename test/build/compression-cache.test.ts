/**
 * The compression cache (build/answers/compression-cache.ts): a rebuild reuses the
 * gzip and brotli copies an earlier build made and writes the same dist/,
 * byte for byte, as a build that compresses everything; a damaged cache is
 * ignored with one line, never served from; a copy planted in it (its
 * checksum made again, as anyone editing the file can) is decoded, found not
 * to be its answer, and made again; and cli/check-stored.ts refuses a dist/
 * holding a copy that does not decode to its answer.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { build } from '../../build/build.ts';
import { readCompressionCache, writeCompressionCache } from '../../build/answers/compression-cache.ts';
import { storedFilesProblem } from '../../cli/check-stored.ts';
import { contentId, dataPath, MANIFEST_PATH, parseRef, sha256Hex } from '../../src/store/refs.ts';
import type { Manifest } from '../../src/shared/types.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { tempDir, treeDigest } from '../helpers/temp.ts';

async function buildWith(dir: string, name: string, cache: string | null) {
  const lines: string[] = [];
  const out = path.join(dir, name);
  await build({ source: SAMPLE_SOURCE, out, summary: path.join(dir, `${name}.summary.json`), compressionCache: cache, log: (line) => lines.push(line) });
  return { digest: await treeDigest(out), log: lines.join('\n') };
}

describe('the compression cache', () => {
  it('is reused by a rebuild, which writes the same dist/ as a build compressing everything', async () => {
    const dir = await tempDir('compression-cache');
    const cache = path.join(dir, 'compressed.bin');
    const cold = await buildWith(dir, 'cold', cache);
    expect(cold.log).toMatch(/compressing each into gzip and brotli/);
    expect(existsSync(cache)).toBe(true);
    const written = (await stat(cache)).mtimeMs;
    const warm = await buildWith(dir, 'warm', cache);
    expect(warm.log).toMatch(/those of the [1-9]\d* copies earlier builds made that changed/);
    // nothing compressed, so nothing to add: the file is left as it was
    expect((await stat(cache)).mtimeMs).toBe(written);
    const none = await buildWith(dir, 'none', null);
    expect(warm.digest).toEqual(cold.digest);
    expect(none.digest).toEqual(cold.digest);
    // The compressed copies are among what was compared: a build without them would differ.
    expect([...cold.digest.keys()].length).toBeGreaterThan(10);
  });

  it('ignores a damaged cache with one line, builds the same dist/, and replaces the cache', async () => {
    const dir = await tempDir('compression-cache-damaged');
    const cache = path.join(dir, 'compressed.bin');
    const first = await buildWith(dir, 'first', cache);
    const bytes = await readFile(cache);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    await writeFile(cache, bytes);
    const damaged = await buildWith(dir, 'second', cache);
    expect(damaged.log.split('\n').filter((line) => line.includes('is damaged'))).toHaveLength(1);
    expect(damaged.digest).toEqual(first.digest);
    const after = await buildWith(dir, 'after', cache);
    expect(after.log).toMatch(/copies earlier builds made/);
    expect(after.digest).toEqual(first.digest);
  });

  it('does not use a copy planted in the cache (its checksum made again): the rebuild says so in one line and writes the same dist/', async () => {
    const dir = await tempDir('compression-cache-planted');
    const cache = path.join(dir, 'compressed.bin');
    const first = await buildWith(dir, 'first', cache);
    const manifest = JSON.parse(await readFile(path.join(dir, 'first', MANIFEST_PATH), 'utf8')) as Manifest;
    // The whole archive's answer (every client of /archive gets
    // its copy) and the first year stored in a file of its own.
    const year = Object.values(manifest.years).find((ref) => !parseRef(ref)!.at.identity.range && parseRef(ref)!.at.gzip)!;
    const targets = [manifest.archive, year];
    const copies = await readCompressionCache(cache, () => {});
    const other = Buffer.from(JSON.stringify({ planted: 'not this answer' }));
    for (const ref of targets) {
      expect(copies.has(parseRef(ref)!.id)).toBe(true);
      copies.set(parseRef(ref)!.id, [gzipSync(other), brotliCompressSync(other)]);
    }
    await writeCompressionCache(cache, copies, new Map()); // a well-formed file, checksum and all
    const planted = await buildWith(dir, 'planted', cache);
    expect(planted.log.split('\n').filter((line) => line.includes('did not decode'))).toEqual(['compression cache: the copies of 2 answer(s) did not decode to the answer and were not used: compressed again']);
    expect(planted.digest).toEqual(first.digest);
    for (const ref of targets) {
      const served = parseRef(ref)!;
      const plain = await readFile(path.join(dir, 'planted', dataPath(served.at.identity.file)!));
      expect(gunzipSync(await readFile(path.join(dir, 'planted', dataPath(served.at.gzip!.file)!)))).toEqual(plain);
    }
  });

  it('check-stored refuses a dist/ whose compressed copy, rightly named, does not decode to its answer', async () => {
    const dir = await tempDir('compression-cache-check');
    await buildWith(dir, 'dist', null);
    const dist = path.join(dir, 'dist');
    expect(await storedFilesProblem(dist)).toBeNull();
    // What a build that trusted a planted copy wrote: the copy under its own hash, and the ref naming it.
    const manifestPath = path.join(dist, MANIFEST_PATH);
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Manifest;
    const [identity, , br] = manifest.archive.split('/');
    const copy = gzipSync(Buffer.from(JSON.stringify({ planted: 'not this answer' })));
    const id = contentId(await sha256Hex(copy));
    await mkdir(path.dirname(path.join(dist, dataPath(id)!)), { recursive: true });
    await writeFile(path.join(dist, dataPath(id)!), copy);
    await writeFile(manifestPath, JSON.stringify({ ...manifest, archive: [identity, id, br].join('/') }));
    expect(await storedFilesProblem(dist)).toBe(`1 compressed cop(ies) of dist/ do not decode to their answer, ${id}/${br}: delete data/cache/compressed.bin and rebuild with npm run build`);
  });
});
