/**
 * The compression cache (build/compression-cache.ts): a rebuild reuses the
 * gzip and brotli copies an earlier build made and writes the same dist/,
 * byte for byte, as a build that compresses everything; a damaged cache is
 * ignored with one line, never served from.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../build/build.ts';
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
    const warm = await buildWith(dir, 'warm', cache);
    expect(warm.log).toMatch(/those of the [1-9]\d* copies earlier builds made that changed/);
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
});
