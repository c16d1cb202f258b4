/**
 * What the build's worker threads made (the dataset with the search index,
 * and the records: about 5 s of CPU, more than half a rebuild's), remembered
 * between builds. Each is kept as one file under a key naming all it was made
 * from: the source's SHA-256, what the thread is told (the source's revision),
 * and the build's code, every file under build/, src/ and lib/ with the files
 * a build reads (`codeFingerprint`), the installed packages and Node's
 * version. A rebuild of the same source by the same code takes them from
 * there, whole, rather than run the threads; any change to the
 * source or the code makes them again, and a build writes what it made for
 * the next. An entry is used only when its SHA-256 matches its bytes; a
 * cache that cannot be read or written costs only the time it would save.
 */
import { hash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { writeWhole } from '../../lib/write-whole.ts';
import { BUILD_INPUTS } from '../archive/source.ts';
import { readHeld } from './gzip-cache.ts';
import type { Apart } from './apart.ts';

/** Entries kept per stage, the most recently used (a sample build and a full one, each before and after a change). */
export const STAGE_CACHE_KEEP = 4;

/** What the build runs with besides its inputs: the packages installed. */
const PACKAGES = ['package.json', 'package-lock.json', 'node_modules/.package-lock.json'];

/** The files of `input` (a folder, every file under it; or a file), relative to `root`. */
function filesOf(root: string, input: string): string[] {
  try {
    const entries = readdirSync(path.join(root, input), { withFileTypes: true, recursive: true });
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
  } catch {
    return [input]; // a file, or missing
  }
}

/**
 * The SHA-256 of the build's code under `root`: every file's path and bytes
 * of BUILD_INPUTS (build/archive/source.ts: its code, the data files it
 * reads) and PACKAGES, one missing counting as such, and Node's versions
 * (its V8, zlib and SQLite make the files too).
 */
export function codeFingerprint(root: string): string {
  const files = [...BUILD_INPUTS, ...PACKAGES].flatMap((input) => filesOf(root, input)).sort();
  const digest = files.map((file) => {
    try {
      return `${file}\0${hash('sha256', readFileSync(path.join(root, file)))}`;
    } catch {
      return `${file}\0missing`; // never a digest, so never a file's bytes
    }
  });
  return hash('sha256', [process.version, JSON.stringify(process.versions), ...digest].join('\n'));
}

/** A stage's key: its name, the code's fingerprint, and everything it is made from, in order. */
export function stageKey(stage: string, fingerprint: string, inputs: readonly unknown[]): string {
  return hash('sha256', JSON.stringify([stage, fingerprint, ...inputs]));
}

const entryFile = (folder: string, stage: string, key: string) => path.join(folder, `${stage}-${key}.bin`);

/** A kept entry's results, marked as used now (`readHeld`); null when there is none or its bytes are not what was written. */
function readEntry(file: string): unknown[] | null {
  const held = readHeld(file);
  if (!held || held.length < 32) return null;
  const payload = held.subarray(32);
  if (!held.subarray(0, 32).equals(hash('sha256', payload, 'buffer'))) return null;
  try {
    const results = deserialize(payload) as unknown;
    return Array.isArray(results) ? results : null;
  } catch {
    return null;
  }
}

/** Writes an entry whole or not at all, then removes the stage's entries used least lately, beyond STAGE_CACHE_KEEP. */
async function keepEntry(folder: string, stage: string, key: string, results: unknown[]): Promise<void> {
  const payload = serialize(results);
  await writeWhole(entryFile(folder, stage, key), Buffer.concat([hash('sha256', payload, 'buffer'), payload]));
  const held = (await readdir(folder)).filter((name) => name.startsWith(`${stage}-`));
  const used = await Promise.all(
    held.map(async (name) => ({ name, at: (await stat(path.join(folder, name)).catch(() => null))?.mtimeMs ?? 0 })),
  );
  used.sort((a, b) => b.at - a.at);
  // Leftovers of writes cut short are removed with the oldest entries (a write under way is younger than the entry it makes).
  for (const { name } of used.slice(STAGE_CACHE_KEEP)) await rm(path.join(folder, name), { force: true });
}

/** Where a stage is remembered and its key there (stageKey); without a folder, not remembered. */
export interface StageMemo {
  folder?: string;
  key: string;
}

/** A stage as remembered: its answers, whether they were taken from the cache, and the writing of them (never rejects). */
export interface Remembered<T> {
  apart: Apart<T>;
  hit: boolean;
  kept: Promise<void>;
}

/**
 * The stage `stage` under `key`: its `count` answers from `folder` when a
 * build kept them there, without starting it (what is posted to it is then
 * dropped: the key names it); else started, and its answers kept once all
 * have come. Without a folder, started.
 */
export function remembered<T>(
  folder: string | undefined,
  stage: string,
  key: string,
  count: number,
  start: () => Apart<T>,
): Remembered<T> {
  const held = folder ? readEntry(entryFile(folder, stage, key)) : null;
  if (held && held.length === count) {
    const results = held.map((result) => Promise.resolve(result));
    return {
      apart: { result: results[0] as Promise<T>, results, post: () => {}, stop: async () => 0 },
      hit: true,
      kept: Promise.resolve(),
    };
  }
  const apart = start();
  const kept = folder
    ? Promise.all(apart.results).then(
        (results) => keepEntry(folder, stage, key, results).catch(() => {}),
        () => {}, // the build failed and says why where it awaits them
      )
    : Promise.resolve();
  return { apart, hit: false, kept };
}
