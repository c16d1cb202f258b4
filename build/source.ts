/** Where the archive comes from: a path, the fetched cache, or the project's own sample. */
import path from 'node:path';
import fs from 'fs-extra';
import source from '../data/source.json' with { type: 'json' };

export const ROOT = path.resolve(import.meta.dirname, '..');
export const CACHE_FILE = path.join(ROOT, source.cacheFile);
export const SAMPLE_FILE = path.join(ROOT, 'data/sample/oscars-sample.tsv');
export const SUMMARY_FILE = path.join(ROOT, 'data/archive-summary.json');
export const SAMPLE_SUMMARY_FILE = path.join(ROOT, 'data/sample/summary.json');

export interface ResolvedSource {
  /** File the archive is read from. */
  file: string;
  /** How it was chosen. */
  via: '--source' | 'ARCHIVE_SOURCE' | 'data/cache' | 'sample';
  /** The committed summary the yearly-update guard compares with. */
  summaryFile: string;
}

export class SourceError extends Error {}

/** --source, else ARCHIVE_SOURCE, else the data:fetch `cache` when it exists, else the sample. */
export async function resolveSource(flag: string | undefined, env = process.env, cache = CACHE_FILE): Promise<ResolvedSource> {
  const given = flag ? { file: flag, via: '--source' as const } : env.ARCHIVE_SOURCE ? { file: env.ARCHIVE_SOURCE, via: 'ARCHIVE_SOURCE' as const } : null;
  if (given) {
    const file = path.resolve(given.file);
    if (!(await fs.pathExists(file))) throw new SourceError(`${given.via} points at ${file}, which does not exist`);
    // The sample keeps its own summary however it is named, so it never rewrites the full archive's.
    return { file, via: given.via, summaryFile: file === SAMPLE_FILE ? SAMPLE_SUMMARY_FILE : SUMMARY_FILE };
  }
  if (await fs.pathExists(cache)) return { file: cache, via: 'data/cache', summaryFile: SUMMARY_FILE };
  return { file: SAMPLE_FILE, via: 'sample', summaryFile: SAMPLE_SUMMARY_FILE };
}
