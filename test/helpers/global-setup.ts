/**
 * Runs once before any test file: makes sure the full archive the tests read
 * (FULL_SOURCE in test/helpers/paths.ts) exists. With ARCHIVE_SOURCE unset it runs
 * `npm run data:fetch`'s download into data/cache/ when the cache is empty;
 * when that is impossible (offline) it stops the run with one line saying
 * what to set, instead of letting three suites die on a bare ENOENT. Then it
 * gives the run a temp folder of its own, removed when the run ends.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fetchData } from '../../build/update/fetch-data.ts';
import { CACHE_FILE } from '../../build/archive/source.ts';
import { fullSource } from './paths.ts';

export interface ArchiveCheck {
  env?: NodeJS.ProcessEnv;
  /** Where data:fetch caches the archive. */
  cache?: string;
  /** The download, for tests. */
  fetch?: typeof fetch;
}

/** Why the full archive is unavailable, as one line, or null when it is there (fetched if need be). */
export async function missingArchive({ env = process.env, cache = CACHE_FILE, fetch }: ArchiveCheck = {}): Promise<
  string | null
> {
  const file = fullSource(env, cache);
  if (env.ARCHIVE_SOURCE) {
    return existsSync(file)
      ? null
      : `tests need the full archive, and ARCHIVE_SOURCE points at ${file}, which does not exist`;
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

/**
 * Points TMPDIR (which os.tmpdir() reads, in the test workers and in every
 * process they start) at a folder of this run's own, and gives back what
 * removes it. Tests remove their own folders, but tools make theirs too
 * (playwright-core's artifacts, left behind when Chromium cannot start; npm's
 * compile cache; netlify-cli's): those go with the run, passed, failed or
 * skipped.
 */
export async function runTempFolder(env: NodeJS.ProcessEnv = process.env): Promise<() => Promise<void>> {
  const outer = { TMPDIR: env.TMPDIR, NODE_COMPILE_CACHE: env.NODE_COMPILE_CACHE };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'faa-test-run-'));
  env.TMPDIR = dir;
  // One compile cache for every Node process the run starts (npm start, the
  // CLIs, the builds, npm itself): a script's TypeScript is stripped and
  // compiled once, not in each of the hundreds of processes. A second start
  // of build/update.ts took 0.1 s of CPU instead of 0.5 s.
  env.NODE_COMPILE_CACHE ??= path.join(dir, 'node-compile-cache');
  return async () => {
    for (const [name, value] of Object.entries(outer)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    // A process a test stopped may still be writing its compile cache as it exits: rm then meets a folder
    // filled again (ENOTEMPTY, seen once after `npm run test:stress`), which Node retries, 100 ms apart.
    await rm(dir, { recursive: true, force: true, maxRetries: 10 });
  };
}

export default async function setup(): Promise<() => Promise<void>> {
  const missing = await missingArchive();
  if (missing) {
    console.error(missing);
    // One line and a failed run: a thrown error would bury the line under vitest's own messages.
    process.exit(1);
  }
  return runTempFolder();
}
