/**
 * What a built dist/ holds, read from its own records (the manifest's source
 * and the archive summary the build leaves in `_data/`), and whether it is
 * stale: only the source or the build's own inputs make it so, never key
 * files or mail kept beside the data. A manifest that is missing or damaged
 * beside other files does not make dist/ empty: what it holds is then read
 * from the summary, and taken for a real archive unless that says the sample.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import pinned from '../data/source.json' with { type: 'json' };
import { BUILD_INPUTS, ROOT, SAMPLE_SUMMARY_FILE, type ResolvedSource } from './archive/source.ts';
import { MANIFEST_PATH, sha256Hex } from '../src/store/refs.ts';
import type { ArchiveSummary, Manifest } from '../src/shared/types.ts';

/** Where the build records, inside dist/, the summary of the archive it built (the guard's second reference). */
export const DIST_SUMMARY_PATH = '_data/summary.json';

export interface DistState {
  /** The manifest's record of the source: sha256, rows, sample or not. */
  source: Manifest['source'];
  /** Ceremony years held. */
  years: string[];
  /** The archive summary the build recorded; null for a dist/ built before it did. */
  summary: ArchiveSummary | null;
  /** When dist/ was built (the manifest's mtime; with no manifest, the summary's or `_data/`'s). */
  builtMs: number;
  /**
   * The manifest is missing or damaged: `source` and `years` come from the summary (rows 0 and no years without one).
   */
  damaged?: boolean;
}

/** A JSON file's value, or null when it is missing or unreadable. */
const readJson = <T>(file: string): Promise<T | null> =>
  readFile(file, 'utf8').then(
    (text) => {
      try {
        return JSON.parse(text) as T;
      } catch {
        return null;
      }
    },
    () => null,
  );

/**
 * What `dist` holds, or null when it holds no build (no `_data/`, or an empty
 * one). A dist/ whose manifest is missing or damaged is described by its
 * summary instead (see `damagedDist`), so the guard still protects it.
 */
export async function readDist(dist: string): Promise<DistState | null> {
  const manifestFile = path.join(dist, MANIFEST_PATH);
  const info = await stat(manifestFile).catch(() => null);
  const manifest = info ? await readJson<Partial<Manifest>>(manifestFile) : null;
  const summary = await readJson<ArchiveSummary>(path.join(dist, DIST_SUMMARY_PATH));
  if (
    !info ||
    typeof manifest?.source?.sha256 !== 'string' ||
    typeof manifest.years !== 'object' ||
    manifest.years === null
  )
    return damagedDist(dist, summary);
  return { source: manifest.source, years: Object.keys(manifest.years), summary, builtMs: info.mtimeMs };
}

/**
 * A dist/ with files in `_data/` but no readable manifest: it cannot be
 * served, but may hold the full archive, so it counts as a real archive (the
 * sample may not replace it without --accept-changes) unless its summary is
 * the sample's. Its rows and years are the summary's.
 */
async function damagedDist(dist: string, summary: ArchiveSummary | null): Promise<DistState | null> {
  const data = path.join(dist, path.dirname(MANIFEST_PATH));
  const entries = await readdir(data).catch(() => []);
  if (entries.length === 0) return null;
  const sampleSummary = await readJson<ArchiveSummary>(SAMPLE_SUMMARY_FILE);
  const sample = summary !== null && JSON.stringify(summary) === JSON.stringify(sampleSummary);
  const rows = Object.values(summary ?? {}).reduce((sum, year) => sum + (year.nominations ?? 0), 0);
  const builtMs = (await stat(path.join(dist, DIST_SUMMARY_PATH)).catch(() => stat(data))).mtimeMs;
  return { source: { sha256: '', rows, sample }, years: Object.keys(summary ?? {}), summary, builtMs, damaged: true };
}

/** One phrase naming the archive a dist/ holds: the full (pinned) archive, the sample, or another source. */
export function describeDist(state: DistState): string {
  const { sha256, rows, sample } = state.source;
  if (state.damaged) {
    const what = state.summary
      ? `${sample ? 'the SMALL SAMPLE' : 'an archive'} of ${rows} nominations by its summary`
      : 'an archive whose summary is missing too';
    const years = state.years.length
      ? `; ${state.years.length} ceremony years, ${state.years[0]}-${state.years.at(-1)}`
      : '';
    return `${what} (its manifest is missing or damaged${years})`;
  }
  // The revision the build recorded; a dist/ built before it did is named from the pin, when it is the pinned file.
  const revision =
    state.source.revision ??
    (sha256 === pinned.sha256 ? { commit: pinned.commit as string | null, date: pinned.date as string | null } : null);
  const which = revision?.commit
    ? revision.commit.slice(0, 7)
    : `of unknown commit, pinned ${revision?.date?.slice(0, 10) ?? 'on an unknown day'}`;
  const name = sample
    ? 'the SMALL SAMPLE'
    : revision
      ? `the full archive, revision ${which}`
      : 'an archive from a given source';
  const years = state.years.length
    ? `; ${state.years.length} ceremony years, ${state.years[0]}-${state.years.at(-1)}`
    : '';
  return `${name} (${rows} nominations${years}; sha256 ${sha256.slice(0, 12)})`;
}

async function newestMtime(entry: string): Promise<number> {
  const info = await stat(entry).catch(() => null);
  if (!info?.isDirectory()) return info?.mtimeMs ?? 0;
  let newest = info.mtimeMs;
  for (const e of await readdir(entry, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) newest = Math.max(newest, (await stat(path.join(e.parentPath, e.name))).mtimeMs);
  }
  return newest;
}

/** Which build input changed after `since`, or null. */
export async function changedInput(since: number, root = ROOT): Promise<string | null> {
  for (const input of BUILD_INPUTS) {
    if ((await newestMtime(path.join(root, input))) > since) return `${input} changed since the last build`;
  }
  return null;
}

/** Why dist/ must be rebuilt from `source`, or null when it is current. */
export async function staleness(state: DistState | null, source: ResolvedSource): Promise<string | null> {
  if (!state) return 'dist/ is missing';
  if (state.damaged) return "dist/'s manifest is missing or damaged";
  if ((await sha256Hex(await readFile(source.file))) !== state.source.sha256)
    return `the source changed (${source.file})`;
  return changedInput(state.builtMs);
}
