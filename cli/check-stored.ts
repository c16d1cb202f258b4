/**
 * Before dist/ goes where answers are streamed unchecked (Cloudflare's static
 * assets: the Worker passes an answer's own file on without hashing it), each
 * stored file is checked here against its name, the first 20 hex digits of
 * the sha256 of its bytes. The files that do not match, by path.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { sha256 } from '../build/source.ts';
import { DATA_PREFIX, ID_LENGTH } from '../src/refs.ts';

export async function storedFilesNotMatchingTheirNames(dist: string): Promise<string[]> {
  const stored = path.join(dist, DATA_PREFIX, 'r');
  const wrong: string[] = [];
  for (const entry of await readdir(stored, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (sha256(await readFile(file)).slice(0, ID_LENGTH) !== entry.name) wrong.push(path.relative(dist, file));
  }
  return wrong.sort();
}
