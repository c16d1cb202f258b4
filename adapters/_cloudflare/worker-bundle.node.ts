/**
 * What the Cloudflare Worker carries of the build in its own code: the
 * manifest and the files a lookup reads whole (the category index, read
 * by every category lookup, every file of the search index, and the
 * rankings' table, read by a ranking made at run time): 2.3 MB of text for
 * the full archive (1.75 MB, 0.75 MB compressed, before the table). Each is a fetch from the
 * static assets a fresh isolate no longer makes, 1.5 to 3 ms of CPU each in
 * workerd (docs/development.md): a cold search fetches nothing, a join only
 * the answer it joins from. A Worker's code and its assets deploy as one
 * version, so the two never disagree. The name and id shards (11 MB, one
 * small file a lookup) stay in the assets.
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
import { parseManifest } from '../../src/store/archive.ts';
import { contentId, dataPath, MANIFEST_PATH, parseRef } from '../../src/store/refs.ts';
import type { Manifest } from '../../src/shared/types.ts';

/**
 * At most this much text is carried (the full archive's is 1.75 MB;
 * a Worker's code may be 10 MB, 3 MB compressed on the free plan).
 */
export const MAX_BUNDLED_BYTES = 4 * 1024 * 1024;

/** A file of dist/ as text, if it is at most `room` bytes of UTF-8 (and, given an id, hashes to it). */
function textOf(dist: string, file: string, room: number, id?: string): string | null {
  try {
    const full = path.join(dist, file);
    if (statSync(full).size > room) return null;
    const bytes = readFileSync(full);
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes)) return null;
    if (id !== undefined && contentId(createHash('sha256').update(bytes).digest('hex')) !== id) return null;
    return text;
  } catch {
    return null;
  }
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
  for (const ref of [manifest.categories, ...manifest.search, ...(manifest.rankings ? [manifest.rankings] : [])]) {
    const at = typeof ref === 'string' ? parseRef(ref)?.at : undefined;
    const file = at && !at.range ? dataPath(at.file) : null;
    const text = file ? textOf(dist, file, room, at!.file) : null;
    if (text === null) continue;
    files[file!] = text;
    room -= Buffer.byteLength(text);
  }
  return files;
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
