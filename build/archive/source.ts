/** Where the archive comes from: a path, the fetched cache, or the project's own sample. */
import { createHash } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import source from '../../data/source.json' with { type: 'json' };
import type { SourceRevision } from '../../src/shared/types.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CACHE_FILE = path.join(ROOT, source.cacheFile);
export const SAMPLE_FILE = path.join(ROOT, 'data/sample/oscars-sample.tsv');
export const SUMMARY_FILE = path.join(ROOT, 'data/archive-summary.json');
export const SAMPLE_SUMMARY_FILE = path.join(ROOT, 'data/sample/summary.json');
/** A source file's sha256, in hex: what data/source.json pins it by. */
export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The pin data:update writes and data:fetch checks against. */
export const PIN_FILE = path.join(ROOT, 'data/source.json');

/**
 * The build's inputs besides the source file, under ROOT: its code and the
 * files it reads (the ceremonies' years, the pin, the dataset's notice).
 * Everything else in data/ (keys, the development key, mail, the cache, the
 * committed summary) leaves what it makes as it is.
 */
export const BUILD_INPUTS = ['build', 'lib', 'src', 'data/held-years.json', 'data/source.json', 'NOTICE'];

/**
 * The upstream revision of the file the build read, from the pin in
 * `pinFile` as it is now (read at build time, not when this module loaded),
 * when the bytes read are the pinned ones; null for any other file.
 */
export async function pinnedRevision(sha256: string, pinFile = PIN_FILE): Promise<SourceRevision | null> {
  const pin = await readFile(pinFile, 'utf8')
    .then(JSON.parse)
    .catch(() => null);
  if (!pin || pin.sha256 !== sha256) return null;
  return { repository: String(pin.repository), commit: pin.commit ?? null, date: pin.date ?? null };
}

export interface ResolvedSource {
  /** File the archive is read from. */
  file: string;
  /** How it was chosen. */
  via: '--source' | 'ARCHIVE_SOURCE' | 'data/cache' | 'sample';
  /** The committed summary the yearly-update guard compares with. */
  summaryFile: string;
}

export class SourceError extends Error {}

/** Whether `file` exists (node:fs, not fs-extra: the build's worker threads load this module, and fs-extra took each 40 ms). */
const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** --source, else ARCHIVE_SOURCE, else the data:fetch `cache` when it exists, else the sample. */
export async function resolveSource(
  flag: string | undefined,
  env = process.env,
  cache = CACHE_FILE,
): Promise<ResolvedSource> {
  const given = flag
    ? { file: flag, via: '--source' as const }
    : env.ARCHIVE_SOURCE
      ? { file: env.ARCHIVE_SOURCE, via: 'ARCHIVE_SOURCE' as const }
      : null;
  if (given) {
    const file = path.resolve(given.file);
    if (!(await exists(file))) throw new SourceError(`${given.via} points at ${file}, which does not exist`);
    // The sample keeps its own summary however it is named, so it never rewrites the full archive's.
    return { file, via: given.via, summaryFile: file === SAMPLE_FILE ? SAMPLE_SUMMARY_FILE : SUMMARY_FILE };
  }
  if (await exists(cache)) return { file: cache, via: 'data/cache', summaryFile: SUMMARY_FILE };
  return { file: SAMPLE_FILE, via: 'sample', summaryFile: SAMPLE_SUMMARY_FILE };
}
