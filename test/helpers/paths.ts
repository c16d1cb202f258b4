/**
 * Where things are: the repository, the full archive the tests
 * read (ARCHIVE_SOURCE or the data:fetch cache), the sample, Deno.
 */
import path from 'node:path';
import { CACHE_FILE } from '../../build/archive/source.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The full archive, for every test that needs it: ARCHIVE_SOURCE when set,
 * else the copy `npm run data:fetch` caches (test/helpers/global-setup.ts makes sure
 * one of them exists before any test runs).
 */
export const FULL_SOURCE = fullSource(process.env);

/** ARCHIVE_SOURCE in `env` when set, else `cache`. */
export function fullSource(env: NodeJS.ProcessEnv, cache = CACHE_FILE): string {
  return env.ARCHIVE_SOURCE ? path.resolve(env.ARCHIVE_SOURCE) : cache;
}

export const SAMPLE_SOURCE = path.join(ROOT, 'data/sample/oscars-sample.tsv');

export const DENO = path.join(ROOT, 'node_modules/.bin/deno');
