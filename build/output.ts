/**
 * Writing dist/ atomically: everything goes into a fresh sibling folder which
 * is swapped in only when complete, so a failed or killed build leaves the
 * previous dist/ whole. File writes go through a small file-system object so
 * tests can inject failures.
 */
import path from 'node:path';
import fs from 'fs-extra';
import pLimit from 'p-limit';

/** Parallel file writes. */
export const WRITE_CONCURRENCY = 32;

/** What the build needs from a file system. */
export interface BuildFs {
  mkdir(dir: string): Promise<unknown>;
  writeFile(file: string, bytes: Uint8Array): Promise<void>;
}

export const nodeFs: BuildFs = {
  mkdir: (dir) => fs.mkdirp(dir),
  writeFile: (file, bytes) => fs.writeFile(file, bytes),
};

const siblings = async (target: string, tag: string) => {
  const dir = path.dirname(target);
  const base = path.basename(target);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => n.startsWith(`${base}.${tag}-`)).map((n) => path.join(dir, n));
};

/**
 * Puts back a dist/ that a build killed between its two renames left aside,
 * and clears leftovers of killed builds. Safe to call at any start.
 */
export async function recoverOutput(target: string): Promise<void> {
  const old = await siblings(target, 'old');
  if (!(await fs.pathExists(target)) && old.length > 0) await fs.rename(old[0], target);
  for (const leftover of [...(await siblings(target, 'old')), ...(await siblings(target, 'tmp'))]) {
    if (leftover !== target) await fs.remove(leftover);
  }
}

/** Writes files into a temporary sibling of `target`, then swaps it in. */
export async function writeOutput(
  target: string,
  files: Map<string, Uint8Array>,
  io: BuildFs = nodeFs,
): Promise<void> {
  await recoverOutput(target);
  const tmp = `${target}.tmp-${process.pid}-${Date.now().toString(36)}`;
  try {
    const dirs = new Set([...files.keys()].map((f) => path.dirname(path.join(tmp, f))));
    await io.mkdir(tmp);
    for (const dir of [...dirs].sort()) await io.mkdir(dir);
    const limit = pLimit(WRITE_CONCURRENCY);
    await Promise.all([...files].map(([file, bytes]) => limit(() => io.writeFile(path.join(tmp, file), bytes))));
  } catch (error) {
    await fs.remove(tmp);
    throw error;
  }
  const old = `${target}.old-${process.pid}`;
  const hadTarget = await fs.pathExists(target);
  if (hadTarget) await fs.rename(target, old);
  await fs.rename(tmp, target);
  if (hadTarget) await fs.remove(old);
}
