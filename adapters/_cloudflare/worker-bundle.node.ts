/**
 * What the Cloudflare Worker carries of the build in its own code: the
 * manifest and the files a lookup reads whole (the category index, read
 * by every category lookup, every file of the search index, and the
 * rankings' table, read by a ranking made at run time): 2.3 MB of text for
 * the full archive; the records' shards (1 MB, ranges of packs, each
 * carried by the path a file of its own id would have), read by every
 * record and stored ranking; and, last, where there is room, the file every
 * join is cut from (1.5 MB). 4.9 MB in all, 1.8 MB compressed.
 * Each is a fetch from the static assets a fresh isolate no longer makes,
 * 1.5 to 3 ms of CPU each in workerd (docs/development.md), and for a shard
 * the pack's hash and inflating too; reading the joins' file took a cold
 * join about 9 ms more. A cold search or join (at a year too: its elements
 * are cut from the same file) fetches nothing, a record only its answer. A
 * Worker's code and its assets deploy as one version, so the two never
 * disagree. The name and id shards (11 MB, one small file a lookup) stay in
 * the assets.
 *
 * Written for one build, as an entry module wrangler bundles
 * (`workerEntry`, which cli/lib/wrangler.ts names the config's `main`). A
 * stored file that does not hash to its name, or is not UTF-8 text, is left out:
 * the Worker reads it from the assets and answers as it did without a
 * bundle (500 for a damaged file). A manifest that is missing, too long,
 * unreadable or of another layout leaves every file out.
 *
 * Node-only: a deploy and `npm run dev:cloudflare` run it before wrangler
 * bundles; the Worker loads only the module it writes.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseManifest } from '../../src/store/archive.ts';
import { contentId, dataPath, MANIFEST_PATH, type ParsedRef, parseRef } from '../../src/store/refs.ts';
import type { Manifest } from '../../src/shared/types.ts';

/**
 * At most this much text is carried (the full archive's is 4.9 MB;
 * a Worker's code may be 10 MB, 3 MB compressed on the free plan).
 */
export const MAX_BUNDLED_BYTES = 6 * 1024 * 1024;

/** The id of stored bytes: their content hash, as the build names files (src/store/refs.ts). */
const idOfBytes = (bytes: Uint8Array) => contentId(createHash('sha256').update(bytes).digest('hex'));

/** `bytes` as text, if they are UTF-8: read back, the text is the same bytes. */
function utf8(bytes: Buffer): string | null {
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : null;
}

/** A file of dist/ as text, if it is at most `room` bytes of UTF-8 (and, given an id, hashes to it). */
function textOf(dist: string, file: string, room: number, id?: string): string | null {
  try {
    const full = path.join(dist, file);
    if (statSync(full).size > room) return null;
    const bytes = readFileSync(full);
    const text = utf8(bytes);
    return text !== null && (id === undefined || idOfBytes(bytes) === id) ? text : null;
  } catch {
    return null;
  }
}

/**
 * The text of the range `parsed` names of a pack, if the pack hashes to its
 * name, the range to the ref's id, and it is at most `room` bytes of UTF-8.
 */
function rangeText(dist: string, parsed: ParsedRef, room: number, packs: Map<string, Buffer | null>): string | null {
  const range = parsed.at.range;
  if (!range || range[1] - range[0] > room) return null;
  const pack = parsed.at.file;
  if (!packs.has(pack)) {
    try {
      const gzipped = readFileSync(path.join(dist, dataPath(pack)!));
      packs.set(pack, idOfBytes(gzipped) === pack ? gunzipSync(gzipped, { maxOutputLength: MAX_BUNDLED_BYTES }) : null);
    } catch {
      packs.set(pack, null);
    }
  }
  const bytes = packs.get(pack)?.subarray(range[0], range[1]);
  if (!bytes || bytes.length !== range[1] - range[0] || idOfBytes(bytes) !== parsed.id) return null;
  return utf8(bytes);
}

/** The texts of the build files a Worker carries, by their paths under dist/. */
export function bundledFiles(dist: string): Record<string, string> {
  const manifestText = textOf(dist, MANIFEST_PATH, MAX_BUNDLED_BYTES);
  if (manifestText === null) return {};
  let manifest: Manifest;
  try {
    manifest = parseManifest(manifestText);
  } catch {
    return {}; // one the Worker refuses: it reads it and answers 503, as without a bundle
  }
  const files: Record<string, string> = { [MANIFEST_PATH]: manifestText };
  let room = MAX_BUNDLED_BYTES - Buffer.byteLength(manifestText);
  const packs = new Map<string, Buffer | null>();
  const carry = (ref: unknown): string | null => {
    const parsed = typeof ref === 'string' ? parseRef(ref) : null;
    if (!parsed) return null;
    // A file of its own by its path; a range of a pack (a record shard) by the path a file of its own id would have.
    const file = dataPath(parsed.at.range ? parsed.id : parsed.at.file)!;
    const text = parsed.at.range ? rangeText(dist, parsed, room, packs) : textOf(dist, file, room, parsed.at.file);
    if (text === null) return null;
    files[file] = text;
    room -= Buffer.byteLength(text);
    return text;
  };
  const categories = carry(manifest.categories);
  for (const ref of [
    ...manifest.search,
    ...(manifest.rankings ? [manifest.rankings] : []),
    ...(manifest.records?.shards ?? []),
  ])
    carry(ref);
  // Last, where there is room: the file every join is cut from, which the category index names.
  if (categories !== null) carry(joinedRef(categories));
  return files;
}

/** The ref of the file joins are cut from, which the category index's first line names (undefined if it does not). */
function joinedRef(categoryIndex: string): string | undefined {
  const end = categoryIndex.indexOf('\n');
  try {
    const { joined } = JSON.parse(categoryIndex.slice(0, end === -1 ? undefined : end)) as { joined?: unknown };
    return typeof joined === 'string' ? joined : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes into `folder` the Worker's entry module for the build in
 * `dist`: `adapter`'s `worker` carrying `bundledFiles(dist)`. Its path.
 */
export function workerEntry(dist: string, folder: string, adapter: string): string {
  const file = path.join(folder, 'cloudflare.js');
  const files = JSON.stringify(bundledFiles(dist));
  writeFileSync(
    file,
    `// Written by adapters/_cloudflare/worker-bundle.node.ts for ${JSON.stringify(dist)}: the Worker with the build files it reads whole in its code.\nimport { worker } from ${JSON.stringify(adapter)};\n\nexport default worker(${files});\n`,
  );
  return file;
}
