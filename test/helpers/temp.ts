/**
 * Temp folders removed after each test file, a pipe in one, clean copies of
 * the repository, builds into a temp folder, and a digest of a folder tree.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants, existsSync, openSync } from 'node:fs';
import {
  copyFile,
  cp,
  link,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
} from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from '../../build/build.ts';
import { ROOT } from './paths.ts';

const made: string[] = [];

/** A fresh folder in the system temp dir, removed after the test file (see {@link removeTempDirs}). */
export async function tempDir(tag: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `faa-${tag}-`));
  made.push(dir);
  return dir;
}

/** Removes every folder {@link tempDir} made; test/helpers/cleanup.ts runs it after each test file. */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/**
 * A real pipe (a FIFO in a temp folder), as stdout is when a process is piped
 * into another: `fd` its write end, as a process would be given it
 * (blocking, and left to whoever writes it), `reader` its read end, paused
 * until read. Destroying the reader closes the read end, so the next write to
 * `fd` fails with EPIPE.
 */
export async function pipe(tag: string): Promise<{ fd: number; reader: net.Socket }> {
  const fifo = path.join(await tempDir(tag), 'pipe');
  await promisify(execFile)('mkfifo', [fifo]);
  // The read end first, without waiting for a writer; then the write end, which a reader lets open at once.
  const reader = new net.Socket({
    fd: openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK),
    readable: true,
    writable: false,
  });
  reader.pause();
  const fd = openSync(fifo, constants.O_WRONLY);
  return { fd, reader };
}

/** Hard-links (across devices: copies) a folder tree, symlinks kept as symlinks: node_modules in a second or two. */
async function linkTree(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true, recursive: true });
  const dirs = entries
    .filter((e) => e.isDirectory())
    .map((e) => path.join(to, path.relative(from, path.join(e.parentPath, e.name))));
  for (const dir of [to, ...dirs]) await mkdir(dir, { recursive: true });
  for (const entry of entries) {
    const src = path.join(entry.parentPath, entry.name);
    const dest = path.join(to, path.relative(from, src));
    if (entry.isSymbolicLink()) await symlink(await readlink(src), dest);
    else if (entry.isFile()) await link(src, dest).catch(() => copyFile(src, dest));
  }
}

/**
 * The repository as a fresh clone of this working tree would have it (the
 * files git knows, committed or not; nothing git ignores, so no dist/, no
 * data/cache/, no keys) in a temp folder, with the installed node_modules:
 * symlinked, or hard-linked where a tool must see real files (Netlify's
 * function zipper keeps a symlink as a symlink), or none, for a test that
 * installs them as a user would.
 */
export async function cleanCopy(tag: string, modules: 'symlink' | 'hardlink' | 'none' = 'symlink'): Promise<string> {
  const dir = await tempDir(tag);
  const { stdout } = await promisify(execFile)(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: ROOT, maxBuffer: 1 << 24 },
  );
  for (const file of new Set(stdout.split('\0').filter(Boolean))) {
    if (!existsSync(path.join(ROOT, file))) continue; // deleted in the working tree, not yet committed
    // a symlink git does not ignore (node_modules/ matches folders only): linked below
    if (file === 'node_modules') continue;
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await copyFile(path.join(ROOT, file), path.join(dir, file));
  }
  const modulesDir = path.join(ROOT, 'node_modules');
  if (modules === 'none') return dir;
  if (modules === 'symlink') await symlink(modulesDir, path.join(dir, 'node_modules'));
  else await linkTree(modulesDir, path.join(dir, 'node_modules'));
  return dir;
}

/** The source each {@link buildInto} build was made from, by its dist path. */
const builtFrom = new Map<string, string>();

/** Builds `source` into a fresh temp folder with its own summary, making every stage (no build cache); returns the dist path. */
export async function buildInto(source: string, tag = 'dist'): Promise<string> {
  const dir = await tempDir(tag);
  const out = path.join(dir, 'dist');
  await build({ source, out, summary: path.join(dir, 'summary.json'), log: () => {}, stageCache: false });
  builtFrom.set(out, source);
  return out;
}

/**
 * The source a build of {@link buildInto} was made from (undefined for any
 * other folder): what a process started over that build must be told to
 * serve, or it picks the source itself (data/cache/oscars.csv when
 * `npm run data:fetch` left one) and may rebuild the test's dist/ from it.
 */
export const sourceOf = (dist: string): string | undefined => builtFrom.get(path.resolve(dist));

/** Every file under `dir`, relative path to sha256. */
export async function treeDigest(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out.set(
      path.relative(dir, full),
      createHash('sha256')
        .update(await readFile(full))
        .digest('hex'),
    );
  }
  return out;
}

/**
 * One build of `source` for the whole run, shared by every test file that
 * only reads it (the full archive takes 15 s or more to build, 60 s under
 * load, and three files read it). It lives in the run's own
 * temp folder (test/helpers/global-setup.ts), so it goes with the run; the
 * first file to ask builds it, the others wait for it. Never write into it:
 * {@link copyOfSharedBuild} gives a copy to change.
 */
export async function sharedBuild(source: string): Promise<string> {
  const { size, mtimeMs } = await stat(source);
  const id = createHash('sha256')
    .update(`${path.resolve(source)} ${size} ${mtimeMs}`)
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(os.tmpdir(), `faa-shared-build-${id}`);
  const out = path.join(dir, 'dist');
  const claimed = await mkdir(dir).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') return false;
      throw error;
    },
  );
  if (claimed) {
    const building = path.join(dir, 'building');
    try {
      await build({ source, out: building, summary: path.join(dir, 'summary.json'), log: () => {}, stageCache: false });
      await rename(building, out);
    } catch (error) {
      await rm(dir, { recursive: true, force: true }); // the next file to ask builds it again
      throw error;
    }
  } else {
    // Another file is building it: the full archive took up to 60 s under
    // load; wait nearly three times that (within the 180 s a hook may take).
    for (const until = Date.now() + 170_000; !existsSync(out); await new Promise((r) => setTimeout(r, 200))) {
      if (Date.now() > until) throw new Error(`the shared build of ${source} in ${dir} did not appear within 170 s`);
      if (!existsSync(dir))
        throw new Error(`the shared build of ${source} failed in the test file that made it (its error is there)`);
    }
  }
  builtFrom.set(out, source);
  return out;
}

/** A copy of {@link sharedBuild}'s build, in a temp folder of its own, free to change. */
export async function copyOfSharedBuild(source: string, tag = 'dist'): Promise<string> {
  const shared = await sharedBuild(source);
  const out = path.join(await tempDir(tag), 'dist');
  await cp(shared, out, { recursive: true });
  builtFrom.set(out, source);
  return out;
}
