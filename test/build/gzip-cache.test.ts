/**
 * The packs' gzip remembered by content (build/answers/gzip-cache.ts): a pack
 * gzipped once is read back the second time, the same bytes; an entry whose
 * trailer does not match its bytes is gzipped again and replaced; entries
 * unused for a week are pruned, others kept.
 */
import { readdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { cachedGzip, GZIP_CACHE_DAYS, pruneGzipCache } from '../../build/answers/gzip-cache.ts';
import { tempDir } from '../helpers/temp.ts';

const input = Buffer.from('{"pack":"of answers"}'.repeat(500));

/** A gzip that counts its calls. */
function counting() {
  const gzip = async (bytes: Buffer) => {
    gzip.calls++;
    return gzipSync(bytes, { level: 6 });
  };
  gzip.calls = 0;
  return gzip;
}

describe('the packs gzip cache', () => {
  it('gzips a pack once and reads it back after, the same bytes', async () => {
    const folder = path.join(await tempDir('gzip'), 'cache');
    const gzip = counting();
    const first = await cachedGzip(input, 6, gzip, folder);
    const second = await cachedGzip(input, 6, gzip, folder);
    expect(gzip.calls).toBe(1);
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true);
    expect(gunzipSync(second).equals(input)).toBe(true);
    // Other bytes are another entry.
    await cachedGzip(Buffer.from('other'), 6, gzip, folder);
    expect(gzip.calls).toBe(2);
  });

  it('gzips again, and replaces, an entry that is not the gzip of its bytes', async () => {
    const folder = path.join(await tempDir('gzip'), 'cache');
    const gzip = counting();
    await cachedGzip(input, 6, gzip, folder);
    const [entry] = readdirSync(folder);
    writeFileSync(path.join(folder, entry), gzipSync(Buffer.from('something else')));
    const again = await cachedGzip(input, 6, gzip, folder);
    expect(gzip.calls).toBe(2);
    expect(gunzipSync(again).equals(input)).toBe(true);
    await cachedGzip(input, 6, gzip, folder);
    expect(gzip.calls).toBe(2);
  });

  it('gzips every time without a folder', async () => {
    const gzip = counting();
    await cachedGzip(input, 6, gzip);
    await cachedGzip(input, 6, gzip);
    expect(gzip.calls).toBe(2);
  });

  it(`prunes the entries unused for ${GZIP_CACHE_DAYS} days`, async () => {
    const folder = path.join(await tempDir('gzip'), 'cache');
    const gzip = counting();
    await cachedGzip(input, 6, gzip, folder);
    await cachedGzip(Buffer.from('old'), 6, gzip, folder);
    const [old] = readdirSync(folder);
    const stale = new Date(Date.now() - (GZIP_CACHE_DAYS + 1) * 86_400_000);
    utimesSync(path.join(folder, old), stale, stale);
    await pruneGzipCache(folder);
    expect(readdirSync(folder)).toHaveLength(1);
    expect(readdirSync(folder)).not.toContain(old);
  });
});
