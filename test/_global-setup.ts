/**
 * Runs once before any test file: makes sure the full archive the tests read
 * (FULL_SOURCE in test/helpers.ts) exists. With ARCHIVE_SOURCE unset it runs
 * `npm run data:fetch`'s download into data/cache/ when the cache is empty;
 * when that is impossible (offline) it stops the run with one line saying
 * what to set, instead of letting three suites die on a bare ENOENT.
 */
import { existsSync } from 'node:fs';
import { fetchData } from '../build/fetch-data.ts';
import { CACHE_FILE } from '../build/source.ts';
import { fullSource } from './helpers.ts';

export interface ArchiveCheck {
  env?: NodeJS.ProcessEnv;
  /** Where data:fetch caches the archive. */
  cache?: string;
  /** The download, for tests. */
  fetch?: typeof fetch;
}

/** Why the full archive is unavailable, as one line, or null when it is there (fetched if need be). */
export async function missingArchive({ env = process.env, cache = CACHE_FILE, fetch }: ArchiveCheck = {}): Promise<string | null> {
  const file = fullSource(env, cache);
  if (env.ARCHIVE_SOURCE) {
    return existsSync(file) ? null : `tests need the full archive, and ARCHIVE_SOURCE points at ${file}, which does not exist`;
  }
  if (existsSync(file)) return null;
  try {
    await fetchData({ env, target: cache, fetch });
    console.log(`tests: fetched the full archive into ${cache}`);
    return null;
  } catch (error) {
    const reason = (error as Error).message.split(';')[0];
    return `tests need the full archive: set ARCHIVE_SOURCE=/path/to/oscars.csv, or run npm run data:fetch online (${reason})`;
  }
}

export default async function setup(): Promise<void> {
  const missing = await missingArchive();
  if (!missing) return;
  console.error(missing);
  // One line and a failed run: a thrown error would bury the line under vitest's own messages.
  process.exit(1);
}
