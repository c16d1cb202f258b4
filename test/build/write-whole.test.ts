/**
 * Writing a file whole or not at all (lib/write-whole.ts), as the build's
 * caches and the yearly update write theirs: the new bytes replace the old
 * in one step, a write that fails leaves the old file and no temporary one,
 * and writes of one file at once each leave a whole file.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeWhole } from '../../lib/write-whole.ts';
import { tempDir } from '../helpers/temp.ts';

describe('writeWhole', () => {
  it('replaces a file with the new bytes, making its folder, and leaves nothing beside it', async () => {
    const dir = await tempDir('whole');
    const file = path.join(dir, 'a/b/summary.json');
    await writeWhole(file, 'old');
    await writeWhole(file, new TextEncoder().encode('new'));
    expect(await readFile(file, 'utf8')).toBe('new');
    expect(await readdir(path.dirname(file))).toEqual(['summary.json']);
  });

  it('leaves the old file and no temporary one when the write fails', async () => {
    const dir = await tempDir('whole');
    const file = path.join(dir, 'cache.bin');
    await writeFile(file, 'kept');
    // A folder of the temporary file's name cannot be written: the rename never happens.
    const real = Math.random;
    Math.random = () => 0.5;
    const tmp = `${file}.tmp-${process.pid}-${(0.5).toString(36).slice(2)}`;
    await mkdir(path.join(tmp, 'in-the-way'), { recursive: true });
    try {
      await expect(writeWhole(file, 'lost')).rejects.toThrow(/EISDIR/);
    } finally {
      Math.random = real;
    }
    expect(await readFile(file, 'utf8')).toBe('kept');
    // The folder in the way was not the call's to remove; nothing else is left.
    expect((await readdir(dir)).sort()).toEqual(['cache.bin', path.basename(tmp)].sort());
  });

  it('leaves one whole file when many write it at once', async () => {
    const dir = await tempDir('whole');
    const file = path.join(dir, 'entry.bin');
    const texts = Array.from({ length: 40 }, (_, n) => String(n).repeat(100_000));
    await Promise.all(texts.map((text) => writeWhole(file, text)));
    expect(texts).toContain(await readFile(file, 'utf8'));
    expect(await readdir(dir)).toEqual(['entry.bin']);
  });
});
