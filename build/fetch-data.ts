/**
 * npm run data:fetch: downloads the pinned source revision named in
 * data/source.json into data/cache/ and checks its sha256. Offline it fails
 * with one line saying what to do instead.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import fs from 'fs-extra';
import source from '../data/source.json' with { type: 'json' };
import { CACHE_FILE } from './source.ts';

export async function fetchData(fetchImpl: typeof fetch = fetch, target = CACHE_FILE): Promise<string> {
  let bytes: Buffer;
  try {
    const response = await fetchImpl(source.url, { signal: AbortSignal.timeout(30_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    bytes = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    throw new Error(
      `cannot download ${source.url} (${(error as Error).message}); set ARCHIVE_SOURCE=/path/to/oscars.csv to build from a local copy instead`,
    );
  }
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== source.sha256) throw new Error(`downloaded file has sha256 ${sha}, expected ${source.sha256}; nothing saved`);
  await fs.outputFile(`${target}.tmp`, bytes);
  await fs.rename(`${target}.tmp`, target);
  return target;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  try {
    console.log(`saved ${await fetchData()} (sha256 verified)`);
  } catch (error) {
    console.error(`data:fetch: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
