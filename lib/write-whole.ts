/**
 * Writing a file whole or not at all: into a temporary file beside it, then
 * renamed over it, so a reader (another build, a server, a test) sees the old
 * bytes or the new, never half. Used by the build's caches and the yearly
 * update's files.
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes `data` to `file` through a temporary file of a name no other
 * process or call uses, removed when the write fails. The folder is made
 * unless the caller says it already has it (`folder: 'made'`).
 */
export async function writeWhole(
  file: string,
  data: string | Uint8Array,
  options: { folder?: 'made' } = {},
): Promise<void> {
  if (options.folder !== 'made') await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    await writeFile(tmp, data);
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => {}); // the write's error is the one to hear
    throw error;
  }
}
